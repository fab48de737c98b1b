package service

import (
	"context"
	"sync"

	"github.com/ownership-book/ownership/examples/ownership"
)

// LocalRegistry is a registry in one process, serialised by a mutex. Owner
// records live in memory and are lost when the process stops; the epoch
// Floor is on disk and survives. An actor forgotten in a
// restart is created again above its floor, so the epochs of its new life
// are above every epoch of its old one: the restart acts as a revoke of
// whoever held it, which is the safe direction.
//
// Use a RaftRegistry when the owner record itself must survive.
type LocalRegistry struct {
	mu    sync.Mutex
	t     *table
	floor *Floor
	hook  Hook
}

// NewLocalRegistry returns an empty registry that burns epochs in floor.
// hook, if not nil, is called at the registry's crash points (PointBeforeBurn,
// PointBurned, PointPublished); pass the same hook to OpenFloor for the points
// inside a burn.
func NewLocalRegistry(floor *Floor, hook Hook) *LocalRegistry {
	return &LocalRegistry{t: newTable(), floor: floor, hook: hook}
}

// ANCHOR: local_apply

// Apply performs req. When the transition allocates an epoch (Create,
// BeginTransfer, Abort, Revoke) it burns that epoch in the floor first, and
// only then makes the new state visible. A crash between the two loses an
// epoch nobody saw: the next life starts above it, which skips it. A burn
// that fails refuses the transition; a retry burns the same epoch again, so
// an epoch is visible only once the file holds it.
func (r *LocalRegistry) Apply(_ context.Context, req Request) (Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	next, res, err := r.t.prepare(req, r.floor.Get(req.Actor))
	if err != nil {
		return Result{}, err
	}
	r.t.commit(next) // visible from here on
	if e := next.CurrentEpoch(); e > r.floor.Durable(req.Actor) {
		r.at(PointBeforeBurn)
		if err := r.floor.Burn(req.Actor, e); err != nil {
			return Result{}, ruleError(req.Op, err)
		}
		r.at(PointBurned)
	}
	r.at(PointPublished)
	return res, nil
}

// ANCHOR_END: local_apply

// Read returns a copy of actor's record, or an *Error with CodeUnknownActor.
func (r *LocalRegistry) Read(_ context.Context, actor ownership.ActorID) (*ownership.Actor, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.t.read(actor)
}

func (r *LocalRegistry) at(p CrashPoint) {
	if r.hook != nil {
		r.hook(p)
	}
}
