package check

import (
	"fmt"
	"slices"

	"github.com/ownership-book/ownership/examples/ownership"
)

// What happens when a message arrives, and the properties checked after
// each transition.

// checkEpochs checks what every transition must keep: the current epoch
// does not fall.
func (m *model) checkEpochs(before, after *State) *Violation {
	b, a := before.rec.CurrentEpoch(), after.rec.CurrentEpoch()
	if a < b {
		return &Violation{EpochsNeverFall, fmt.Sprintf("the current epoch fell from %d to %d", b, a)}
	}
	return nil
}

// deliver applies message mm, already removed from c.net, to c. It
// reports false when the delivery would allocate an epoch beyond the bound
// (the run is cut there) or cannot happen (a grant to a crashed node).
func (m *model) deliver(s, c *State, mm msg) (*Violation, bool, bool) {
	switch mm.kind {
	case write:
		bad, note, _ := m.deliverWrite(c, mm)
		return bad, note, true
	case grant:
		if c.nodes[mm.to].crashed {
			return nil, false, false
		}
		return m.deliverGrant(c, mm), false, true
	}
	bad := m.deliverRequest(s, c, mm)
	if c.rec.CurrentEpoch() > m.maxEpoch() {
		return nil, false, false
	}
	return bad, false, true
}

// named is the node the record names for its current epoch: the owner,
// the incoming node of a handover, the intended owner.
func namedNode(st ownership.State) ownership.NodeID {
	switch v := st.(type) {
	case ownership.Owned:
		return v.Owner
	case ownership.Transferring:
		return v.To
	case ownership.Unowned:
		return v.IntendedOwner
	}
	return ""
}

// deliverGrant hands grant g to its node, which checks it with ValidFence
// and, if it passes, asks the record to acquire at the grant's epoch. A
// grant that passes must name the node the record names for that epoch:
// otherwise a node holding a grant from an abandoned handover and the
// node the record chose would carry the same number.
func (m *model) deliverGrant(c *State, g msg) *Violation {
	st := c.rec.State()
	if !ownership.ValidFence(st, g.epoch) {
		return nil // stale on arrival: dropped
	}
	var bad *Violation
	if cur := ownership.CurrentEpoch(st); g.epoch != cur || namedNode(st) != nodeNames[g.to] {
		bad = &Violation{GrantFenced, fmt.Sprintf("%v passes the fence with the record at %v", g, st)}
	}
	cmd := ownership.Command{Op: ownership.OpAcquire, Caller: nodeNames[g.to], Epoch: g.epoch}
	req := msg{kind: request, from: g.to, cmd: cmd}
	if !slices.Contains(c.net, req) {
		c.net = m.enqueue(c.net, req) // the grant's slot: the network cannot overflow
	}
	c.ask(intentOf(cmd, g.to))
	return bad
}

func (m *model) deliverRequest(s, c *State, mm msg) *Violation {
	beforeState, beforeIssued := c.rec.State(), c.rec.Issued()
	cur := c.rec.CurrentEpoch()
	if err := m.apply(c, mm.cmd); err != nil {
		if c.rec.State() != beforeState || !slices.Equal(c.rec.Issued(), beforeIssued) {
			return &Violation{RefusalInert, fmt.Sprintf("refused %v (%v) changed the record", mm.cmd, err)}
		}
		return nil
	}
	after := c.rec.State()
	// The transition took effect: finish it (write the floor, record the
	// owner and whom a new epoch is for) before reporting anything, so that
	// a search that goes on past a violation it is not looking for (run's
	// accept) goes on from the state the record really reached. The
	// violations are reported in a fixed order of priority.
	op := mm.cmd.Op
	if op == ownership.OpBeginTransfer || op == ownership.OpRevoke || (op == ownership.OpAbort && m.mut != AbortWithoutFloor) {
		m.raiseFloor(c, c.rec.CurrentEpoch())
	}
	if e := c.rec.CurrentEpoch(); e > cur && e < firstEpoch+maxEpochs {
		// The issuer's choice for the new epoch: the target it named, or
		// for Abort the outgoing owner.
		to := mm.cmd.To
		if t, ok := beforeState.(ownership.Transferring); ok && op == ownership.OpAbort {
			to = t.From
		}
		if k := slot(e); c.named[k] == 0 && to != "" {
			c.named[k] = int8(indexOf(to) + 1)
		}
	}
	var oneOwner, intended *Violation
	o, owned := after.(ownership.Owned)
	if owned && after != beforeState {
		k := slot(o.Epoch)
		who := int8(indexOf(o.Owner) + 1)
		if prev := c.ownerAt[k]; prev != 0 && prev != who {
			oneOwner = &Violation{OneOwnerPerEpoch, fmt.Sprintf("epoch %d owned by %s and then by %s", o.Epoch, nodeNames[prev-1], o.Owner)}
		} else {
			c.ownerAt[k] = who
		}
	}
	// Intent: the issuer asked for this transition at the epoch it took
	// effect at, and a node becomes owner of an epoch only if it asked to
	// acquire at that epoch and the epoch was allocated for it.
	who := int8(-1)
	if mm.kind == request {
		who = int8(indexOf(mm.cmd.Caller))
	}
	want := intentOf(mm.cmd, who)
	want.epoch = cur
	switch {
	case !c.wasAsked(want):
		intended = &Violation{Intent, fmt.Sprintf("%v took effect at %d, where nobody had asked for it", mm.cmd, cur)}
	case owned && after != beforeState:
		k := slot(o.Epoch)
		if !c.wasAsked(intent{op: ownership.OpAcquire, who: int8(indexOf(o.Owner)), to: -1, epoch: o.Epoch}) {
			intended = &Violation{Intent, fmt.Sprintf("%v made %s the owner at %d, which it never asked to acquire", mm.cmd, o.Owner, o.Epoch)}
		} else if c.named[k] != int8(indexOf(o.Owner)+1) {
			intended = &Violation{Intent, fmt.Sprintf("%v made %s the owner at %d, which was allocated for %s", mm.cmd, o.Owner, o.Epoch, nodeNames[c.named[k]-1])}
		}
	}
	var late *Violation
	if mm.cmd.Epoch < cur {
		late = &Violation{RequestEpoch, fmt.Sprintf("%v, issued at %d, took effect at %d", mm.cmd, mm.cmd.Epoch, cur)}
	}
	for _, v := range []*Violation{m.checkEpochs(s, c), oneOwner, intended, late} {
		if v != nil {
			return v
		}
	}
	return nil
}

