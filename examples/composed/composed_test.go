package composed

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/ownership-book/ownership/examples/raymond"
)

// DefaultBounds are the bounds the default tests and the check program use:
// three nodes, one request per node, at most one duplicated message, one
// lost message and one revoke.
var DefaultBounds = Bounds{Requests: 1, Dups: 1, Losses: 1, Revokes: 1}

// FullBounds are the stated bounds: two requests per node. The check
// at these bounds runs with COMPOSED_FULL=1 (minutes, not seconds).
var FullBounds = Bounds{Requests: 2, Dups: 1, Losses: 1, Revokes: 1}

var smallTrees = []raymond.Tree{raymond.Line(3), raymond.Star(3)}

// In every reachable state of Composed at the default bounds, on a line and
// a star, the resource never accepts a write from an older holding after a
// newer one's, and no two nodes are in the critical section with authority,
// whatever the network duplicates, reorders, delays or loses and whenever
// the coordinator revokes.
// Reference: chapter "Ownership: epochs and fencing", section "What the
// model assumes" (the network row: no later layer adds anything).
func TestComposedSafeExhaustively(t *testing.T) {
	for _, tr := range smallTrees {
		r := Explore(tr, 0, DefaultBounds, Correct, 0)
		if r.Violation != nil || r.Truncated {
			t.Fatalf("%s: %v\n%s", tr.Name, r, strings.Join(r.Trace, "\n"))
		}
		if r.States < 100000 || r.Depth < 20 {
			t.Fatalf("%s: only %d states, depth %d: the check explored too little", tr.Name, r.States, r.Depth)
		}
	}
}

// The same check at the stated bounds (two requests per node), with hash
// compaction. Opt in with COMPOSED_FULL=1; it takes minutes.
func TestComposedSafeExhaustivelyFullBounds(t *testing.T) {
	if os.Getenv("COMPOSED_FULL") == "" {
		t.Skip("set COMPOSED_FULL=1 to run the check at 2 requests per node (minutes)")
	}
	for _, tr := range smallTrees {
		r := ExploreHashed(tr, 0, FullBounds, Correct, func(n, tr, d, w int) { t.Logf("%d states, %d transitions, depth %d, %d waiting", n, tr, d, w) })
		t.Logf("%s: %v", tr.Name, r)
		if r.Violation != nil {
			t.Fatalf("%s: %v\n%s", tr.Name, r, strings.Join(r.Trace, "\n"))
		}
	}
}

// Mutant: without an epoch on the writes, the resource cannot fence, and
// the old holder's late write lands after its successor's. The check must
// find it.
// Reference: chapter "Ownership: epochs and fencing", section "One predicate
// for authority, one check for servers".
func TestMutantWithoutWriteEpochIsCaught(t *testing.T) {
	for _, tr := range smallTrees {
		r := Explore(tr, 0, DefaultBounds, NoWriteEpoch, 0)
		if !errors.Is(r.Violation, ErrOutOfOrder) {
			t.Fatalf("%s: %v", tr.Name, r)
		}
		if last := r.Trace[len(r.Trace)-1]; last != "deliver WRITE(A): accepted" {
			t.Fatalf("%s: trace ends with %q", tr.Name, last)
		}
	}
}

// Two mutants survive the exhaustive check, and are equivalent for the
// properties it checks: a receiver that ignores the PRIVILEGE's epoch
// (Acquire still requires the record Unowned naming it, and its token takes
// the record's epoch), and a holder that writes without asking MayMutate
// (its stale writes carry its old epoch, and the resource's fence alone keeps
// the order). Each changes one rule; the check explores more states for the
// first (no PRIVILEGE is dead) and must still find nothing.
// Reference: chapter "Composed", section "The exhaustive check".
func TestEquivalentMutantsSurvive(t *testing.T) {
	for _, mut := range []Mutant{NoPrivilegeEpoch, NoMayMutate} {
		if mut.Caught() {
			t.Fatalf("%v: Caught says the check finds it", mut)
		}
		for _, tr := range smallTrees {
			r := Explore(tr, 0, DefaultBounds, mut, 0)
			if r.Violation != nil || r.Truncated || r.States < 100000 {
				t.Fatalf("%v on %s: %v\n%s", mut, tr.Name, r, strings.Join(r.Trace, "\n"))
			}
		}
	}
}

