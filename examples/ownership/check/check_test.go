package check

import (
	"strings"
	"testing"

	"github.com/ownership-book/ownership/examples/ownership"
)

// Rows of the chapter's table that run in about a second or less.
var (
	small = Bounds{Nodes: 2, Epochs: 2, Dup: 1, Loss: 1, Interrupts: 2, Crashes: 1, InFlight: 2, Symmetry: true}
	three = Bounds{Nodes: 3, Epochs: 2, Dup: 1, Loss: 1, Interrupts: 1, Crashes: 0, InFlight: 2, Symmetry: true}
	tiny3 = Bounds{Nodes: 3, Epochs: 2, Dup: 0, Loss: 0, Interrupts: 1, Crashes: 0, InFlight: 2, Symmetry: true}
)

// Every reachable state of the real model, within bounds that include
// duplication, loss, crashes, aborts, revokes at healthy owners and record
// restarts, satisfies every property: at most one node may mutate, epochs
// never fall, one owner per epoch, stale tokens inert, refusals change
// nothing, a request has no effect once the epoch is past it, each server
// applies writes in epoch order, the record-checking server applies none
// below the record's epoch and both apply the owner's writes.
// Reference: chapter "Ownership: epochs and fencing", section "Checked
// exhaustively".
func TestRealModelHoldsEveryProperty(t *testing.T) {
	for _, b := range []Bounds{small, three} {
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
// Reference: chapter "Ownership: epochs and fencing", section "Two meanings
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

// Each mutation breaks the property it should, and the checker prints a
// counterexample that replays step by step from the initial state.
// Reference: chapter "Ownership: epochs and fencing", section "Checked
// exhaustively".
func TestEachMutationIsCaught(t *testing.T) {
	want := map[Mutation]Property{
		EpochAtAcquire:   CheckingCurrent,
		AbortToOldOwner:  EpochsNeverFall,
		AbortWithoutBurn: OneOwnerPerEpoch,
		FenceEquals:      OwnerAccepted,
		VolatileFloor:    EpochsNeverFall,
		NoRequestEpochs:  RequestEpoch,
	}
	if len(want) != len(Mutations) {
		t.Fatalf("%d mutations, %d expectations", len(Mutations), len(want))
	}
	for _, mut := range Mutations {
		r := Run(MutationBounds, mut)
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

// The mutation "requests without epochs" is the bug the issue reported: a
// request delivered late takes effect after the epoch has moved past the
// one it was issued at. With only delay and reordering (no interrupt other
// than revokes, no duplication) the checker still finds it; with epochs on
// requests the same bounds are clean.
// Reference: chapter "Ownership: epochs and fencing", section "What the
// model assumes".
func TestLateRequestIsFoundWithoutEpochsOnly(t *testing.T) {
	b := Bounds{Nodes: 2, Epochs: 3, Dup: 0, Loss: 0, Interrupts: 2, InFlight: 2, Symmetry: true}
	if r := Run(b, NoRequestEpochs); r.OK() || r.Violation.Property != RequestEpoch {
		t.Fatalf("without epochs on requests: %+v", r.Violation)
	}
	if r := Run(Bounds{Nodes: 2, Epochs: 2, Dup: 0, Loss: 0, Interrupts: 2, InFlight: 2, Symmetry: true}, Real); !r.OK() {
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
		a, c := Run(b2, mut), Run(p2, mut)
		if a.OK() != c.OK() || len(a.Trace) != len(c.Trace) {
			t.Errorf("%v: symmetry gives %d steps, plain %d", mut, len(a.Trace)-1, len(c.Trace)-1)
		}
	}
	t.Logf("3 nodes: %d states with symmetry, %d without", rs.States, rp.States)
}

// The fault the issue reported, found by the checker when requests carry
// no epoch: the network duplicates A's BeginTransfer(A -> B)@41, the
// handover it began is aborted, A acquires again at 43, and the copy then
// starts a handover at 43 that nobody asked for. With epochs on requests
// (the real model) no run within the same bounds does anything of the kind.
// Reference: chapter "Ownership: epochs and fencing", section "Checked
// exhaustively".
func TestDuplicatedBeginTransferIsFound(t *testing.T) {
	r := DuplicatedBeginTransfer()
	if r.OK() {
		t.Fatal("no counterexample")
	}
	trace := strings.Join(r.Trace, "\n")
	for _, want := range []string{"duplicates BeginTransfer(A -> B)@41", "Abort@42 gives Unowned(43, A)", "BeginTransfer(A -> B)@41 arrives: Transferring(A, B, 43, 44)"} {
		if !strings.Contains(trace, want) {
			t.Errorf("counterexample lacks %q:\n%s", want, trace)
		}
	}
	b := Bounds{Nodes: 2, Epochs: 3, Dup: 1, Interrupts: 1, InFlight: 2, Symmetry: true}
	if real := Run(b, Real); !real.OK() {
		t.Fatalf("real model: %v", real.Violation)
	}
}

// A limit of the chapter's argument for burning an epoch on Abort: in this
// protocol, where a node writes only with a token the record issued and
// Acquire checks the intended owner, an abort that hands the actor back at
// the transfer's own epoch (Unowned(42, A) instead of Unowned(43, A))
// breaks no property within these bounds. What the extra epoch buys is that
// a grant for the abandoned epoch fails ValidFence wherever it turns up;
// with the epoch reused, a grant naming B at 42 would pass the fence while
// A owns 42. The test states both facts, so that a change to either shows.
// Reference: chapter "Ownership: epochs and fencing", section "Abort and
// revoke".
func TestAbortReusingTheEpoch(t *testing.T) {
	for _, b := range []Bounds{MutationBounds, three} {
		if r := Run(b, AbortReusesEpoch); !r.OK() {
			t.Fatalf("%+v: %v: %s\n%s", b, r.Violation.Property, r.Violation.Detail, strings.Join(r.Trace, "\n"))
		}
	}
	reused := ownership.Owned{Owner: "A", Epoch: 42} // A re-acquired after the reusing abort
	burnt := ownership.Owned{Owner: "A", Epoch: 43}  // A re-acquired after the real abort
	if !ownership.ValidFence(reused, 42) || ownership.ValidFence(burnt, 42) {
		t.Fatalf("a grant for 42: passes after reuse %v, after burn %v", ownership.ValidFence(reused, 42), ownership.ValidFence(burnt, 42))
	}
}

// BenchmarkRun measures the checker's speed on one row of the chapter's
// table, in distinct states per second:
//
//	go test -run '^$' -bench Run ./examples/ownership/check
func BenchmarkRun(b *testing.B) {
	bounds := small
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
	b := Bounds{Nodes: 2, Epochs: 2, Dup: 1, Interrupts: 1, InFlight: 2, Symmetry: true}
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
// request epochs) is reported as a RequestEpoch violation, and the state it
// leaves is the state the record reached: the floor is burnt to the epoch
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
		m.burn(s, s.rec.CurrentEpoch())
	}
	// Acquire(A)@42 arrives at Unowned(43, A).
	c := s.clone()
	v := m.deliverRequest(s, c, msg{kind: request, cmd: ownership.Command{Op: ownership.OpAcquire, Caller: nodeNames[0], Epoch: 42}})
	if v == nil || v.Property != RequestEpoch || c.ownerAt[slot(43)] != 1 {
		t.Fatalf("late Acquire: %v, owner of 43 recorded as %d, want RequestEpoch and A (1)", v, c.ownerAt[slot(43)])
	}
	// BeginTransfer(A -> B)@41 arrives at Owned(A, 43).
	d := c.clone()
	v = m.deliverRequest(c, d, msg{kind: request, cmd: ownership.Command{Op: ownership.OpBeginTransfer, Caller: nodeNames[0], To: nodeNames[1], Epoch: 41}})
	if v == nil || v.Property != RequestEpoch || d.floor != 44 {
		t.Fatalf("late BeginTransfer: %v, floor %d, want RequestEpoch and floor 44", v, d.floor)
	}
}
