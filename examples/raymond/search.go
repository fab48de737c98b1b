package raymond

import (
	"fmt"
	"slices"
	"strings"
)

// World is a global state of the algorithm for exhaustive search: every
// node, the messages in flight as a multiset (so any of them may be delivered
// next: the network may reorder), how many more times each node will ask for
// the privilege, and how many duplications and losses the network still has
// in hand.
type World struct {
	Tree     Tree
	Nodes    []Node
	InFlight []Message // kept sorted, so equal multisets have equal keys
	Left     []int
	Dups     int
	Losses   int
}

// Bounds are the limits of a search: requests per node and the nemesis's
// budget of duplicated and lost messages.
type Bounds struct {
	Requests, Dups, Losses int
}

// NewWorld returns the initial world on tr with the privilege at holder.
func NewWorld(tr Tree, holder NodeID, b Bounds) World {
	w := World{Tree: tr, Nodes: Initial(tr, holder), Left: make([]int, tr.N()), Dups: b.Dups, Losses: b.Losses}
	for i := range w.Left {
		w.Left[i] = b.Requests
	}
	return w
}

func (w World) clone() World {
	c := w
	c.Nodes = make([]Node, len(w.Nodes))
	for i, n := range w.Nodes {
		c.Nodes[i] = n.Clone()
	}
	c.InFlight = slices.Clone(w.InFlight)
	c.Left = slices.Clone(w.Left)
	return c
}

func messageLess(a, b Message) int {
	if a.Kind != b.Kind {
		return int(a.Kind) - int(b.Kind)
	}
	if a.From != b.From {
		return int(a.From) - int(b.From)
	}
	return int(a.To) - int(b.To)
}

// Key is a canonical encoding of w: equal worlds have equal keys.
func (w World) Key() string {
	var b strings.Builder
	for _, n := range w.Nodes {
		fmt.Fprintf(&b, "%d%t%t%v;", n.Holder, n.Using, n.Asked, n.RequestQ)
	}
	fmt.Fprintf(&b, "|%v|%v|%d|%d", w.InFlight, w.Left, w.Dups, w.Losses)
	return b.String()
}

// apply feeds ev to node id and puts its messages in flight.
func (w World) apply(id NodeID, ev Event) (World, error) {
	c := w.clone()
	n, out, err := Step(c.Nodes[id], ev)
	if err != nil {
		return w, err
	}
	c.Nodes[id] = n
	c.InFlight = append(c.InFlight, out...)
	slices.SortFunc(c.InFlight, messageLess)
	return c, nil
}

// Moves lists every transition enabled in w: a node with requests left asks
// for the privilege, a USING node leaves its critical section, any message in
// flight is delivered, or, within the nemesis's budget, duplicated or lost.
// Identical messages in flight give one move each, not one per copy.
func (w World) Moves() []Transition[World] {
	var moves []Transition[World]
	for i, n := range w.Nodes {
		id := NodeID(i)
		if n.Using {
			if c, err := w.apply(id, Event{Kind: Exit}); err == nil {
				moves = append(moves, Transition[World]{Label: id.String() + " exits", To: c})
			}
		} else if !n.Wants() && w.Left[i] > 0 {
			if c, err := w.apply(id, Event{Kind: Want}); err == nil {
				c.Left[i]--
				moves = append(moves, Transition[World]{Label: id.String() + " wants", To: c})
			}
		}
	}
	for i, m := range w.InFlight {
		if i > 0 && w.InFlight[i-1] == m {
			continue
		}
		rest := w.clone()
		rest.InFlight = slices.Delete(rest.InFlight, i, i+1)
		kind := ReceiveRequest
		if m.Kind == Privilege {
			kind = ReceivePrivilege
		}
		if c, err := rest.apply(m.To, Event{Kind: kind, From: m.From}); err == nil {
			moves = append(moves, Transition[World]{Label: "deliver " + m.String(), To: c})
		}
		if w.Dups > 0 {
			c := w.clone()
			c.Dups--
			c.InFlight = append(c.InFlight, m)
			slices.SortFunc(c.InFlight, messageLess)
			moves = append(moves, Transition[World]{Label: "duplicate " + m.String(), To: c})
		}
		if w.Losses > 0 {
			c := rest.clone()
			c.Losses--
			moves = append(moves, Transition[World]{Label: "lose " + m.String(), To: c})
		}
	}
	return moves
}

// Errors for the two failures the negative controls look for.
var (
	// ErrEveryoneBlocked: every node wants the privilege, no message is in
	// flight and no node holds it, so no node will ever move again.
	ErrEveryoneBlocked = fmt.Errorf("every node is waiting and the privilege is gone")
)

// TwoUsing is a search goal: nil unless two or more nodes are USING, then
// ErrTwoUsing naming them.
func TwoUsing(w World) error {
	var ids []NodeID
	for _, n := range w.Nodes {
		if n.Using {
			ids = append(ids, n.ID)
		}
	}
	if len(ids) > 1 {
		return fmt.Errorf("%w: %v", ErrTwoUsing, ids)
	}
	return nil
}

// EveryoneBlocked is a search goal: nil unless every node wants the
// privilege, nothing is in flight and nobody holds it (ErrEveryoneBlocked).
func EveryoneBlocked(w World) error {
	if len(w.InFlight) > 0 {
		return nil
	}
	for _, n := range w.Nodes {
		if !n.Wants() || n.Privileged() {
			return nil
		}
	}
	return ErrEveryoneBlocked
}

// Search explores every world reachable from NewWorld(tr, holder, b) and
// returns the shortest run to a world for which goal returns an error, or,
// if there is none within the bounds, the size of the state space.
func Search(tr Tree, holder NodeID, b Bounds, goal func(World) error) Exploration[World] {
	return Explore(NewWorld(tr, holder, b), World.Key, World.Moves, goal, 0)
}

// Safe is a search goal that is the paper's invariants (Check) on a world.
func Safe(w World) error { return Check(w.Tree, w.Nodes, w.InFlight) }
