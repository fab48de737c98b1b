package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/ownership-book/ownership/examples/ownership"
	"github.com/ownership-book/ownership/examples/replica"
)

// ANCHOR: machine

// Machine is the owner record as a replicated state machine (a
// replica.Machine). Each Raft log entry is one JSON-encoded Request; Apply
// runs it through the same table as LocalRegistry and returns the outcome,
// so every voter applies the same transitions in the same order and refuses
// the same requests with the same *Error. An entry is applied only after a
// quorum has stored it, so a transition is durable before it is visible on
// any voter: the log is the epoch floor, and committing the entry is the burn.
type Machine struct {
	mu sync.RWMutex
	t  *table
}

// NewMachine returns an empty owner record.
func NewMachine() *Machine { return &Machine{t: newTable()} }

// Apply applies one log entry (a JSON Request) and returns a JSON outcome.
// It never panics on bad input: an entry it cannot decode is refused as
// malformed, identically on every voter.
func (m *Machine) Apply(cmd []byte) []byte {
	var req Request
	var out outcome
	if err := json.Unmarshal(cmd, &req); err != nil {
		out.Error = malformed("log entry: %v", err)
		return mustJSON(out)
	}
	m.mu.Lock()
	next, res, err := m.t.prepare(req, 0)
	if err == nil {
		m.t.commit(next)
	}
	m.mu.Unlock()
	if err != nil {
		out.Error = ruleError(req.Op, err)
		return mustJSON(out)
	}
	w := ToWire(res.State)
	out.State, out.Token = &w, res.Token
	return mustJSON(out)
}

// ANCHOR_END: machine

// outcome is the result of one applied entry, as Group.Apply returns it.
type outcome struct {
	State *WireState      `json:"state,omitempty"`
	Token ownership.Token `json:"token"`
	Error *Error          `json:"error,omitempty"`
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // the outcome types always encode
	}
	return b
}

// Snapshot returns every actor's record (deterministic JSON).
func (m *Machine) Snapshot() ([]byte, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.t.marshal()
}

// Restore replaces the record with a Snapshot's.
func (m *Machine) Restore(snapshot []byte) error {
	t, err := unmarshalTable(snapshot)
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.t = t
	m.mu.Unlock()
	return nil
}

// Read returns a copy of actor's record as this voter has applied it. For a
// linearizable read, call it after Group.LeaderRead (RaftRegistry.Read does).
func (m *Machine) Read(actor ownership.ActorID) (*ownership.Actor, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.t.read(actor)
}

// Actors returns a copy of every actor's record, sorted by name.
func (m *Machine) Actors() []*ownership.Actor {
	m.mu.RLock()
	defer m.mu.RUnlock()
	b, err := m.t.marshal()
	if err != nil {
		return nil
	}
	t, err := unmarshalTable(b)
	if err != nil {
		return nil
	}
	var out []*ownership.Actor
	for _, a := range t.actors {
		out = append(out, a)
	}
	return sortActors(out)
}

// Proposer is the part of a *replica.Group a RaftRegistry uses.
type Proposer interface {
	Apply(ctx context.Context, cmd []byte) ([]byte, error)
	LeaderRead(ctx context.Context) error
}

// RaftRegistry is a Registry whose owner record is replicated by Raft: one
// voter's view. Apply proposes the transition as one log entry and returns
// once a quorum has stored it and this voter has applied it; Read confirms
// leadership first. On a voter that is not the leader both return an *Error
// with CodeNotLeader (nothing was proposed).
type RaftRegistry struct {
	g Proposer
	m *Machine
}

// NewRaftRegistry returns the registry of the voter g, whose Machine is m.
func NewRaftRegistry(g Proposer, m *Machine) *RaftRegistry { return &RaftRegistry{g: g, m: m} }

// ANCHOR: raft_apply

// Apply proposes req as one log entry. The transition is visible (to Read,
// on any voter) only after the entry is committed, that is, stored on a
// quorum of voters' disks; a caller that got a Result holds a transition
// that every future leader has (Raft's Leader Completeness, Ongaro and
// Ousterhout, 2014, section 5.4).
func (r *RaftRegistry) Apply(ctx context.Context, req Request) (Result, error) {
	cmd, err := json.Marshal(req)
	if err != nil {
		return Result{}, malformed("request: %v", err)
	}
	b, err := r.g.Apply(ctx, cmd)
	if err != nil {
		return Result{}, raftError(err)
	}
	var out outcome
	if err := json.Unmarshal(b, &out); err != nil {
		return Result{}, fmt.Errorf("decoding outcome: %w", err)
	}
	if out.Error != nil {
		return Result{}, out.Error
	}
	s, err := out.State.State()
	if err != nil {
		return Result{}, err
	}
	return Result{State: s, Token: out.Token}, nil
}

// ANCHOR_END: raft_apply

// Read confirms that this voter leads (and has applied every acknowledged
// entry) and returns a copy of actor's record.
func (r *RaftRegistry) Read(ctx context.Context, actor ownership.ActorID) (*ownership.Actor, error) {
	if err := r.g.LeaderRead(ctx); err != nil {
		return nil, raftError(err)
	}
	return r.m.Read(actor)
}

// ruleTransfer is the rule of the refusal a leader gives while it hands its
// leadership over; writeError answers it 503 with Retry-After.
const ruleTransfer = "a leader handing its leadership to another voter proposes nothing until the transfer ends"

func raftError(err error) *Error {
	var nl *replica.NotLeaderError
	switch {
	case errors.Is(err, replica.ErrLeadershipTransfer):
		return &Error{Code: CodeUnavailable, Rule: ruleTransfer, Detail: err.Error() + "; nothing was proposed: retry after Retry-After seconds"}
	case errors.As(err, &nl):
		return &Error{Code: CodeNotLeader, Rule: "transitions and reads go to the Raft leader", Detail: nl.Error(), Leader: nl.Leader}
	case errors.Is(err, replica.ErrOutcomeUnknown):
		return &Error{Code: CodeUnavailable, Rule: "a transition is acknowledged only once a quorum stored it", Detail: err.Error() + "; read the state before retrying"}
	case errors.Is(err, replica.ErrClosed):
		return &Error{Code: CodeNotLeader, Rule: "transitions and reads go to the Raft leader", Detail: err.Error()}
	}
	return &Error{Code: CodeUnavailable, Rule: "a transition is acknowledged only once a quorum stored it", Detail: err.Error()}
}
