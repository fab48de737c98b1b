package check

import (
	"strings"
	"testing"

	"github.com/ownership-book/ownership/examples/ownership"
)

// Rows of the chapter's table that run in a few seconds or less.
var (
	crash = Bounds{Nodes: 2, Epochs: 2, Interrupts: 1, Crashes: 1, InFlight: 2, Symmetry: true}
	rogue = Bounds{Nodes: 2, Epochs: 2, Interrupts: 1, Rogue: 1, InFlight: 2, Symmetry: true}
	tiny3 = Bounds{Nodes: 3, Epochs: 2, Interrupts: 1, InFlight: 2, Symmetry: true}
	lossy = Bounds{Nodes: 2, Epochs: 2, Dup: 1, Loss: 1, Interrupts: 1, InFlight: 2, Symmetry: true}
)

// Every reachable state of the real model, within bounds that include
// duplication, loss, crashes, aborts and revokes (at healthy owners too)
// sent through the network, record restarts, grants and writes in flight
// and requests from nodes outside their role, satisfies every property: at
// most one node may mutate, epochs never fall, one owner per epoch, stale
// tokens inert, refusals change nothing, a request has no effect once the
// epoch is past it, only what was asked happens at its epoch, each server
// applies writes in epoch order, the record-checking server applies none
// below the record's epoch, both apply the owner's writes, and a grant
// passes the fence only for the node the record names.
// Reference: chapter "One owner at a time", section "Checked
// exhaustively".
func TestRealModelHoldsEveryProperty(t *testing.T) {
	for _, b := range []Bounds{crash, rogue, tiny3, lossy} {
		r := Run(b, Real)
		if !r.OK() {
			t.Fatalf("%+v: %v: %s\n%s", b, r.Violation.Property, r.Violation.Detail, strings.Join(r.Trace, "\n"))
		}
		if r.States < 1000 || r.Depth < 10 {
			t.Fatalf("%+v: only %d states, depth %d: the model explores almost nothing", b, r.States, r.Depth)
		}
		t.Logf("%+v: %d states, %d transitions, depth %d", b, r.States, r.Transitions, r.Depth)
	}
}

// The highest-epoch server is fenced only once it has seen the new epoch:
// the checker reaches a state where it applies a write below the record's
// current epoch, the very write the record-checking server must refuse.
// This is what separates the two servers.
// Reference: chapter "One owner at a time", section "Two meanings
// of fenced".
func TestHighestEpochServerAcceptsAFencedWrite(t *testing.T) {
	r := Run(DefaultBounds[0], Real)
	if !r.OK() || r.Contrast == nil {
		t.Fatalf("no run in which the highest-epoch server applies a fenced write (ok=%v)", r.OK())
	}
	last := r.Contrast[len(r.Contrast)-1]
	if !strings.Contains(last, "highest-epoch server") || !strings.Contains(last, ": applied") {
		t.Fatalf("the contrast run does not end with the highest-epoch server applying the write:\n%s", strings.Join(r.Contrast, "\n"))
	}
}