// The mutant without the PRIVILEGE's epoch acts on a late offer: after a
// revoke, the first PRIVILEGE (epoch 2) arrives before the resent one and is
// accepted, at the record's epoch 3, not the message's; the resent one then
// finds the record Owned. The outcome is the one the correct system reaches
// with the resent message, which is why the mutant is equivalent.
func TestLatePrivilegeWithoutEpochAcquiresAtTheRecordsEpoch(t *testing.T) {
	s := New(raymond.Line(2), 0, Bounds{Requests: 1, Revokes: 1}, NoPrivilegeEpoch)
	l := run(t, s, "B wants", "deliver REQUEST(B->A)", "coordinator revokes",
		"deliver PRIVILEGE(A->B, epoch 2)", "deliver PRIVILEGE(coordinator->B, epoch 3)")
	want := []string{
		"deliver PRIVILEGE(A->B, epoch 2): acquired: Owned(B, 3)",
		"deliver PRIVILEGE(coordinator->B, epoch 3): refused: record is Owned(B, 3)",
	}
	if strings.Join(l[3:], "\n") != strings.Join(want, "\n") || s.Tokens[1] != 3 || !s.authorized(1) {
		t.Fatalf("labels:\n%s", strings.Join(l, "\n"))
	}
}

// The property checked is the order of accepted writes, not "no stale
// holder's write is ever accepted": a write A sent while it held the
// privilege at epoch 1, delayed until B owns the record at epoch 2, is
// accepted, because B has not written yet and the resource has seen nothing
// newer. A fence that learns epochs only from writes cannot refuse it; only
// a resource that asks the record could.
// Reference: chapter "Ownership: epochs and fencing", section "One predicate
// for authority, one check for servers".
func TestStaleHoldersWriteBeforeSuccessorsIsAccepted(t *testing.T) {
	s := New(raymond.Line(2), 0, Bounds{Requests: 1}, Correct)
	l := run(t, s, "A wants", "A writes", "B wants", "deliver REQUEST(B->A)", "A exits",
		"deliver PRIVILEGE(A->B, epoch 2)", "deliver WRITE(A, epoch 1)")
	if l[5] != "deliver PRIVILEGE(A->B, epoch 2): acquired: Owned(B, 2)" || l[6] != "deliver WRITE(A, epoch 1): accepted" {
		t.Fatalf("labels:\n%s", strings.Join(l, "\n"))
	}
	if err := Check(s); err != nil {
		t.Fatalf("Check: %v", err)
	}
	// B's write then lands after A's, in ownership order.
	l = run(t, s, "B writes", "deliver WRITE(B, epoch 2)")
	if l[1] != "deliver WRITE(B, epoch 2): accepted" || Check(s) != nil {
		t.Fatalf("labels:\n%s", strings.Join(l, "\n"))
	}
}

// Mutant: a recovery that re-grants at the current epoch instead of burning
// one leaves the revoked holder's write indistinguishable from its
// successor's. The check must find it, and the run must use the revoke.
// Reference: chapter "Ownership: epochs and fencing", section "Abort and
// revoke".
func TestMutantWithoutBurnIsCaught(t *testing.T) {
	for _, tr := range smallTrees {
		r := Explore(tr, 0, DefaultBounds, NoBurn, 0)
		if !errors.Is(r.Violation, ErrOutOfOrder) {
			t.Fatalf("%s: %v", tr.Name, r)
		}
		if !strings.Contains(strings.Join(r.Trace, "\n"), "coordinator revokes: Owned(A, 1) -> Unowned(1, ") {
			t.Fatalf("%s: counterexample without the revoke:\n%s", tr.Name, strings.Join(r.Trace, "\n"))
		}
	}
}

// run performs moves picked by label prefix, failing if none matches.
func run(t *testing.T, s *System, steps ...string) []string {
	t.Helper()
	var labels []string
	for _, want := range steps {
		found := false
		for _, mv := range s.Moves() {
			c := s.Clone()
			l, err := c.Do(mv)
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(l, want) {
				*s = *c
				labels = append(labels, l)
				found = true
				break
			}
		}
		if !found {
			t.Fatalf("no move %q; labels so far:\n%s", want, strings.Join(labels, "\n"))
		}
	}
	return labels
}

