package hint

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"

	"github.com/ownership-book/ownership/examples/ownership"
)

var nodes = []ownership.NodeID{"A", "B", "C"}

// world is the state the adversarial schedules act on: the record, the
// resource server, and every token each node was ever issued.
type world struct {
	rec  *ownership.Actor
	res  *Resource
	held map[ownership.NodeID][]ownership.Token
	last ownership.Epoch
}

func newWorld(unchecked bool) *world {
	rec, err := ownership.NewActor("x", ownership.Owned{Owner: "A", Epoch: 41})
	if err != nil {
		panic(err)
	}
	return &world{
		rec: rec, res: &Resource{Record: rec, Unchecked: unchecked},
		held: map[ownership.NodeID][]ownership.Token{"A": rec.Issued()}, last: 41,
	}
}

// The steps of a schedule; n and m pick nodes, k a token.
const (
	stepRevoke  = iota // the detector's verdict: Revoke(-> n), whoever owns
	stepBegin          // BeginTransfer(n -> m)
	stepRelease        // CompleteRelease(n)
	stepAbort          // Abort
	stepAcquire        // Acquire(n)
	stepWrite          // n writes with its k-th token
	numSteps
)

// step applies one step; refused transitions and writes change nothing.
func (w *world) step(kind, n, m, k int) {
	a, b := nodes[n%len(nodes)], nodes[m%len(nodes)]
	switch kind {
	case stepRevoke:
		_ = w.rec.Revoke(a)
	case stepBegin:
		_ = w.rec.BeginTransfer(a, b)
	case stepRelease:
		_ = w.rec.CompleteRelease(a)
	case stepAbort:
		_ = w.rec.Abort()
	case stepAcquire:
		if tok, err := w.rec.Acquire(a); err == nil {
			w.held[a] = append(w.held[a], tok)
		}
	case stepWrite:
		if toks := w.held[a]; len(toks) > 0 {
			_ = w.res.Put(toks[k%len(toks)], string(a))
		}
	}
}

// problem returns the first broken safety rule after a step, "" if none.
func (w *world) problem() string {
	if e := w.rec.CurrentEpoch(); e < w.last {
		return fmt.Sprintf("epoch fell from %d to %d", w.last, e)
	}
	w.last = w.rec.CurrentEpoch()
	if v := Violations(w.res.Log); v != 0 {
		return fmt.Sprintf("%d safety violations in %v", v, w.res.Log)
	}
	authorities := 0
	for _, n := range nodes {
		for _, tok := range w.held[n] {
			if w.rec.MayMutate(tok) {
				authorities++
			}
		}
	}
	if authorities > 1 {
		return fmt.Sprintf("%d tokens confer authority in %v", authorities, w.rec.State())
	}
	return ""
}

// TestAdversarialDetectorCannotBreakSafety lets a detector with arbitrary
// verdicts revoke the actor at any step, toward any node, interleaved with
// handovers, aborts, acquisitions and writes by every node with every
// token it ever received (tokens survive crashes and partitions).
// Whatever the detector says, the record-checking resource's log has no
// safety violation (epochs of accepted writes never fall, one holder per
// epoch, nothing below the record's current epoch), the record's epoch
// never falls, and at most one token confers authority.
//
// Reference: seed assumption "failure detection is unreliable: a revoke
// may fire at a healthy node; safety comes from the epoch bump"; SWIM (Das,
// Gupta and Motivala, DSN 2002) makes false suspicions rare, not impossible.
func TestAdversarialDetectorCannotBreakSafety(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := newWorld(false)
		idx := rapid.IntRange(0, 1<<20)
		for i := range rapid.IntRange(20, 80).Draw(t, "steps") {
			w.step(rapid.IntRange(0, numSteps-1).Draw(t, "step"), idx.Draw(t, "n"), idx.Draw(t, "m"), idx.Draw(t, "k"))
			if p := w.problem(); p != "" {
				t.Fatalf("after step %d: %s", i, p)
			}
		}
	})
}