// Each mutation changes one rule. Every one but the equivalent ones breaks
// the property it should, and the checker prints a counterexample that
// replays step by step from the initial state; an equivalent one survives.
// Reference: chapter "One owner at a time", section "Checked
// exhaustively".
func TestEachMutationIsCaught(t *testing.T) {
	want := map[Mutation]Property{
		EpochAtAcquire:     CheckingCurrent,
		AbortToOldOwner:    EpochsNeverFall,
		AbortOwnedNewEpoch: Intent,
		AbortReusesEpoch:   GrantFenced,
		AbortWithoutFloor:  Intent,
		HighestEquals:      OwnerAccepted,
		HighestForgets:     ServerOrder,
		VolatileFloor:      EpochsNeverFall,
		NoRequestEpochs:    Intent,
		AcquireAnyCaller:   Intent,
	}
	if len(want)+len(Equivalent) != len(Mutations) {
		t.Fatalf("%d mutations, %d expectations, %d equivalent", len(Mutations), len(want), len(Equivalent))
	}
	for _, mut := range Mutations {
		r := Run(MutationBounds, mut)
		if _, ok := Equivalent[mut]; ok {
			if !r.OK() {
				t.Errorf("%v, said to be equivalent, broke %q: %s", mut, r.Violation.Property, r.Violation.Detail)
			}
			continue
		}
		if r.OK() {
			t.Errorf("%v: no counterexample (%d states)", mut, r.States)
			continue
		}
		if r.Violation.Property != want[mut] {
			t.Errorf("%v broke %q, want %q: %s", mut, r.Violation.Property, want[mut], r.Violation.Detail)
		}
		if len(r.Trace) < 2 || !strings.HasPrefix(r.Trace[0], "start: ") {
			t.Errorf("%v: counterexample %q", mut, r.Trace)
		}
	}
}

// ValidFence with == is equivalent to ValidFence: no write ever arrives at
// the record-checking server with an epoch above the record's current
// one, so the two comparisons agree on every write the model delivers. The
// mutant reaches exactly the states and transitions of the real model,
// row after row; the == mutant of the highest-epoch server, which compares
// with what the server has seen and not with the record, does not.
// Reference: chapter "One owner at a time", section "Checked
// exhaustively".
func TestFenceEqualsIsEquivalent(t *testing.T) {
	for _, b := range []Bounds{DefaultBounds[0], tiny3, rogue} {
		r, m := Run(b, Real), Run(b, FenceEquals)
		if !r.OK() || !m.OK() || r.States != m.States || r.Transitions != m.Transitions {
			t.Fatalf("%+v: real %d states %d transitions (ok %v), mutant %d states %d transitions (ok %v)",
				b, r.States, r.Transitions, r.OK(), m.States, m.Transitions, m.OK())
		}
	}
	if h := Run(DefaultBounds[0], HighestEquals); h.OK() {
		t.Fatalf("HighestSeen with == survives %+v", DefaultBounds[0])
	}
}

// The mutation "requests without epochs" is the bug the issue reported: a
// request delivered late takes effect after the epoch has moved past the
// one it was issued at, where its issuer never asked for it. With only
// delay (no duplication, no loss, two interruptions) the checker finds it;
// with epochs on requests the same bounds are clean.
// Reference: chapter "One owner at a time", section "What the
// model assumes".
func TestLateRequestIsFoundWithoutEpochsOnly(t *testing.T) {
	b := Bounds{Nodes: 2, Epochs: 2, Dup: 0, Loss: 0, Interrupts: 2, InFlight: 2, Symmetry: true}
	if r := Run(b, NoRequestEpochs); r.OK() || r.Violation.Property != Intent || !strings.Contains(r.Violation.Detail, "nobody had asked for it") {
		t.Fatalf("without epochs on requests: %+v", r.Violation)
	}
	if r := Run(b, Real); !r.OK() {
		t.Fatalf("with epochs on requests: %v: %s", r.Violation.Property, r.Violation.Detail)
	}
}

// Symmetry reduction over the nodes other than A explores fewer states and
// reaches the same verdicts as the plain search: the real model passes both
// ways, and a mutation's shortest counterexample has the same length.
func TestSymmetryReductionAgrees(t *testing.T) {
	b := tiny3
	plain := b
	plain.Symmetry = false
	rs, rp := Run(b, Real), Run(plain, Real)
	if !rs.OK() || !rp.OK() {
		t.Fatalf("symmetry ok=%v, plain ok=%v", rs.OK(), rp.OK())
	}
	if rs.States >= rp.States || rs.Depth != rp.Depth {
		t.Fatalf("symmetry: %d states depth %d; plain: %d states depth %d", rs.States, rs.Depth, rp.States, rp.Depth)
	}
	b2 := MutationBounds
	b2.Nodes = 3
	p2 := b2
	p2.Symmetry = false
	for _, mut := range Mutations {
		if _, ok := Equivalent[mut]; ok {
			continue // no counterexample to compare, and a full search each way
		}
		a, c := Run(b2, mut), Run(p2, mut)
		if a.OK() || c.OK() || len(a.Trace) != len(c.Trace) {
			t.Errorf("%v: symmetry gives %d steps (ok %v), plain %d (ok %v)", mut, len(a.Trace)-1, a.OK(), len(c.Trace)-1, c.OK())
		}
	}
	t.Logf("3 nodes: %d states with symmetry, %d without", rs.States, rp.States)
}