// fenceEpoch is the epoch the record-checking server compares with: the
// record's current epoch, or with EpochAtAcquire the epoch of the last
// acquisition.
func (m *model) fenceEpoch(st ownership.State) ownership.Epoch {
	if m.mut != EpochAtAcquire {
		return ownership.CurrentEpoch(st)
	}
	switch v := st.(type) {
	case ownership.Owned:
		return v.Epoch
	case ownership.Transferring:
		return v.OldEpoch
	case ownership.Unowned:
		return v.Epoch - 1
	}
	return 0
}

// admit is the server's decision on a write at e, with the server's own
// state updated: HighestSeen.Admit, ValidFence, or a mutant's version.
func (m *model) admit(c *State, sv int8, e ownership.Epoch) bool {
	if sv == highest {
		h := &c.srv[highest].seen
		switch m.mut {
		case HighestEquals:
			if e != h.Highest {
				return false
			}
			h.Highest = e
			return true
		case HighestForgets:
			return e >= h.Highest
		}
		return h.Admit(e) == nil // the package's own server
	}
	switch m.mut {
	case EpochAtAcquire:
		return e >= m.fenceEpoch(c.rec.State())
	case FenceEquals:
		return e == ownership.CurrentEpoch(c.rec.State())
	}
	return ownership.ValidFence(c.rec.State(), e) // the package's own check
}

// deliverWrite delivers write mm to its server. It returns the violation,
// whether the highest-epoch server applied a write the record has fenced,
// and whether the write was applied.
func (m *model) deliverWrite(c *State, mm msg) (*Violation, bool, bool) {
	e := mm.epoch
	ok := m.admit(c, mm.to, e)
	tok := ownership.Token{Actor: actorID, Epoch: e, Holder: nodeNames[mm.from]}
	if !ok {
		if c.rec.MayMutate(tok) {
			return &Violation{OwnerAccepted, fmt.Sprintf("the %s refused %v, which may mutate", serverNames[mm.to], tok)}, false, false
		}
		return nil, false, false
	}
	// The server applied the write: its ghost maximum follows before any
	// violation is reported, so that a search that goes on past a
	// violation it is not looking for (run's accept) goes on from the state
	// the server really reached. The first violation is reported.
	sv := &c.srv[mm.to]
	prev := sv.max
	sv.max = max(prev, e)
	cur := c.rec.CurrentEpoch()
	note := e < cur && mm.to == highest
	switch {
	case e < cur && mm.to == checking:
		return &Violation{CheckingCurrent, fmt.Sprintf("the %s applied %s@%d with the record at %d", serverNames[checking], nodeNames[mm.from], e, cur)}, false, true
	case e < prev:
		return &Violation{ServerOrder, fmt.Sprintf("the %s applied a write at %d after one at %d", serverNames[mm.to], e, prev)}, note, true
	case c.ownerAt[slot(e)] != mm.from+1:
		// One writer per epoch: a write at e must come from the node that
		// owned e (a token is only ever taken from the record by its owner).
		return &Violation{OneMutator, fmt.Sprintf("the %s applied a write at epoch %d from %s, which never owned it", serverNames[mm.to], e, nodeNames[mm.from])}, note, true
	}
	return nil, note, true
}

// checkState checks the invariants of one state.
func (m *model) checkState(s *State) *Violation {
	cur := s.rec.CurrentEpoch()
	mutators := 0
	for i := 0; i < m.b.Nodes; i++ {
		e := s.nodes[i].token
		if e == 0 {
			continue
		}
		tok := ownership.Token{Actor: actorID, Epoch: e, Holder: nodeNames[i]}
		if s.rec.MayMutate(tok) {
			mutators++
		}
		if e < cur && (s.rec.MayMutate(tok) || ownership.ValidFence(s.rec.State(), e)) {
			return &Violation{StaleInert, fmt.Sprintf("%v below the current epoch %d still counts", tok, cur)}
		}
	}
	if mutators > 1 {
		return &Violation{OneMutator, fmt.Sprintf("%d nodes may mutate in %v", mutators, s.rec.State())}
	}
	return nil
}