// TestAdversarialSchedulesBreakAnUncheckedResource is the property test's
// negative control: the same kind of schedules, drawn from fixed seeds,
// against a resource server that checks no token. Some schedule must
// produce a violation, or the property above could not fail either.
//
// Reference: chapter "Failure detection is a hint".
func TestAdversarialSchedulesBreakAnUncheckedResource(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 1))
		w := newWorld(true)
		for range 60 {
			w.step(rng.IntN(numSteps), rng.IntN(3), rng.IntN(3), rng.IntN(8))
			if p := w.problem(); p != "" {
				t.Logf("seed %d: %s", seed, p)
				return
			}
		}
	}
	t.Fatal("200 schedules against an unchecked resource found no violation")
}

// falseSuspicion is the demonstration's story as data: A owns x at 41 and
// writes, is falsely suspected and revoked to B, B acquires and writes at
// 42, and A, awake again, writes with its token for 41.
func falseSuspicion(t *testing.T, res *Resource, rec *ownership.Actor) error {
	t.Helper()
	c := &Coordinator{Record: rec, Next: func(ownership.NodeID) ownership.NodeID { return "B" }}
	a := rec.Issued()[0]
	if err := res.Put(a, "1"); err != nil {
		t.Fatalf("A's write before the pause: %v", err)
	}
	if _, err := c.Suspect(Verdict{Node: "A", Epoch: 41}); err != nil {
		t.Fatal(err)
	}
	b, err := rec.Acquire("B")
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Put(b, "2"); err != nil {
		t.Fatalf("B's write: %v", err)
	}
	return res.Put(a, "3")
}

// TestFalselySuspectedOwnerIsFenced: a wrong suspicion of a healthy owner
// revokes it, the epoch goes up, and the owner's writes after it wakes are
// refused with a stale epoch; the log has no violation.
//
// Reference: chapter "Failure detection is a hint"; ownership's Revoke.
func TestFalselySuspectedOwnerIsFenced(t *testing.T) {
	rec, _ := ownership.NewActor("x", ownership.Owned{Owner: "A", Epoch: 41})
	res := &Resource{Record: rec}
	err := falseSuspicion(t, res, rec)
	var stale *ownership.StaleEpochError
	if !errors.As(err, &stale) || stale.Given != 41 || stale.Current != 42 {
		t.Fatalf("A's write after waking: %v, want a stale epoch 41 < 42", err)
	}
	if v := Violations(res.Log); v != 0 || len(res.Log) != 2 {
		t.Fatalf("log %v: %d violations, want 2 writes and none", res.Log, v)
	}
}

// TestUncheckedResourceCountsTheViolation is the negative control: the same
// story against a resource that checks no token accepts the deposed
// owner's write, and Violations counts it (below the epoch seen before it,
// and below the record's epoch).
//
// Reference: chapter "Failure detection is a hint".
func TestUncheckedResourceCountsTheViolation(t *testing.T) {
	rec, _ := ownership.NewActor("x", ownership.Owned{Owner: "A", Epoch: 41})
	res := &Resource{Record: rec, Unchecked: true}
	if err := falseSuspicion(t, res, rec); err != nil {
		t.Fatalf("the unchecked resource refused: %v", err)
	}
	if v := Violations(res.Log); v != 2 {
		t.Fatalf("log %v: %d violations, want 2 (one write, two rules broken)", res.Log, v)
	}
}

// TestStaleVerdictChangesNothing: a verdict against the owner at an older
// epoch (raised before a handover completed) or against a node that owns
// nothing leaves the record as it is.
//
// Reference: chapter "Failure detection is a hint".
func TestStaleVerdictChangesNothing(t *testing.T) {
	rec, _ := ownership.NewActor("x", ownership.Owned{Owner: "B", Epoch: 42})
	c := &Coordinator{Record: rec, Next: func(ownership.NodeID) ownership.NodeID { return "C" }}
	for _, v := range []Verdict{{Node: "B", Epoch: 41}, {Node: "A", Epoch: 42}} {
		s, err := c.Suspect(v)
		if !errors.Is(err, ErrNotOwner) || s != (ownership.Owned{Owner: "B", Epoch: 42}) {
			t.Errorf("Suspect(%v) = %v, %v; want Owned(B, 42) and ErrNotOwner", v, s, err)
		}
	}
	s, err := c.Suspect(Verdict{Node: "B", Epoch: 42})
	if err != nil || s != (ownership.Unowned{Epoch: 43, IntendedOwner: "C"}) {
		t.Errorf("Suspect(B at 42) = %v, %v; want Unowned(43, C)", s, err)
	}
}
