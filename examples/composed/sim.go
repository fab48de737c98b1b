package composed

import (
	"fmt"
	"math/rand/v2"

	"github.com/ownership-book/ownership/examples/raymond"
)

// Sim runs a System with a seeded random scheduler: each step performs one
// enabled move drawn at random, so the same seed gives the same run. With
// LongCritical set, a node writes and leaves its critical section only when
// no REQUEST or PRIVILEGE is in flight (critical sections long compared with
// message delays); with Saturate set, a node asks again as soon as it leaves.
type Sim struct {
	*System
	LongCritical, Saturate bool
	Steps                  int
	rng                    *rand.Rand
}

// NewSim returns a simulator over s.
func NewSim(s *System, seed uint64) *Sim {
	return &Sim{System: s, rng: rand.New(rand.NewPCG(seed, 0xc0de))}
}

func (s *Sim) raymondInFlight() bool {
	for _, m := range s.InFlight {
		if m.Kind != Write {
			return true
		}
	}
	return false
}

// Next performs one random enabled move and returns its label, or ok false if
// no move is enabled.
func (s *Sim) Next() (label string, ok bool, err error) {
	moves := s.Moves()
	if s.LongCritical && s.raymondInFlight() {
		var keep []Move
		for _, mv := range moves {
			if mv.Kind != MoveWrite && mv.Kind != MoveExit {
				keep = append(keep, mv)
			}
		}
		moves = keep
	}
	if len(moves) == 0 {
		return "", false, nil
	}
	mv := moves[s.rng.IntN(len(moves))]
	s.Steps++
	label, err = s.Do(mv)
	if err == nil && mv.Kind == MoveExit && s.Saturate {
		s.Left[mv.Node]++
	}
	return label, true, err
}

// Isolated serves one request from u while t holds the privilege, on a
// reliable network with nothing else happening, and returns the Raymond
// messages and the record writes it took (the requester's own write to the
// resource is not counted).
func Isolated(tr raymond.Tree, u, t raymond.NodeID) (messages, recordWrites int, err error) {
	s := New(tr, t, Bounds{}, Correct)
	s.Left[u] = 1
	for !s.Nodes[u].Using {
		moves := s.Moves()
		if len(moves) == 0 {
			return 0, 0, fmt.Errorf("composed: %s's request was never served", u)
		}
		if _, err := s.Do(moves[0]); err != nil {
			return 0, 0, err
		}
	}
	if !s.authorized(u) {
		return 0, 0, fmt.Errorf("composed: %s is USING without authority", u)
	}
	return s.Messages, s.RecordWrites, nil
}

// HeavyLoad runs tr with every node always requesting and critical sections
// long compared with message delays, and returns Raymond messages and record
// writes per authorized critical-section entry, over entries entries after a
// warm-up of N.
func HeavyLoad(tr raymond.Tree, holder raymond.NodeID, seed uint64, entries int) (messages, recordWrites float64, err error) {
	s := NewSim(New(tr, holder, Bounds{Requests: 1}, Correct), seed)
	s.LongCritical, s.Saturate = true, true
	step := func() error {
		_, ok, err := s.Next()
		if err == nil && !ok {
			err = fmt.Errorf("composed: no move after %d entries", s.Entries)
		}
		return err
	}
	for s.Entries < tr.N() {
		if err := step(); err != nil {
			return 0, 0, err
		}
	}
	e0, m0, w0 := s.Entries, s.Messages, s.RecordWrites
	for s.Entries-e0 < entries {
		if err := step(); err != nil {
			return 0, 0, err
		}
	}
	n := float64(s.Entries - e0)
	return float64(s.Messages-m0) / n, float64(s.RecordWrites-w0) / n, nil
}
