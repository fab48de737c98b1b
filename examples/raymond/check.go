package raymond

import (
	"errors"
	"fmt"
	"slices"
)

// Violation errors, one per invariant, for errors.Is. Check wraps them with
// the nodes and messages involved.
var (
	ErrTwoUsing        = errors.New("more than one node USING")
	ErrPrivilegeCount  = errors.New("not exactly one privilege")
	ErrQueueDuplicate  = errors.New("a node appears twice in one REQUEST_Q")
	ErrHolderPath      = errors.New("HOLDER pointers do not lead to the privilege")
	ErrHolderNotAdjoin = errors.New("HOLDER is neither the node itself nor a neighbour")
)

// Check tests the paper's safety invariants on a global state: the nodes and
// the messages in flight. It returns nil, or the first broken invariant
// wrapped with what broke it:
//
//   - at most one node is USING (ErrTwoUsing);
//   - exactly one privilege exists, counting privileged nodes (HOLDER = self)
//     and PRIVILEGE messages in flight (ErrPrivilegeCount);
//   - no REQUEST_Q holds a node twice (ErrQueueDuplicate);
//   - every HOLDER is the node itself or a tree neighbour
//     (ErrHolderNotAdjoin), and following HOLDER from any node reaches the
//     privileged node, or the destination of the PRIVILEGE in flight, in at
//     most N-1 hops (ErrHolderPath). While a PRIVILEGE travels from X to Y,
//     X already points at Y and Y still points at X: that two-cycle is the
//     only one allowed, and the walk stops at Y.
//
// Reference: Raymond 1989, the HOLDER variables and the proof of mutual
// exclusion.
func Check(t Tree, nodes []Node, inflight []Message) error {
	var using []NodeID
	tokens := 0
	var dest []NodeID
	for _, n := range nodes {
		if n.Using {
			using = append(using, n.ID)
		}
		if n.Privileged() {
			tokens++
		}
		if n.Holder != n.ID && !t.Adjacent(n.ID, n.Holder) {
			return fmt.Errorf("%w: %v", ErrHolderNotAdjoin, n)
		}
		seen := map[NodeID]bool{}
		for _, x := range n.RequestQ {
			if seen[x] {
				return fmt.Errorf("%w: %v", ErrQueueDuplicate, n)
			}
			seen[x] = true
		}
	}
	for _, m := range inflight {
		if m.Kind == Privilege {
			tokens++
			dest = append(dest, m.To)
		}
	}
	if len(using) > 1 {
		return fmt.Errorf("%w: %v", ErrTwoUsing, using)
	}
	if tokens != 1 {
		return fmt.Errorf("%w: %d (privileged nodes and PRIVILEGE messages)", ErrPrivilegeCount, tokens)
	}
	for _, n := range nodes {
		x := n
		for hops := 0; ; hops++ {
			if x.Privileged() || slices.Contains(dest, x.ID) {
				break
			}
			if hops >= len(nodes) {
				return fmt.Errorf("%w: from %s", ErrHolderPath, n.ID)
			}
			x = nodes[x.Holder]
		}
	}
	return nil
}
