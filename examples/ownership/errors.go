package ownership

import (
	"errors"
	"fmt"
)

// Op names a transition of the state machine. Errors name the Op that was
// refused, and a Command carries one.
type Op string

// The transitions. BeginTransfer, CompleteRelease and Acquire are requested by
// a node, which passes its own NodeID as the caller; Abort and Revoke are the
// coordinator's own transitions and take no caller.
const (
	OpBeginTransfer   Op = "BeginTransfer"
	OpCompleteRelease Op = "CompleteRelease"
	OpAcquire         Op = "Acquire"
	OpAbort           Op = "Abort"
	OpRevoke          Op = "Revoke"
)

// Sentinel errors, for errors.Is. Each typed error below matches one of them.
var (
	// ErrWrongNode: the caller is not the node the transition requires.
	ErrWrongNode = errors.New("wrong node")
	// ErrWrongState: the transition is not defined in the current state.
	ErrWrongState = errors.New("wrong state")
	// ErrStaleEpoch: an epoch older than the current epoch was presented.
	ErrStaleEpoch = errors.New("stale epoch")
	// ErrInvalidNode: a NodeID argument is empty or names an impossible target.
	ErrInvalidNode = errors.New("invalid node")
	// ErrInvalidState: a State (or a decoded Actor) breaks a shape rule.
	ErrInvalidState = errors.New("invalid state")
	// ErrEpochExhausted: the transition would allocate an epoch past MaxEpoch.
	ErrEpochExhausted = errors.New("epoch space exhausted")
	// ErrUnknownToken: a Token that this actor never issued.
	ErrUnknownToken = errors.New("token was never issued")
)

// WrongNodeError reports a transition requested by a node other than the one
// the state machine requires: the owner for BeginTransfer, the outgoing owner
// (From) for CompleteRelease, the intended owner for Acquire, the owner for a
// Token check. It matches ErrWrongNode.
type WrongNodeError struct {
	Op       Op
	Caller   NodeID // the node that asked
	Required NodeID // the only node that may ask
	Role     string // what Required is: "owner", "outgoing owner", "intended owner"
}

func (e *WrongNodeError) Error() string {
	return fmt.Sprintf("%s: caller %s is not the %s %s", e.Op, e.Caller, e.Role, e.Required)
}

// Is makes errors.Is(err, ErrWrongNode) true.
func (e *WrongNodeError) Is(target error) bool { return target == ErrWrongNode }

// WrongStateError reports a transition that is not defined in State (for
// example CompleteRelease while Owned). It matches ErrWrongState.
type WrongStateError struct {
	Op    Op
	State State
}

func (e *WrongStateError) Error() string {
	return fmt.Sprintf("%s: not allowed in %v", e.Op, e.State)
}

// Is makes errors.Is(err, ErrWrongState) true.
func (e *WrongStateError) Is(target error) bool { return target == ErrWrongState }

// StaleEpochError reports an epoch (Given) that is not the actor's current
// epoch (Current) where the current one is required: a token or fence epoch
// older than the current one, a token whose epoch no longer carries
// authority, or a Command issued at another epoch than the current one
// (older: overtaken; newer: an epoch that does not exist yet). It matches
// ErrStaleEpoch.
type StaleEpochError struct {
	Given, Current Epoch
}

func (e *StaleEpochError) Error() string {
	if e.Given > e.Current {
		return fmt.Sprintf("epoch %d does not exist yet: the current epoch is %d", e.Given, e.Current)
	}
	return fmt.Sprintf("epoch %d is stale: the current epoch is %d", e.Given, e.Current)
}

// Is makes errors.Is(err, ErrStaleEpoch) true.
func (e *StaleEpochError) Is(target error) bool { return target == ErrStaleEpoch }

// InvalidNodeError reports a NodeID argument that cannot be used: empty, or a
// transfer to the node that already owns the actor. It matches ErrInvalidNode.
type InvalidNodeError struct {
	Op     Op
	Node   NodeID
	Reason string
}

func (e *InvalidNodeError) Error() string {
	return fmt.Sprintf("%s: node %q: %s", e.Op, e.Node, e.Reason)
}

// Is makes errors.Is(err, ErrInvalidNode) true.
func (e *InvalidNodeError) Is(target error) bool { return target == ErrInvalidNode }

// InvalidStateError reports a State, or a decoded Actor, that breaks a shape
// rule (see Validate). It matches ErrInvalidState.
type InvalidStateError struct {
	State  State
	Reason string
}

func (e *InvalidStateError) Error() string {
	return fmt.Sprintf("invalid state %v: %s", e.State, e.Reason)
}

// Is makes errors.Is(err, ErrInvalidState) true.
func (e *InvalidStateError) Is(target error) bool { return target == ErrInvalidState }
