package raymond

import (
	"errors"
	"fmt"
	"math/rand/v2"
)

// Nemesis is what the simulated network may do to a message when it is about
// to be delivered. The zero Nemesis is a reliable network of FIFO channels:
// every message arrives once, in the order sent on its channel.
type Nemesis struct {
	// Duplicate is the probability that a delivered message also stays in
	// flight, to be delivered again later.
	Duplicate float64
	// Lose is the probability that the message is dropped instead.
	Lose float64
	// Delay is the probability that the message is put back behind every
	// message in flight, including later ones on its own channel.
	Delay float64
	// Reorder lets the scheduler deliver any message in flight, not only the
	// oldest one on its channel (the paper's "message overtaking").
	Reorder bool
}

// Sim is a deterministic, seeded world around Step: the nodes of a tree and
// the messages in flight between them. Each step it picks one enabled action
// at random (deliver a message, let a node leave its critical section, let a
// node that has requests left ask for the privilege) with the seeded
// generator, so the same seed gives the same run.
type Sim struct {
	Tree     Tree
	Nodes    []Node
	InFlight []Message // in the order sent (or put back)

	// Counts since the start: messages sent by kind, critical-section
	// entries, and steps taken.
	Sent    map[Kind]int
	Entries int
	Steps   int

	// Left[i] is how many more times node i will ask for the privilege; with
	// Saturate set, a node asks again as soon as it leaves.
	Left     []int
	Saturate bool
	// LongCritical makes critical sections long compared with message
	// delays: a node leaves its critical section only when no message is in
	// flight.
	LongCritical bool
	// Rules is the transition function the nodes run; nil means Step. Tests
	// set it to a mutant of Step to show that a check can fail.
	Rules func(Node, Event) (Node, []Message, error)
	// Waited[i] counts the critical-section entries of other nodes since
	// node i last asked for the privilege (reset when it asks); MaxWaited[i]
	// is the largest value it had when node i entered. They measure
	// fairness: how often a waiting node is overtaken.
	// EnteredBy[i] counts node i's own entries.
	Waited, MaxWaited, EnteredBy []int

	nemesis Nemesis
	rng     *rand.Rand
}

// NewSim returns a simulator over t with the privilege at holder, in the
// paper's initial state.
func NewSim(t Tree, holder NodeID, seed uint64, nem Nemesis) *Sim {
	return &Sim{
		Tree:      t,
		Nodes:     Initial(t, holder),
		Sent:      map[Kind]int{},
		Left:      make([]int, t.N()),
		Waited:    make([]int, t.N()),
		MaxWaited: make([]int, t.N()),
		EnteredBy: make([]int, t.N()),
		nemesis:   nem,
		rng:       rand.New(rand.NewPCG(seed, 0x7a1e)),
	}
}

// Apply feeds one event to one node and puts the messages it sends in
// flight. It returns Step's error, and an error for a message addressed to a
// node that is not a neighbour.
func (s *Sim) Apply(id NodeID, ev Event) error {
	rules := s.Rules
	if rules == nil {
		rules = Step
	}
	n, out, err := rules(s.Nodes[id], ev)
	if err != nil {
		return err
	}
	wasUsing := s.Nodes[id].Using
	s.Nodes[id] = n
	if ev.Kind == Want {
		s.Waited[id] = 0
	}
	if n.Using && !wasUsing {
		s.Entries++
		s.EnteredBy[id]++
		s.MaxWaited[id] = max(s.MaxWaited[id], s.Waited[id])
		for i := range s.Waited {
			if NodeID(i) != id {
				s.Waited[i]++
			}
		}
	}
	for _, m := range out {
		if !s.Tree.Adjacent(m.From, m.To) {
			return fmt.Errorf("raymond: %v is not sent to a neighbour", m)
		}
		s.Sent[m.Kind]++
		s.InFlight = append(s.InFlight, m)
	}
	return nil
}

// action is one enabled step: deliver InFlight[msg] (msg >= 0), or feed ev
// to node.
type action struct {
	msg  int
	node NodeID
	ev   Event
}

func (s *Sim) enabled() []action {
	var acts []action
	for i, m := range s.InFlight {
		if !s.nemesis.Reorder && s.olderOnChannel(i, m) {
			continue
		}
		acts = append(acts, action{msg: i})
	}
	for i, n := range s.Nodes {
		id := NodeID(i)
		switch {
		case n.Using && (!s.LongCritical || len(s.InFlight) == 0):
			acts = append(acts, action{msg: -1, node: id, ev: Event{Kind: Exit}})
		case !n.Wants() && s.Left[i] > 0:
			acts = append(acts, action{msg: -1, node: id, ev: Event{Kind: Want}})
		}
	}
	return acts
}

// olderOnChannel reports whether a message sent before InFlight[i] on the
// same channel is still in flight.
func (s *Sim) olderOnChannel(i int, m Message) bool {
	for _, o := range s.InFlight[:i] {
		if o.From == m.From && o.To == m.To {
			return true
		}
	}
	return false
}

// Next takes one random enabled step. It returns false, doing nothing, when
// no step is enabled (every request served and nothing in flight, or a
// deadlock).
func (s *Sim) Next() (bool, error) {
	acts := s.enabled()
	if len(acts) == 0 {
		return false, nil
	}
	s.Steps++
	a := acts[s.rng.IntN(len(acts))]
	if a.msg < 0 {
		if a.ev.Kind == Want {
			s.Left[a.node]--
		}
		if err := s.Apply(a.node, a.ev); err != nil {
			return true, err
		}
		if a.ev.Kind == Exit && s.Saturate {
			return true, s.Apply(a.node, Event{Kind: Want})
		}
		return true, nil
	}
	m := s.InFlight[a.msg]
	s.InFlight = append(s.InFlight[:a.msg:a.msg], s.InFlight[a.msg+1:]...)
	nem := s.nemesis
	switch {
	case nem.Lose > 0 && s.rng.Float64() < nem.Lose:
		return true, nil
	case nem.Delay > 0 && s.rng.Float64() < nem.Delay:
		s.InFlight = append(s.InFlight, m)
		return true, nil
	case nem.Duplicate > 0 && s.rng.Float64() < nem.Duplicate:
		s.InFlight = append(s.InFlight, m)
	}
	return true, s.Deliver(m)
}

