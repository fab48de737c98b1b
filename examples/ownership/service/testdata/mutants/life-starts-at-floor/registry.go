package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ownership-book/ownership/examples/ownership"
)

// OpCreate is the coordinator's transition that brings a new actor into the
// registry: Unowned at the actor's first epoch (its floor plus one) with a
// chosen intended owner. Like Abort and Revoke it is not on the wire.
const OpCreate ownership.Op = "Create"

// ANCHOR: request

// Request is one transition as the registry applies it. Caller is filled in
// by the server from the connection (never from the request body) for the
// node transitions, and is empty for the coordinator's Create, Abort and
// Revoke. To is the target of BeginTransfer, the next intended owner of
// Revoke and the intended owner of Create. Epoch is the epoch the caller
// holds in its role (node transitions only).
type Request struct {
	Op     ownership.Op      `json:"op"`
	Actor  ownership.ActorID `json:"actor"`
	Caller ownership.NodeID  `json:"caller,omitempty"`
	To     ownership.NodeID  `json:"to,omitempty"`
	Epoch  ownership.Epoch   `json:"epoch,omitempty"`
}

// ANCHOR_END: request

// Result is what a successful transition returns: the actor's new state and,
// for Acquire, the new owner's token.
type Result struct {
	State ownership.State
	Token ownership.Token // zero unless Op is Acquire
}

// Registry holds the owner records. Apply performs one Request atomically:
// either the whole transition is durable and then visible, or nothing
// changes and the error is an *Error naming the rule. Read returns a copy of
// one actor's record as of a moment after every Apply that returned before
// Read was called. Both are safe for concurrent use.
type Registry interface {
	Apply(ctx context.Context, req Request) (Result, error)
	Read(ctx context.Context, actor ownership.ActorID) (*ownership.Actor, error)
}

// table is the registry's state: every actor's record. It is a pure value
// like ownership.Actor; its owner (LocalRegistry, or the Raft FSM) provides
// locking and durability.
type table struct {
	actors map[ownership.ActorID]*ownership.Actor
}

func newTable() *table { return &table{actors: map[ownership.ActorID]*ownership.Actor{}} }

// ANCHOR: prepare

// prepare computes the record req would produce, without changing t. floor
// is the highest epoch ever burnt for the actor (0 if none): a created actor
// starts at floor+1. The checks run in this order: the actor exists; the
// state machine accepts the caller in this state; the caller's epoch is the
// one its role holds.
func (t *table) prepare(req Request, floor ownership.Epoch) (*ownership.Actor, Result, error) {
	if req.Op == OpCreate {
		if err := checkActor(req.Actor); err != nil {
			return nil, Result{}, err
		}
		if _, ok := t.actors[req.Actor]; ok {
			return nil, Result{}, &Error{Code: CodeActorExists, Rule: "an actor is created once", Detail: fmt.Sprintf("actor %q", string(req.Actor))}
		}
		if floor == ownership.MaxEpoch {
			return nil, Result{}, &Error{Code: CodeExhausted, Rule: "an epoch is never reused, so none is left after the largest", Detail: fmt.Sprintf("create %q: its epoch floor is %d, the largest epoch", string(req.Actor), floor)}
		}
		a, err := ownership.NewActor(req.Actor, ownership.Unowned{Epoch: floor, IntendedOwner: req.To})
		if err != nil {
			return nil, Result{}, malformed("create %q: %v", string(req.Actor), err)
		}
		return a, Result{State: a.State()}, nil
	}
	cur, ok := t.actors[req.Actor]
	if !ok {
		return nil, Result{}, unknownActor(req.Actor)
	}
	want, hasEpoch := roleEpoch(req.Op, cur.State())
	next := cur.Clone()
	tok, err := next.Apply(ownership.Command{Op: req.Op, Caller: req.Caller, To: req.To, Epoch: commandEpoch(req, cur.State())})
	var stale *ownership.StaleEpochError
	if errors.As(err, &stale) && hasEpoch {
		err = &EpochError{Op: req.Op, Actor: req.Actor, Given: req.Epoch, Want: want}
	}
	if err != nil {
		return nil, Result{}, ruleError(req.Op, err)
	}
	return next, Result{State: next.State(), Token: tok}, nil
}

// commandEpoch is the epoch of the ownership.Command for req in state s:
// the current epoch as the requester saw it. On the wire a node names the
// epoch its role holds (see roleEpoch), which is the current epoch except
// for CompleteRelease, where it is the epoch the outgoing owner owned, one
// below the transfer's new epoch. The coordinator's transitions are decided
// on the record as it is now, so they carry its current epoch.
func commandEpoch(req Request, s ownership.State) ownership.Epoch {
	switch req.Op {
	case ownership.OpBeginTransfer, ownership.OpAcquire:
		return req.Epoch
	case ownership.OpCompleteRelease:
		if req.Epoch == ownership.MaxEpoch {
			return 0 // no transfer's new epoch is 0, so this is refused
		}
		return req.Epoch + 1
	}
	return ownership.CurrentEpoch(s)
}

// ANCHOR_END: prepare

// roleEpoch returns the epoch a node must present for op in state s, and
// false for the coordinator's transitions, which present none.
func roleEpoch(op ownership.Op, s ownership.State) (ownership.Epoch, bool) {
	switch s := s.(type) {
	case ownership.Owned:
		return s.Epoch, op == ownership.OpBeginTransfer
	case ownership.Transferring:
		return s.OldEpoch, op == ownership.OpCompleteRelease
	case ownership.Unowned:
		return s.Epoch, op == ownership.OpAcquire
	}
	return 0, false
}

func (t *table) commit(a *ownership.Actor) { t.actors[a.ID()] = a }

func (t *table) read(actor ownership.ActorID) (*ownership.Actor, error) {
	a, ok := t.actors[actor]
	if !ok {
		return nil, unknownActor(actor)
	}
	return a.Clone(), nil
}

// marshal encodes t deterministically: a JSON array of actors sorted by name.
func (t *table) marshal() ([]byte, error) {
	out := []json.RawMessage{}
	for _, id := range slices.Sorted(maps.Keys(t.actors)) {
		b, err := t.actors[id].MarshalBinary()
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return json.Marshal(out)
}

func unmarshalTable(data []byte) (*table, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("registry snapshot: %w", err)
	}
	t := newTable()
	for i, r := range raw {
		a := new(ownership.Actor)
		if err := a.UnmarshalBinary(r); err != nil {
			return nil, fmt.Errorf("registry snapshot actor %d: %w", i, err)
		}
		t.actors[a.ID()] = a
	}
	return t, nil
}

func sortActors(as []*ownership.Actor) []*ownership.Actor {
	slices.SortFunc(as, func(a, b *ownership.Actor) int { return strings.Compare(string(a.ID()), string(b.ID())) })
	return as
}