// The fault the issue reported, found by the checker when requests carry
// no epoch: the network duplicates A's BeginTransfer(A -> B)@41, the
// handover it began is cut short, A acquires again at 43, and the copy then
// starts a handover at 43 that nobody asked for. With epochs on requests
// (the real model) no run within the same bounds does anything of the kind.
// Reference: chapter "One owner at a time", section "Checked
// exhaustively".
func TestDuplicatedBeginTransferIsFound(t *testing.T) {
	r := DuplicatedBeginTransfer()
	if r.OK() {
		t.Fatal("no counterexample")
	}
	trace := strings.Join(r.Trace, "\n")
	for _, want := range []string{"duplicates BeginTransfer(A -> B)@41", "Acquire(A)@43 arrives: Owned(A, 43)", "BeginTransfer(A -> B)@41 arrives: Transferring(A, B, 43, 44)"} {
		if !strings.Contains(trace, want) {
			t.Errorf("counterexample lacks %q:\n%s", want, trace)
		}
	}
	if strings.Contains(trace, "sends BeginTransfer(A -> B)@43") {
		t.Errorf("A asks for the handover at 43 itself:\n%s", trace)
	}
	b := Bounds{Nodes: 2, Epochs: 3, Dup: 1, Interrupts: 1, InFlight: 2, Symmetry: true}
	if real := Run(b, Real); !real.OK() {
		t.Fatalf("real model: %v", real.Violation)
	}
}

// Abort reusing epoch 42 hands the actor back as Unowned(42, A). Inside
// the record nothing goes wrong at once: B's Acquire is still refused, since
// A is the intended owner. What breaks is the grant A sent B for 42 before
// the abort: it passes ValidFence on arrival while the record names A for
// 42, so the grant and A's renewed authority carry the same number. The
// checker finds that run; with the real abort (Unowned(43, A)) the grant
// fails the fence wherever it turns up.
// Reference: chapter "One owner at a time", section "Abort and
// revoke".
func TestAbortReusingTheEpoch(t *testing.T) {
	r := Run(MutationBounds, AbortReusesEpoch)
	if r.OK() || r.Violation.Property != GrantFenced || !strings.Contains(r.Violation.Detail, "grant for 42 to B passes the fence with the record at Unowned(42, A)") {
		t.Fatalf("reusing abort: %+v\n%s", r.Violation, strings.Join(r.Trace, "\n"))
	}
	reused := ownership.Owned{Owner: "A", Epoch: 42} // A re-acquired after the reusing abort
	burnt := ownership.Owned{Owner: "A", Epoch: 43}  // A re-acquired after the real abort
	if !ownership.ValidFence(reused, 42) || ownership.ValidFence(burnt, 42) {
		t.Fatalf("a grant for 42: passes after reuse %v, after the real abort %v", ownership.ValidFence(reused, 42), ownership.ValidFence(burnt, 42))
	}
}

// BenchmarkRun measures the checker's speed on one row of the chapter's
// table, in distinct states per second:
//
//	go test -run '^$' -bench Run ./examples/ownership/check
func BenchmarkRun(b *testing.B) {
	bounds := crash
	var states int
	for b.Loop() {
		states += Run(bounds, Real).States
	}
	b.ReportMetric(float64(states)/b.Elapsed().Seconds(), "states/s")
}

