package service

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/ownership-book/ownership/examples/ownership"
)

// FenceChecker answers the fence check for a token. *Client implements it
// by asking the ownership service (PathValidate).
type FenceChecker interface {
	Validate(ctx context.Context, t ownership.Token) (Validity, error)
}

// ErrFenced is matched by the error of a write refused by the fence check.
var ErrFenced = errors.New("write refused by the fence check")

// FencedError reports a write whose token failed the fence check: Actor is
// the actor the store belongs to, Token what the writer presented, Validity
// what the ownership service answered (zero when the token is for another
// actor and the service was not asked). It matches ErrFenced.
type FencedError struct {
	Key      string
	Actor    ownership.ActorID
	Token    ownership.Token
	Validity Validity
}

func (e *FencedError) Error() string {
	if e.Token.Actor != e.Actor {
		return fmt.Sprintf("put %q with %v: the token is for actor %s, and this store belongs to actor %s", e.Key, e.Token, e.Token.Actor, e.Actor)
	}
	if !e.Validity.Valid {
		return fmt.Sprintf("put %q with %v: epoch %d is stale, the current epoch of %s is %d", e.Key, e.Token, e.Token.Epoch, e.Token.Actor, e.Validity.CurrentEpoch)
	}
	return fmt.Sprintf("put %q with %v: the ownership service never issued this token", e.Key, e.Token)
}

// Is makes errors.Is(err, ErrFenced) true.
func (e *FencedError) Is(target error) bool { return target == ErrFenced }

// Entry is a stored value and the token of the write that stored it.
type Entry struct {
	Value string
	Token ownership.Token
}

// ANCHOR: store

// Store is a resource server: a small key-value store written by whoever
// owns one actor. Built by NewStore, it checks every write the way a Chubby
// server checks a sequencer: the writer's token must be for the store's
// actor, and the ownership service must answer that it passes ValidFence
// for that actor and was issued; otherwise the write is refused. Built by
// NewUncheckedStore, it trusts any token, which is what the demonstration
// needs to show what goes wrong.
//
// Put is safe for concurrent use. The check and the write are one critical
// section, so no write checked against an older state lands after a write
// checked against a newer one.
//
// The check fences out the late, not the dishonest: a Token is plain data,
// and Put believes that whoever presents one is its holder. A store on the
// network would take the writer from its connection, as Server does, and
// also require writer == Token.Holder.
type Store struct {
	mu    sync.Mutex
	actor ownership.ActorID
	check FenceChecker // nil: no check
	data  map[string]Entry
}

// NewStore returns an empty store for actor that checks each write's token
// with c.
func NewStore(actor ownership.ActorID, c FenceChecker) *Store {
	return &Store{actor: actor, check: c, data: map[string]Entry{}}
}

// NewUncheckedStore returns an empty store that accepts every write.
func NewUncheckedStore() *Store { return &Store{data: map[string]Entry{}} }

// Put stores value under key on behalf of the holder of t. Errors: a
// *FencedError if t is for another actor or fails the fence check (nothing
// is written); the checker's error if the check could not be made, for
// example with the ownership service unreachable (nothing is written: the
// store fails closed).
func (s *Store) Put(ctx context.Context, t ownership.Token, key, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.check != nil {
		if t.Actor != s.actor {
			return &FencedError{Key: key, Actor: s.actor, Token: t}
		}
		v, err := s.check.Validate(ctx, t)
		if err != nil {
			return fmt.Errorf("put %q with %v: fence check: %w", key, t, err)
		}
		if !v.Issued {
			return &FencedError{Key: key, Actor: s.actor, Token: t, Validity: v}
		}
	}
	s.data[key] = Entry{Value: value, Token: t}
	return nil
}

// ANCHOR_END: store

// Get returns the entry under key and whether there is one.
func (s *Store) Get(key string) (Entry, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.data[key]
	return e, ok
}
