package raymond

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// NodeID names a node of the tree: 0, 1, 2, ... printed as A, B, C, ... (and
// as n26, n27, ... from the 27th node on).
type NodeID int

// String returns the node's name: A..Z for 0..25, n26 and so on after that.
func (id NodeID) String() string {
	if id >= 0 && id < 26 {
		return string(rune('A' + id))
	}
	return fmt.Sprintf("n%d", int(id))
}

// Kind is the kind of a message: REQUEST or PRIVILEGE.
type Kind uint8

// The paper's two messages. A REQUEST asks the neighbour it is sent to for
// the privilege on behalf of the sender's REQUEST_Q; a PRIVILEGE hands the
// privilege itself to the neighbour.
const (
	Request Kind = iota + 1
	Privilege
)

// String returns REQUEST or PRIVILEGE.
func (k Kind) String() string {
	switch k {
	case Request:
		return "REQUEST"
	case Privilege:
		return "PRIVILEGE"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Message is one message between tree neighbours.
type Message struct {
	Kind     Kind
	From, To NodeID
}

// String formats m as REQUEST(B->A).
func (m Message) String() string { return fmt.Sprintf("%s(%s->%s)", m.Kind, m.From, m.To) }

// ANCHOR: node

// Node is one node's state, in the paper's four variables (Raymond 1989,
// the algorithm's data structures).
type Node struct {
	ID NodeID
	// HOLDER: the node itself if it holds the privilege, otherwise the
	// neighbour in the direction of the privilege.
	Holder NodeID
	// USING: the node is in its critical section.
	Using bool
	// REQUEST_Q: the nodes (the node itself or neighbours) that asked this
	// node for the privilege and have not been sent it, oldest first.
	RequestQ []NodeID
	// ASKED: this node has sent a REQUEST to its HOLDER for the head of its
	// queue and has not received the privilege since.
	Asked bool
}

// ANCHOR_END: node

// Privileged reports whether n holds the privilege (HOLDER = self).
func (n Node) Privileged() bool { return n.Holder == n.ID }

// Wants reports whether n has a request of its own outstanding: it is in its
// own REQUEST_Q.
func (n Node) Wants() bool { return slices.Contains(n.RequestQ, n.ID) }

// Clone returns a copy of n that shares no memory with it.
func (n Node) Clone() Node {
	n.RequestQ = slices.Clone(n.RequestQ)
	return n
}

// String formats n as A{HOLDER=B USING=false REQUEST_Q=[A C] ASKED=true}.
func (n Node) String() string {
	q := make([]string, len(n.RequestQ))
	for i, x := range n.RequestQ {
		q[i] = x.String()
	}
	return fmt.Sprintf("%s{HOLDER=%s USING=%t REQUEST_Q=[%s] ASKED=%t}",
		n.ID, n.Holder, n.Using, strings.Join(q, " "), n.Asked)
}

// EventKind is what happens to a node.
type EventKind uint8

// The four events the paper's algorithm handles: the node wishes to enter its
// critical section, it leaves it, a REQUEST arrives, a PRIVILEGE arrives.
const (
	Want EventKind = iota + 1
	Exit
	ReceiveRequest
	ReceivePrivilege
)

// String returns the event's name.
func (k EventKind) String() string {
	switch k {
	case Want:
		return "Want"
	case Exit:
		return "Exit"
	case ReceiveRequest:
		return "ReceiveRequest"
	case ReceivePrivilege:
		return "ReceivePrivilege"
	}
	return fmt.Sprintf("EventKind(%d)", uint8(k))
}

// Event is one input to Step. From is the sender of a received message and is
// ignored for Want and Exit.
type Event struct {
	Kind EventKind
	From NodeID
}

// Errors Step returns for events that the paper's rules do not allow. Step
// returns the node unchanged with them.
var (
	// ErrAlreadyWants: Want while the node's own request is outstanding or
	// while it is USING. The paper's node asks for one entry at a time.
	ErrAlreadyWants = errors.New("raymond: node already wants or is using the privilege")
	// ErrNotUsing: Exit while not USING.
	ErrNotUsing = errors.New("raymond: exit while not in the critical section")
	// ErrUnknownEvent: an EventKind that is none of the four.
	ErrUnknownEvent = errors.New("raymond: unknown event")
)

// ANCHOR: step

// Step applies one event to node n and returns its new state and the messages
// it sends, in order. It is a pure function: n is not modified.
//
// Each event does its own small part and then runs ASSIGN_PRIVILEGE and
// MAKE_REQUEST, exactly as the paper's four handlers do (Raymond 1989, the
// algorithm's pseudocode):
//
//	Want:             enqueue self
//	Exit:             USING := false
//	ReceiveRequest:   enqueue the sender
//	ReceivePrivilege: HOLDER := self
//
// Errors: ErrAlreadyWants, ErrNotUsing, ErrUnknownEvent; n is then returned
// unchanged with no messages.
func Step(n Node, ev Event) (Node, []Message, error) {
	n = n.Clone()
	switch ev.Kind {
	case Want:
		if n.Using || n.Wants() {
			return n, nil, fmt.Errorf("%s: %w", n.ID, ErrAlreadyWants)
		}
		n.RequestQ = append(n.RequestQ, n.ID)
	case Exit:
		if !n.Using {
			return n, nil, fmt.Errorf("%s: %w", n.ID, ErrNotUsing)
		}
		n.Using = false
	case ReceiveRequest:
		n.RequestQ = append(n.RequestQ, ev.From)
	case ReceivePrivilege:
		n.Holder = n.ID
	default:
		return n, nil, fmt.Errorf("%s: %v: %w", n.ID, ev.Kind, ErrUnknownEvent)
	}
	var out []Message
	out = assignPrivilege(&n, out)
	out = makeRequest(&n, out)
	return n, out, nil
}

// assignPrivilege is the paper's ASSIGN_PRIVILEGE: a privileged node that is
// not using the privilege hands it to the head of its queue, which may be the
// node itself (it then enters its critical section).
func assignPrivilege(n *Node, out []Message) []Message {
	if n.Holder == n.ID && len(n.RequestQ) > 0 {
		n.Holder = n.RequestQ[0]
		n.RequestQ = n.RequestQ[1:]
		n.Asked = false
		if n.Holder == n.ID {
			n.Using = true
		} else {
			out = append(out, Message{Kind: Privilege, From: n.ID, To: n.Holder})
		}
	}
	return out
}

// makeRequest is the paper's MAKE_REQUEST: a node without the privilege that
// has someone waiting in its queue asks its HOLDER, once.
func makeRequest(n *Node, out []Message) []Message {
	if n.Holder != n.ID && len(n.RequestQ) > 0 && !n.Asked {
		out = append(out, Message{Kind: Request, From: n.ID, To: n.Holder})
		n.Asked = true
	}
	return out
}

// ANCHOR_END: step
