package service

import (
	"errors"
	"fmt"

	"github.com/ownership-book/ownership/examples/ownership"
)

// Sentinel errors of the service, for errors.Is. An *Error with the matching
// Code matches each; so do the ownership package's own sentinels
// (ownership.ErrWrongNode, ErrStaleEpoch, ErrWrongState, ErrInvalidNode,
// ErrEpochExhausted) for the codes that come from the state machine.
var (
	// ErrMalformed: a request that is not one JSON object with exactly the
	// method's fields, or a field with an impossible value.
	ErrMalformed = errors.New("malformed request")
	// ErrUnknownActor: no actor of that name was created.
	ErrUnknownActor = errors.New("unknown actor")
	// ErrWrongEpoch: an epoch newer than the one the caller's role holds.
	ErrWrongEpoch = errors.New("wrong epoch")
	// ErrActorExists: Create for an actor the registry already holds.
	ErrActorExists = errors.New("actor exists")
	// ErrNotLeader: the voter that got the request is not the Raft leader.
	ErrNotLeader = errors.New("not the leader")
	// ErrUnknownMethod: a path that is not one of the wire methods.
	ErrUnknownMethod = errors.New("unknown method")
	// ErrUnavailable: the registry could not commit or read (no quorum,
	// shutting down, disk error). The transition may or may not have
	// happened; read the state before retrying.
	ErrUnavailable = errors.New("registry unavailable")
)

// Code names the rule family of an *Error on the wire.
type Code string

// The codes an *Error can carry.
const (
	CodeMalformed     Code = "malformed"
	CodeUnknownActor  Code = "unknown-actor"
	CodeWrongCaller   Code = "wrong-caller"
	CodeStaleEpoch    Code = "stale-epoch"
	CodeWrongEpoch    Code = "wrong-epoch"
	CodeWrongState    Code = "wrong-state"
	CodeInvalidNode   Code = "invalid-node"
	CodeExhausted     Code = "epoch-exhausted"
	CodeActorExists   Code = "actor-exists"
	CodeNotLeader     Code = "not-leader"
	CodeUnavailable   Code = "unavailable"
	CodeUnknownMethod Code = "unknown-method"
)

var codeSentinel = map[Code]error{
	CodeMalformed:     ErrMalformed,
	CodeUnknownActor:  ErrUnknownActor,
	CodeWrongCaller:   ownership.ErrWrongNode,
	CodeStaleEpoch:    ownership.ErrStaleEpoch,
	CodeWrongEpoch:    ErrWrongEpoch,
	CodeWrongState:    ownership.ErrWrongState,
	CodeInvalidNode:   ownership.ErrInvalidNode,
	CodeExhausted:     ownership.ErrEpochExhausted,
	CodeActorExists:   ErrActorExists,
	CodeNotLeader:     ErrNotLeader,
	CodeUnavailable:   ErrUnavailable,
	CodeUnknownMethod: ErrUnknownMethod,
}

// ANCHOR: error

// Error is a refused request, as the server sends it and the client returns
// it: Code is the family, Rule the sentence of the rule that was broken, and
// Detail names the input (actor, caller, epoch). A refused request changed no
// state. Leader, for CodeNotLeader only, names the voter that leads, if known.
type Error struct {
	Code   Code   `json:"code"`
	Rule   string `json:"rule"`
	Detail string `json:"detail"`
	Leader string `json:"leader,omitempty"`
}

// ANCHOR_END: error

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s (rule: %s)", e.Code, e.Detail, e.Rule)
}

// Is matches the sentinel of e's Code (see the Code constants).
func (e *Error) Is(target error) bool {
	s, ok := codeSentinel[e.Code]
	return ok && s == target
}

func malformed(format string, args ...any) *Error {
	return &Error{Code: CodeMalformed, Rule: "a request is one JSON object with exactly its method's fields", Detail: fmt.Sprintf(format, args...)}
}

// notOnRoster refuses node as an intended owner (Create, Revoke).
func notOnRoster(node ownership.NodeID) *Error {
	return &Error{Code: CodeInvalidNode, Rule: "an intended owner is a node on the roster",
		Detail: fmt.Sprintf("node %q is not on the roster", string(node))}
}

func unknownActor(a ownership.ActorID) *Error {
	return &Error{Code: CodeUnknownActor, Rule: "an actor exists only once the coordinator has created it", Detail: fmt.Sprintf("actor %q", string(a))}
}

// EpochError reports a request whose epoch is not the one its caller's role
// holds: the owner's epoch for BeginTransfer, the outgoing owner's (old)
// epoch for CompleteRelease, the free epoch for Acquire. Given below Want is
// stale; above it is an epoch never issued to the caller.
type EpochError struct {
	Op          ownership.Op
	Actor       ownership.ActorID
	Given, Want ownership.Epoch
}

func (e *EpochError) Error() string {
	return fmt.Sprintf("%s on actor %s at epoch %d: the caller's epoch is %d", e.Op, e.Actor, e.Given, e.Want)
}

// Is makes errors.Is(err, ownership.ErrStaleEpoch) true when Given < Want and
// errors.Is(err, ErrWrongEpoch) true when Given > Want.
func (e *EpochError) Is(target error) bool {
	if e.Given < e.Want {
		return target == ownership.ErrStaleEpoch
	}
	return target == ErrWrongEpoch
}

var wrongNodeRule = map[ownership.Op]string{
	ownership.OpBeginTransfer:   "only the owner may begin a transfer",
	ownership.OpCompleteRelease: "only the outgoing owner may complete the release",
	ownership.OpAcquire:         "only the intended owner may acquire",
}

var wrongStateRule = map[ownership.Op]string{
	ownership.OpBeginTransfer:   "a transfer begins only from Owned",
	ownership.OpCompleteRelease: "a release completes only from Transferring",
	ownership.OpAcquire:         "an actor is acquired only from Unowned",
	ownership.OpAbort:           "only a transfer in progress can be aborted",
	ownership.OpRevoke:          "revoke applies in every state",
}

// ruleError turns an error of the state machine (or of this package) into an
// *Error naming its rule. Other errors become CodeUnavailable.
func ruleError(op ownership.Op, err error) *Error {
	var (
		se *Error
		wn *ownership.WrongNodeError
		ws *ownership.WrongStateError
		in *ownership.InvalidNodeError
		ee *EpochError
	)
	switch {
	case errors.As(err, &se):
		return se
	case errors.As(err, &ee):
		code, rule := CodeWrongEpoch, "a request carries the epoch its caller holds; a newer one was never issued to it"
		if ee.Given < ee.Want {
			code, rule = CodeStaleEpoch, "a request carries the epoch its caller holds; an older one is stale"
		}
		return &Error{Code: code, Rule: rule, Detail: ee.Error()}
	case errors.As(err, &wn):
		return &Error{Code: CodeWrongCaller, Rule: wrongNodeRule[op], Detail: wn.Error()}
	case errors.As(err, &ws):
		return &Error{Code: CodeWrongState, Rule: wrongStateRule[op], Detail: ws.Error()}
	case errors.As(err, &in):
		return &Error{Code: CodeInvalidNode, Rule: "a transfer names another node on the roster", Detail: in.Error()}
	case errors.Is(err, ownership.ErrEpochExhausted):
		return &Error{Code: CodeExhausted, Rule: "an epoch is never reused, so none is left after the largest", Detail: err.Error()}
	}
	return &Error{Code: CodeUnavailable, Rule: "a transition is visible only once it is durable", Detail: err.Error()}
}
