package ownership

import (
	"fmt"
	"math"
)

// NodeID names a node that can own an actor, such as "A" or "B". The empty
// NodeID names no node and is refused wherever a node is required.
type NodeID string

// Epoch numbers grants of authority over one actor. It only goes up: each
// BeginTransfer, Abort and Revoke allocates a new one. It plays the role of
// Chubby's lock generation number and of a fencing token's number.
type Epoch uint64

// MaxEpoch is the largest epoch. A transition that would allocate an epoch
// beyond it fails with ErrEpochExhausted instead of wrapping around to zero.
const MaxEpoch Epoch = math.MaxUint64

// ActorID names the actor (the thing that has at most one owner).
type ActorID string

// ANCHOR: state

// State is the ownership state of one actor. It is exactly one of Owned,
// Transferring or Unowned; the interface is sealed, so no other type can be a
// State. The zero State (nil) is not a valid state.
//
// Reference: chapter "One owner at a time", section "Three shapes".
type State interface {
	fmt.Stringer
	isState()
}

// Owned is the only shape with authority: Owner may mutate the actor at Epoch.
type Owned struct {
	Owner NodeID
	Epoch Epoch
}

// Transferring is the first half of a handover: From agreed to hand the actor
// to To, and NewEpoch (= OldEpoch+1) is already the current epoch. Nobody has
// authority in this shape.
type Transferring struct {
	From, To           NodeID
	OldEpoch, NewEpoch Epoch
}

// Unowned is the second half of a handover (or the result of an Abort or a
// Revoke): the actor is free at Epoch and only IntendedOwner may acquire it.
// Nobody has authority in this shape.
type Unowned struct {
	Epoch         Epoch
	IntendedOwner NodeID
}

// ANCHOR_END: state

func (Owned) isState()        {}
func (Transferring) isState() {}
func (Unowned) isState()      {}

// String formats s as Owned(A, 41), the book's notation.
func (s Owned) String() string { return fmt.Sprintf("Owned(%s, %d)", s.Owner, s.Epoch) }

// String formats s as Transferring(A, B, 41, 42), the book's notation.
func (s Transferring) String() string {
	return fmt.Sprintf("Transferring(%s, %s, %d, %d)", s.From, s.To, s.OldEpoch, s.NewEpoch)
}

// String formats s as Unowned(42, B), the book's notation.
func (s Unowned) String() string { return fmt.Sprintf("Unowned(%d, %s)", s.Epoch, s.IntendedOwner) }

// Validate reports whether s is a shape the transitions can produce: a
// non-nil State whose node names are not empty, a Transferring whose From and
// To differ and whose NewEpoch is OldEpoch+1. It returns nil or an
// *InvalidStateError naming the state and the broken rule.
func Validate(s State) error {
	bad := func(reason string) error { return &InvalidStateError{State: s, Reason: reason} }
	switch s := s.(type) {
	case Owned:
		if s.Owner == "" {
			return bad("owner is empty")
		}
	case Transferring:
		switch {
		case s.From == "" || s.To == "":
			return bad("from and to must name nodes")
		case s.From == s.To:
			return bad("from and to are the same node")
		case s.OldEpoch == MaxEpoch || s.NewEpoch != s.OldEpoch+1:
			return bad("new epoch must be old epoch + 1")
		}
	case Unowned:
		if s.IntendedOwner == "" {
			return bad("intended owner is empty")
		}
	default:
		return bad("not one of Owned, Transferring, Unowned")
	}
	return nil
}
