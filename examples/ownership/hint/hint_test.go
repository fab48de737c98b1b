package hint

import (
	"errors"
	"testing"

	"pgregory.net/rapid"

	"github.com/ownership-book/ownership/examples/ownership"
)

var nodes = []ownership.NodeID{"A", "B", "C"}

// TestAdversarialDetectorCannotBreakSafety lets a detector with arbitrary
// verdicts revoke the actor at any moment, toward any node, interleaved
// with handovers, acquisitions and writes by every node with every token
// it ever received (tokens survive crashes and partitions). Whatever the
// detector says, the record-checking resource's log has no safety
// violation: epochs of accepted writes never fall, one holder per epoch,
// nothing below the record's current epoch; the record's epoch never
// falls; and at most one node holds a token that confers authority.
//
// Reference: seed assumption "failure detection is unreliable: a revoke may
// fire at a healthy node; safety comes from the epoch bump"; SWIM (Das,
// Gupta and Motivala, DSN 2002) gives no accuracy guarantee either.
func TestAdversarialDetectorCannotBreakSafety(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rec, err := ownership.NewActor("x", ownership.Owned{Owner: "A", Epoch: 41})
		if err != nil {
			t.Fatal(err)
		}
		res := &Resource{Record: rec}
		held := map[ownership.NodeID][]ownership.Token{"A": rec.Issued()}
		node := rapid.SampledFrom(nodes)
		last := rec.CurrentEpoch()
		t.Repeat(map[string]func(*rapid.T){
			"detector revokes": func(t *rapid.T) {
				// Any verdict: the owner, a healthy node, a node that
				// owns nothing, at any epoch; the coordinator obeys.
				_ = rec.Revoke(node.Draw(t, "next"))
			},
			"begin transfer": func(t *rapid.T) {
				_ = rec.BeginTransfer(node.Draw(t, "caller"), node.Draw(t, "to"))
			},
			"complete release": func(t *rapid.T) {
				_ = rec.CompleteRelease(node.Draw(t, "caller"))
			},
			"abort": func(t *rapid.T) { _ = rec.Abort() },
			"acquire": func(t *rapid.T) {
				n := node.Draw(t, "caller")
				if tok, err := rec.Acquire(n); err == nil {
					held[n] = append(held[n], tok)
				}
			},
			"write": func(t *rapid.T) {
				n := node.Draw(t, "writer")
				if len(held[n]) == 0 {
					t.Skip("no token")
				}
				tok := rapid.SampledFrom(held[n]).Draw(t, "token")
				_ = res.Put(tok, string(n))
			},
			"": func(t *rapid.T) {
				if e := rec.CurrentEpoch(); e < last {
					t.Fatalf("epoch fell from %d to %d", last, e)
				}
				last = rec.CurrentEpoch()
				if v := Violations(res.Log); v != 0 {
					t.Fatalf("%d safety violations in %v", v, res.Log)
				}
				authorities := 0
				for _, n := range nodes {
					for _, tok := range held[n] {
						if rec.MayMutate(tok) {
							authorities++
						}
					}
				}
				if authorities > 1 {
					t.Fatalf("%d tokens confer authority in %v", authorities, rec.State())
				}
			},
		})
	})
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