// Deliver hands message m to its destination.
func (s *Sim) Deliver(m Message) error {
	kind := ReceiveRequest
	if m.Kind == Privilege {
		kind = ReceivePrivilege
	}
	return s.Apply(m.To, Event{Kind: kind, From: m.From})
}

// Using returns the nodes in their critical section, in order.
func (s *Sim) Using() []NodeID {
	var ids []NodeID
	for _, n := range s.Nodes {
		if n.Using {
			ids = append(ids, n.ID)
		}
	}
	return ids
}

// Messages returns the number of messages sent so far.
func (s *Sim) Messages() int { return s.Sent[Request] + s.Sent[Privilege] }

// Pending reports whether some node's own request is still outstanding.
func (s *Sim) Pending() bool {
	for i, n := range s.Nodes {
		if n.Wants() || n.Using || s.Left[i] > 0 {
			return true
		}
	}
	return false
}

// RunIsolated serves one request from u while t holds the privilege and
// nothing else happens, on a reliable network, and returns the number of
// messages it took. The paper's count is 2·dist(u, t): one REQUEST and one
// PRIVILEGE per edge of the path.
func RunIsolated(tr Tree, u, t NodeID) (int, error) {
	costs, err := IsolatedCosts(tr, t, []NodeID{u})
	if err != nil {
		return 0, err
	}
	return costs[0], nil
}

// IsolatedCosts is RunIsolated for each requester in us, with the privilege
// at t, starting each request from the same initial state.
func IsolatedCosts(tr Tree, t NodeID, us []NodeID) ([]int, error) {
	initial := Initial(tr, t)
	s := NewSim(tr, t, 1, Nemesis{})
	costs := make([]int, len(us))
	for i, u := range us {
		touched := []NodeID{u}
		sent := s.Messages()
		if err := s.Apply(u, Event{Kind: Want}); err != nil {
			return nil, err
		}
		// With one request in the system exactly one message is in flight
		// at a time, so delivering it is the only step there is.
		for !s.Nodes[u].Using {
			if len(s.InFlight) != 1 {
				return nil, fmt.Errorf("raymond: isolated request from %s: %d messages in flight, want 1", u, len(s.InFlight))
			}
			m := s.InFlight[0]
			s.InFlight = s.InFlight[:0]
			s.Steps++
			touched = append(touched, m.To)
			if err := s.Deliver(m); err != nil {
				return nil, err
			}
		}
		costs[i] = s.Messages() - sent
		for _, id := range touched {
			s.Nodes[id] = initial[id].Clone()
		}
	}
	return costs, nil
}

// ErrStepBound is returned by HeavyLoad when the run takes more steps than
// its bound (heavyLoadSteps) without reaching the entries asked for.
var ErrStepBound = errors.New("raymond: step bound reached under heavy load")

// heavyLoadSteps bounds the steps of a saturated run of entries entries on
// tr. Under saturation each entry takes one Exit, one Want and the messages
// that move the privilege and its requests; with critical sections long
// compared with message delays (Sim.LongCritical) the privilege crosses at
// most the tree's diameter on each hop, with one REQUEST per edge crossed,
// so 2·diameter+2 steps per entry suffice. The bound allows four times that,
// plus the warm-up round of N entries.
func heavyLoadSteps(tr Tree, entries int) int {
	return 4 * (2*tr.Diameter() + 2) * (entries + tr.N())
}

// HeavyLoad runs the tree with every node always requesting (a node asks
// again the moment it leaves its critical section) until entries critical-
// section entries have happened, and returns the messages sent per entry.
// The paper's figure for saturated demand is about four. It returns
// ErrStepBound if the entries do not happen within heavyLoadSteps steps.
func HeavyLoad(tr Tree, holder NodeID, seed uint64, entries int) (float64, error) {
	return heavyLoad(NewSim(tr, holder, seed, Nemesis{}), entries)
}

func heavyLoad(s *Sim, entries int) (float64, error) {
	tr := s.Tree
	s.Saturate = true
	s.LongCritical = true
	for i := range s.Nodes {
		if err := s.Apply(NodeID(i), Event{Kind: Want}); err != nil {
			return 0, err
		}
	}
	bound := heavyLoadSteps(tr, entries)
	next := func() (bool, error) {
		if s.Steps >= bound {
			return false, fmt.Errorf("%w: %d steps, %d entries on %s", ErrStepBound, s.Steps, s.Entries, tr.Name)
		}
		return s.Next()
	}
	// Count from a warm start: the first round of requests climbing the tree
	// is a start-up cost, not the steady state.
	for s.Entries < tr.N() {
		ok, err := next()
		if err != nil {
			return 0, err
		}
		if !ok {
			return 0, fmt.Errorf("raymond: deadlock under heavy load after %d entries", s.Entries)
		}
	}
	e0, m0 := s.Entries, s.Messages()
	for s.Entries-e0 < entries {
		ok, err := next()
		if err != nil {
			return 0, err
		}
		if !ok {
			return 0, fmt.Errorf("raymond: deadlock under heavy load after %d entries", s.Entries)
		}
	}
	return float64(s.Messages()-m0) / float64(s.Entries-e0), nil
}
