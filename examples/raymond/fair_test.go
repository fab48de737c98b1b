package raymond

import (
	"errors"
	"testing"
)

// stepJumpQueue is a mutant of Step: a neighbour's REQUEST goes to the front
// of REQUEST_Q instead of its tail, which breaks the paper's FIFO order and
// nothing else.
func stepJumpQueue(n Node, ev Event) (Node, []Message, error) {
	if ev.Kind != ReceiveRequest {
		return Step(n, ev)
	}
	n = n.Clone()
	n.RequestQ = append([]NodeID{ev.From}, n.RequestQ...)
	var out []Message
	out = assignPrivilege(&n, out)
	out = makeRequest(&n, out)
	return n, out, nil
}

// saturated runs s with every node always asking (critical sections long
// compared with message delays) until entries entries have happened, and
// returns the largest number of other nodes' entries any node saw while it
// waited, and how many nodes entered at all.
func saturated(t *testing.T, s *Sim, entries int) (worst, entered int) {
	t.Helper()
	s.Saturate, s.LongCritical = true, true
	for i := range s.Nodes {
		if err := s.Apply(NodeID(i), Event{Kind: Want}); err != nil {
			t.Fatal(err)
		}
	}
	n := s.Tree.N()
	bound := heavyLoadSteps(s.Tree, entries)
	for s.Entries < entries && s.Steps < bound {
		ok, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			t.Fatalf("%s: deadlock after %d entries", s.Tree.Name, s.Entries)
		}
	}
	for i := range n {
		worst = max(worst, s.MaxWaited[i], s.Waited[i])
		if s.EnteredBy[i] > 0 {
			entered++
		}
	}
	return worst, entered
}

// Under saturated demand every node enters, and while a node waits no other
// node enters twice: at most N-1 entries of others between a node's request
// and its entry. That is the bound the paper's FIFO queues give (each node
// serves its REQUEST_Q in arrival order, so once a request is queued, every
// request ahead of it in any queue on its way is served at most once before
// it), and it holds whether messages on a channel overtake each other or not.
// Reference: Raymond 1989, section on fairness ("starvation is impossible":
// requests are served in FIFO order at each node).
func TestSaturatedDemandIsFair(t *testing.T) {
	for _, tr := range append(trees(), Binary(31), Star(15), Random(20, 4)) {
		for seed := range uint64(10) {
			s := NewSim(tr, NodeID(seed%uint64(tr.N())), seed, Nemesis{Reorder: seed%2 == 1})
			worst, entered := saturated(t, s, 30*tr.N())
			if entered != tr.N() || worst > tr.N()-1 {
				t.Fatalf("%s seed %d: %d of %d nodes entered; a waiting node saw up to %d other entries, bound %d",
					tr.Name, seed, entered, tr.N(), worst, tr.N()-1)
			}
		}
	}
}

// Negative control: with a neighbour's request put at the front of the
// queue, saturated demand starves nodes, and the fairness check sees it.
func TestFairnessCheckCatchesQueueJumping(t *testing.T) {
	tr := Binary(7)
	s := NewSim(tr, 0, 1, Nemesis{})
	s.Rules = stepJumpQueue
	worst, entered := saturated(t, s, 30*tr.N())
	if entered == tr.N() && worst <= tr.N()-1 {
		t.Fatalf("the mutant passed: %d of %d nodes entered, worst wait %d", entered, tr.N(), worst)
	}
	t.Logf("mutant: %d of %d nodes entered; a waiting node saw %d other entries (bound %d)", entered, tr.N(), worst, tr.N()-1)
}

// stepBounce is a mutant of Step that livelocks: a node receiving the
// PRIVILEGE sends it straight back to its sender instead of using or
// queueing it, so messages never stop and no node ever enters.
func stepBounce(n Node, ev Event) (Node, []Message, error) {
	if ev.Kind != ReceivePrivilege {
		return Step(n, ev)
	}
	n = n.Clone()
	n.Holder = ev.From
	return n, []Message{{Kind: Privilege, From: n.ID, To: ev.From}}, nil
}

// HeavyLoad stops with ErrStepBound instead of running forever when entries
// stop happening while messages keep flowing (a livelock).
func TestHeavyLoadIsBounded(t *testing.T) {
	s := NewSim(Binary(7), 0, 1, Nemesis{})
	s.Rules = stepBounce
	_, err := heavyLoad(s, 10)
	if !errors.Is(err, ErrStepBound) || s.Steps != heavyLoadSteps(s.Tree, 10) {
		t.Fatalf("heavyLoad of a livelocking mutant: %v after %d steps, want ErrStepBound after %d", err, s.Steps, heavyLoadSteps(s.Tree, 10))
	}
	// The real rules reach their entries well within the bound.
	s = NewSim(Binary(7), 0, 1, Nemesis{})
	if _, err := heavyLoad(s, 10); err != nil || s.Steps*2 > heavyLoadSteps(s.Tree, 10) {
		t.Fatalf("heavyLoad: %v after %d steps (bound %d)", err, s.Steps, heavyLoadSteps(s.Tree, 10))
	}
}