// The reordering budget bounds what the network may do: delivering in send
// order explores fewer states than allowing one overtake, and fewer than a
// network that delivers in any order; the real model passes under each. (An
// in-order network with overtakes may count more states than the any-order
// one, since the order of the messages in flight is then part of a state.)
func TestReorderBudget(t *testing.T) {
	b := Bounds{Nodes: 2, Epochs: 2, Interrupts: 1, InFlight: 2, Symmetry: true}
	var states []int
	for _, r := range []struct {
		inOrder bool
		budget  int
	}{{true, 0}, {true, 1}, {false, 0}} {
		b.InOrder, b.Reorder = r.inOrder, r.budget
		res := Run(b, Real)
		if !res.OK() {
			t.Fatalf("%+v: %v", b, res.Violation)
		}
		states = append(states, res.States)
	}
	if !(states[0] < states[1] && states[0] < states[2]) {
		t.Fatalf("states in order %d, one overtake %d, any order %d", states[0], states[1], states[2])
	}
}

// A late request that takes effect (possible only in the mutant without
// request epochs) is reported as a violation (Intent: nobody asked for it
// at the epoch it took effect at), and the state it leaves is the state the
// record reached: the floor is raised to the epoch
// the transition allocated and the owner of an acquired epoch is recorded.
// A search that looks past the violation (DuplicatedBeginTransfer) goes on
// from that state, not from one with a stale floor.
func TestLateRequestCompletesItsTransition(t *testing.T) {
	m := &model{b: Bounds{Nodes: 2, Epochs: 3, InFlight: 2}, mut: NoRequestEpochs}
	s := initial()
	for _, e := range []ownership.Epoch{41, 42} {
		if _, err := s.rec.Apply(ownership.Command{Op: ownership.OpRevoke, To: nodeNames[0], Epoch: e}); err != nil {
			t.Fatal(err)
		}
		m.raiseFloor(s, s.rec.CurrentEpoch())
	}
	// Acquire(A)@42 arrives at Unowned(43, A).
	c := s.clone()
	v := m.deliverRequest(s, c, msg{kind: request, cmd: ownership.Command{Op: ownership.OpAcquire, Caller: nodeNames[0], Epoch: 42}})
	if v == nil || v.Property != Intent || c.ownerAt[slot(43)] != 1 {
		t.Fatalf("late Acquire: %v, owner of 43 recorded as %d, want Intent and A (1)", v, c.ownerAt[slot(43)])
	}
	// BeginTransfer(A -> B)@41 arrives at Owned(A, 43).
	d := c.clone()
	v = m.deliverRequest(c, d, msg{kind: request, cmd: ownership.Command{Op: ownership.OpBeginTransfer, Caller: nodeNames[0], To: nodeNames[1], Epoch: 41}})
	if v == nil || v.Property != Intent || d.floor != 44 {
		t.Fatalf("late BeginTransfer: %v, floor %d, want Intent and floor 44", v, d.floor)
	}
}

// A write a server applies is applied in full before a violation is
// reported: here the highest-epoch server admits a write at 42 from B,
// which never owned 42 (OneMutator), and its applied maximum is 42
// afterwards, so that a search looking past this violation goes on from
// the server's real state and would see a later write at 41 as out of
// order.
func TestViolatingWriteCompletesItsApply(t *testing.T) {
	m := &model{b: Bounds{Nodes: 2, Epochs: 2, InFlight: 2}, mut: Real}
	s := initial()
	v, _, applied := m.deliverWrite(s, msg{kind: write, from: 1, to: highest, epoch: 42})
	if v == nil || v.Property != OneMutator || !applied || s.srv[highest].max != 42 || s.srv[highest].seen.Highest != 42 {
		t.Fatalf("write B@42: violation %v, applied %v, server max %d, HighestSeen %d; want OneMutator, applied, 42, 42",
			v, applied, s.srv[highest].max, s.srv[highest].seen.Highest)
	}
}