// A duplicated PRIVILEGE is refused: the record is already Owned by its
// receiver.
// Reference: chapter "Ownership: epochs and fencing", section "A handover,
// step by step" (Acquire is defined only on Unowned).
func TestDuplicatePrivilegeRefused(t *testing.T) {
	s := New(raymond.Line(2), 0, Bounds{Requests: 1, Dups: 1}, Correct)
	l := run(t, s, "B wants", "deliver REQUEST(B->A)", "duplicate PRIVILEGE(A->B, epoch 2)",
		"deliver PRIVILEGE(A->B, epoch 2)", "deliver PRIVILEGE(A->B, epoch 2)")
	if l[3] != "deliver PRIVILEGE(A->B, epoch 2): acquired: Owned(B, 2)" || l[4] != "deliver PRIVILEGE(A->B, epoch 2): refused: record is Owned(B, 2)" {
		t.Fatalf("labels:\n%s", strings.Join(l, "\n"))
	}
}

// A lost PRIVILEGE is recovered by a revoke that burns an epoch and resends;
// if the first PRIVILEGE was only late, it is stale on arrival.
// Reference: chapter "Ownership: epochs and fencing", section "Abort and
// revoke".
func TestLatePrivilegeAfterRevokeIsStale(t *testing.T) {
	s := New(raymond.Line(2), 0, Bounds{Requests: 1, Revokes: 1}, Correct)
	l := run(t, s, "B wants", "deliver REQUEST(B->A)", "coordinator revokes",
		"deliver PRIVILEGE(A->B, epoch 2)", "deliver PRIVILEGE(coordinator->B, epoch 3)")
	want := []string{
		"coordinator revokes: Unowned(2, B) -> Unowned(3, B), PRIVILEGE(epoch 3) sent to B",
		"deliver PRIVILEGE(A->B, epoch 2): refused: epoch 2 is stale, record is Unowned(3, B)",
		"deliver PRIVILEGE(coordinator->B, epoch 3): acquired: Owned(B, 3)",
	}
	if strings.Join(l[2:], "\n") != strings.Join(want, "\n") || !s.Nodes[1].Using || !s.authorized(1) {
		t.Fatalf("labels:\n%s", strings.Join(l, "\n"))
	}
}

// A healthy holder wrongly suspected keeps running, but its write in flight
// is fenced once its successor's has landed, and its next handover is
// refused by the record.
// Reference: chapter "Ownership: epochs and fencing", section "What the
// model assumes" (failure detectors can be wrong).
func TestRevokedHolderIsFenced(t *testing.T) {
	s := New(raymond.Line(2), 0, Bounds{Requests: 1, Revokes: 1}, Correct)
	l := run(t, s, "A wants", "A writes", "B wants", "deliver REQUEST(B->A)", "coordinator revokes",
		"deliver PRIVILEGE(coordinator->B", "B writes", "deliver WRITE(B", "deliver WRITE(A", "A exits")
	want := []string{
		"coordinator revokes: Owned(A, 1) -> Unowned(2, B), PRIVILEGE(epoch 2) sent to B",
		"deliver PRIVILEGE(coordinator->B, epoch 2): acquired: Owned(B, 2)",
		"B writes: WRITE(B, epoch 2)",
		"deliver WRITE(B, epoch 2): accepted",
		"deliver WRITE(A, epoch 1): refused: epoch 1 < fence 2",
		"A exits: A cannot hand over: BeginTransfer: caller A is not the owner B",
	}
	if strings.Join(l[4:], "\n") != strings.Join(want, "\n") {
		t.Fatalf("labels:\n%s", strings.Join(l, "\n"))
	}
}

// Random runs on larger trees, with a network that duplicates, reorders,
// delays and loses and a coordinator that revokes, never break safety.
// Reference: chapter "Ownership: epochs and fencing", section "What the
// model assumes".
func TestSimulatedNemesisKeepsExclusivity(t *testing.T) {
	b := Bounds{Requests: 3, Dups: 6, Losses: 3, Revokes: 3}
	var dups, losses, revokes, refused, entries int
	for _, tr := range []raymond.Tree{raymond.Binary(7), raymond.Random(9, 3), raymond.Star(6)} {
		for seed := range uint64(40) {
			s := NewSim(New(tr, 0, b, Correct), seed)
			for s.Steps < 3000 {
				if err := Check(s.System); err != nil {
					t.Fatalf("%s seed %d step %d: %v", tr.Name, seed, s.Steps, err)
				}
				l, ok, err := s.Next()
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
				if strings.Contains(l, "refused") {
					refused++
				}
			}
			dups, losses, revokes = dups+b.Dups-s.Dups, losses+b.Losses-s.Losses, revokes+b.Revokes-s.Revokes
			entries += s.Entries
		}
	}
	// The runs must have exercised what they claim to.
	if dups == 0 || losses == 0 || revokes == 0 || refused == 0 || entries < 100 {
		t.Errorf("runs used %d duplications, %d losses, %d revokes, %d refusals, %d entries: too little", dups, losses, revokes, refused, entries)
	}
	t.Logf("%d duplications, %d losses, %d revokes, %d refusals, %d authorized entries", dups, losses, revokes, refused, entries)
	// The same runs without epochs on writes do break it, so the runs can
	// see a violation.
	broken := 0
	for seed := range uint64(40) {
		s := NewSim(New(raymond.Binary(7), 0, Bounds{Requests: 3, Dups: 6, Losses: 3, Revokes: 3}, NoWriteEpoch), seed)
		for s.Steps < 3000 && Check(s.System) == nil {
			if _, ok, _ := s.Next(); !ok {
				break
			}
		}
		if Check(s.System) != nil {
			broken++
		}
	}
	if broken == 0 {
		t.Fatal("no random run of the mutant without write epochs was caught")
	}
}

// Every PRIVILEGE hop costs three record writes (BeginTransfer,
// CompleteRelease, Acquire) next to Raymond's two messages, so an isolated
// request costs 3·dist(u, t) record writes.
func TestRecordWritesPerHop(t *testing.T) {
	tr := raymond.Binary(15)
	for u := range tr.N() {
		for h := range tr.N() {
			m, w, err := Isolated(tr, raymond.NodeID(u), raymond.NodeID(h))
			if err != nil {
				t.Fatal(err)
			}
			d := tr.Dist(raymond.NodeID(u), raymond.NodeID(h))
			if m != 2*d || w != 3*d {
				t.Fatalf("%s <- %s: %d messages, %d record writes; want %d and %d", raymond.NodeID(u), raymond.NodeID(h), m, w, 2*d, 3*d)
			}
		}
	}
}

// Key and decode are inverse on the states a run reaches.
func TestKeyRoundTrip(t *testing.T) {
	for _, mut := range append([]Mutant{Correct}, Mutants...) {
		s := NewSim(New(raymond.Star(4), 1, FullBounds, mut), 5)
		for s.Steps < 300 {
			if d := decode(s.Tree, s.Mutant, s.Key()); d.Key() != s.Key() {
				t.Fatalf("%v step %d: decode(key) differs", mut, s.Steps)
			}
			if _, ok, err := s.Next(); err != nil || !ok {
				break
			}
		}
	}
}

// The eight-move run that put B and C in the critical section together under
// plain Raymond (examples/raymond/nemesis) is harmless here: the copy of the
// PRIVILEGE arrives after B has handed the privilege on, carrying an epoch
// that B's handover has already burnt, and only C enters.
// Reference: chapter "Raymond's tree algorithm", section "When the network
// misbehaves".
func TestRaymondsDuplicateRunIsRefused(t *testing.T) {
	s := New(raymond.Line(3), 0, Bounds{Requests: 2, Dups: 1}, Correct)
	l := run(t, s, "C wants", "deliver REQUEST(C->B)", "B wants", "deliver REQUEST(B->A)",
		"duplicate PRIVILEGE(A->B, epoch 2)", "deliver PRIVILEGE(A->B, epoch 2)",
		"deliver PRIVILEGE(A->B, epoch 2)", "deliver PRIVILEGE(B->C, epoch 3)")
	want := []string{
		"deliver PRIVILEGE(A->B, epoch 2): acquired: Owned(B, 2)",
		"deliver PRIVILEGE(A->B, epoch 2): refused: epoch 2 is stale, record is Unowned(3, C)",
		"deliver PRIVILEGE(B->C, epoch 3): acquired: Owned(C, 3)",
	}
	if strings.Join(l[5:], "\n") != strings.Join(want, "\n") {
		t.Fatalf("labels:\n%s", strings.Join(l, "\n"))
	}
	if s.Nodes[1].Using || !s.Nodes[2].Using || !s.authorized(2) {
		t.Fatalf("want only C in the critical section: %v", s.Nodes)
	}
}
