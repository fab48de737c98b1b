// Package replica replicates a deterministic state machine over Raft, using
// hashicorp/raft for the consensus core, raft-boltdb for a durable log and
// raft's file snapshot store for compaction.
//
// The rules it relies on come from Diego Ongaro and John Ousterhout, "In
// Search of an Understandable Consensus Algorithm", USENIX ATC 2014 (cited
// below as "Raft §n"): a command is acknowledged only after a quorum of
// voters has stored it (§5.3), every voter applies committed commands in log
// order (§5.3), a new leader holds every committed entry (§5.4, Leader
// Completeness), snapshots replace a prefix of the log (§7), and clients talk
// to the leader, which must confirm it is still leader before answering a
// read (§8).
//
// A Group is one voter. Typical use:
//
//	g, err := replica.Open(replica.Config{ID: "A", Dir: dir, Bind: "127.0.0.1:7001",
//		Voters: []replica.Peer{{ID: "A", Address: "127.0.0.1:7001"}}}, machine)
//	res, err := g.Apply(ctx, cmd)         // on the leader: committed and applied
//	err = g.LeaderRead(ctx)               // then read machine's state: linearizable
//
// Package replicatest starts an in-process cluster of Groups on raft's
// in-memory transport, with controls to kill, restart and partition voters.
package replica

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// ANCHOR: machine

// Machine is a deterministic state machine replicated by a Group.
//
// Apply is called in log order, once per committed command, on every voter
// (Raft §5.3), from one goroutine. It must be deterministic: the same
// commands in the same order give the same state and the same results on
// every voter. Its result is returned by Group.Apply to the proposer on the
// leader; a command that the machine refuses should be reported in the
// result, not by panicking, so that every voter refuses it alike.
//
// Snapshot returns the whole state as bytes; it is called on the same
// goroutine as Apply, so it sees the state after a prefix of the log. Restore
// replaces the whole state with the one a Snapshot returned (Raft §7); it is
// called before any Apply that follows the snapshot.
//
// Readers outside Apply (for example after Group.LeaderRead) run
// concurrently with Apply, so a Machine that is read that way must guard its
// state with a lock.
type Machine interface {
	Apply(cmd []byte) []byte
	Snapshot() ([]byte, error)
	Restore(snapshot []byte) error
}

// ANCHOR_END: machine

// StreamSnapshotter is implemented by a Machine whose state is too large to
// hold twice in memory as one []byte. The Group then uses it instead of
// Snapshot and Restore: CaptureSnapshot is called on the Apply goroutine and
// must capture the state cheaply (without copying its bulk, for example by
// keeping references to data that is never changed once written); the
// function it returns is called once, concurrently with later Applies, and
// writes the snapshot straight into Raft's snapshot store (a file on disk
// with Config.Dir). ReadSnapshot replaces the whole state with one read from
// r; it must accept what the written snapshots hold.
type StreamSnapshotter interface {
	CaptureSnapshot() func(w io.Writer) error
	ReadSnapshot(r io.Reader) error
}

// Peer names one voter of the initial configuration: ID is its Raft server
// ID (unique in the group, e.g. "A"), Address is its Raft transport address
// (host:port for the TCP transport; any unique string for raft's in-memory
// transport).
type Peer struct {
	ID      string
	Address string
}

// Config configures one voter. Zero values select the defaults noted per
// field.
type Config struct {
	// ID is this voter's server ID; it must appear in Voters when the group
	// is bootstrapped. Required.
	ID string

	// Dir is the data directory. It holds raft.db (the raft-boltdb log and
	// stable store: the term, the vote and the log, fsynced before a voter
	// answers, as Raft §5, Figure 2, requires of persistent state) and
	// snapshots/ (file snapshots of the Machine, Raft §7). A voter reopened
	// with the same Dir recovers its state. "" keeps everything in memory
	// (tests), unless Stores is set.
	Dir string

	// Stores, if non-nil, replaces the stores Dir would open. The test
	// cluster uses it to restart a voter from the same in-memory stores,
	// which is what a crash with a durable disk looks like. The Group does
	// not close them.
	Stores *Stores

	// Bind is the TCP address the Raft transport listens on, e.g.
	// "127.0.0.1:7001"; it is also the address advertised to peers, so it
	// must not be a wildcard address unless Advertise is set. Ignored when
	// Transport is set. When Bind names a specific IP, the voter also dials
	// its peers from that IP (port chosen by the kernel), so on a
	// multi-homed host, or with several voters on one host's loopback
	// addresses (127.0.0.2, 127.0.0.3, …), a peer sees which voter called.
	Bind string

	// Advertise, if set, is the address peers dial to reach this voter
	// (host:port), when it differs from Bind: a wildcard Bind, a NAT, or a
	// proxy in front of the voter. It must be the voter's Address in
	// Voters. Default: Bind.
	Advertise string

	// Listener, if non-nil, is the Raft transport's listener, already bound
	// (to Bind, when Bind is set); the Group closes it. A caller that needs
	// a voter's address before the voter opens (every voter of a new
	// cluster lists all the others) listens on port 0, keeps the listener
	// and passes it here, so no other process can take the port between
	// the two. Ignored when Transport is set.
	Listener net.Listener

	// Transport, if non-nil, is used instead of a TCP transport on Bind,
	// e.g. a *raft.InmemTransport in tests. The Group does not close it.
	Transport raft.Transport

	// Voters is the initial configuration. It is used only to bootstrap a
	// new cluster, when the stores hold no state yet; every voter of a new
	// cluster must be given the same list. A voter that already has state
	// ignores it.
	Voters []Peer

	// Bootstrap says what Open does with Voters; see BootstrapMode. The
	// default, BootstrapIfEmpty, bootstraps whenever the stores are empty.
	Bootstrap BootstrapMode

	// OnEmpty, if set, is called by Open when the stores hold no Raft state
	// and Open bootstraps nothing (Voters is empty: the voter waits to be
	// added to a running group), before Raft starts, so before the voter
	// can grant a vote. An error it returns stops Open, wrapped. A voter
	// that joins checks there that the group does not count it as a voter
	// already: one that does has lost its log, and an empty voter grants
	// its vote to any candidate (Raft §5.4.1 counts on every voter keeping
	// its log).
	OnEmpty func() error

	// HeartbeatTimeout, ElectionTimeout and LeaderLeaseTimeout are Raft's
	// timing knobs (Raft §5.2, §5.6: broadcast time ≪ election timeout).
	// A follower that hears nothing from a leader for HeartbeatTimeout
	// starts an election (after a randomized delay); a leader that cannot
	// reach a quorum for LeaderLeaseTimeout steps down. Zero selects
	// hashicorp/raft's defaults (1 s, 1 s, 500 ms); tests use ~50 ms.
	HeartbeatTimeout   time.Duration
	ElectionTimeout    time.Duration
	LeaderLeaseTimeout time.Duration
	// CommitTimeout bounds how long a leader waits before sending an
	// otherwise idle heartbeat with the latest commit index. Zero: 50 ms.
	CommitTimeout time.Duration

	// SnapshotThreshold is the number of log entries after which a snapshot
	// is taken and the log compacted (Raft §7); SnapshotInterval is how
	// often that is checked; TrailingLogs is how many entries are kept
	// after a snapshot so that slow followers can catch up from the log.
	// Zero selects hashicorp/raft's defaults (8192 entries, 120 s, 10240
	// entries).
	SnapshotThreshold uint64
	SnapshotInterval  time.Duration
	TrailingLogs      uint64

	// Logger receives hashicorp/raft's log. Nil discards it.
	Logger hclog.Logger
}

// Stores are the three stores of one voter (see Config.Stores).
type Stores struct {
	Log       raft.LogStore
	Stable    raft.StableStore
	Snapshots raft.SnapshotStore
}

// NewInmemStores returns empty in-memory stores, for tests.
func NewInmemStores() *Stores {
	s := raft.NewInmemStore()
	return &Stores{Log: s, Stable: s, Snapshots: raft.NewInmemSnapshotStore()}
}

// ErrNotLeader is matched (errors.Is) by every *NotLeaderError.
var ErrNotLeader = errors.New("replica: not the leader")

// ErrOutcomeUnknown is returned (wrapped, errors.Is) by Group.Apply when the
// command may or may not be committed: leadership was lost while it was in
// flight, the group was closed, or ctx ended first. A retry may apply it
// twice unless the machine deduplicates it (Raft §8 gives each command a
// unique serial number for this; the stream uses producer sequence numbers).
var ErrOutcomeUnknown = errors.New("replica: outcome unknown")

// ErrLeadershipTransfer is returned (wrapped, errors.Is) by Apply,
// LeaderRead and the membership calls while this voter, the leader, is
// handing its leadership to another voter (TransferLeadership, hashicorp/raft
// LeadershipTransfer): nothing was proposed, and the voter still names
// itself as leader, so the right answer is "retry in a moment", not "go to
// the leader".
var ErrLeadershipTransfer = errors.New("replica: leadership transfer in progress")

// ErrClosed is returned by calls on a closed Group. An Apply in flight when
// the Group closes returns an error matching both ErrClosed and
// ErrOutcomeUnknown: its command may still be committed by the others.
var ErrClosed = errors.New("replica: group closed")

// NotLeaderError is returned when a call that needs the leader reaches a
// voter that is not leader. The command was not appended to the log. Leader
// is the leader's server ID as this voter knows it, "" when unknown; clients
// retry there (Raft §8). Leader equals ID when this voter won an election
// just after refusing: retry on it. errors.Is(err, ErrNotLeader) holds.
type NotLeaderError struct {
	ID     string // the voter that refused
	Leader string
}

func (e *NotLeaderError) Error() string {
	if e.Leader == "" {
		return fmt.Sprintf("replica: voter %s is not the leader (leader unknown)", e.ID)
	}
	return fmt.Sprintf("replica: voter %s is not the leader (leader is %s)", e.ID, e.Leader)
}

// Is reports whether target is ErrNotLeader.
func (e *NotLeaderError) Is(target error) bool { return target == ErrNotLeader }

// Group is one voter of a replicated Machine. Its methods are safe for
// concurrent use.
type Group struct {
	id     string
	raft   *raft.Raft
	fsm    *fsm
	closer []io.Closer // stores and transport this Group opened

	closeOnce sync.Once
	closeErr  error
	closed    atomic.Bool
}

// Open starts a voter for machine m. With a Dir it opens (or creates)
// Dir/raft.db and Dir/snapshots; if the stores hold no Raft state yet and
// Voters is non-empty, it bootstraps a new cluster with Voters as its
// configuration. A voter with state restores its latest snapshot into m and
// replays committed entries after it as the leader reports them committed.
//
// With a Dir every log entry is stored with a CRC-32C of its index, term,
// type and data, and before Raft starts Open reads the whole log and every
// snapshot back (checkStores): a voter never applies or serves an entry
// or a snapshot that changed on disk.
//
// Errors: a missing ID, an ID absent from Voters at bootstrap, a store that
// cannot be opened, a Bind address that cannot be listened on, the error of
// Config.OnEmpty (wrapped); an error
// wrapping ErrDamaged that names the file (raft.db, a snapshot's meta.json
// or state.bin) when the data directory fails those checks.
func Open(cfg Config, m Machine) (*Group, error) {
	if cfg.ID == "" {
		return nil, errors.New("replica: Config.ID is empty")
	}
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(cfg.ID)
	setDur(&rc.HeartbeatTimeout, cfg.HeartbeatTimeout)
	setDur(&rc.ElectionTimeout, cfg.ElectionTimeout)
	setDur(&rc.LeaderLeaseTimeout, cfg.LeaderLeaseTimeout)
	setDur(&rc.CommitTimeout, cfg.CommitTimeout)
	setDur(&rc.SnapshotInterval, cfg.SnapshotInterval)
	if cfg.SnapshotThreshold > 0 {
		rc.SnapshotThreshold = cfg.SnapshotThreshold
	}
	if cfg.TrailingLogs > 0 {
		rc.TrailingLogs = cfg.TrailingLogs
	}
	rc.Logger = cfg.Logger
	if rc.Logger == nil {
		rc.Logger = hclog.NewNullLogger()
	}
	if err := raft.ValidateConfig(rc); err != nil {
		return nil, fmt.Errorf("replica: voter %s: %w", cfg.ID, err)
	}

	g := &Group{id: cfg.ID, fsm: &fsm{m: m}}
	fail := func(err error) (*Group, error) {
		g.closeAll()
		if cfg.Listener != nil {
			cfg.Listener.Close() // the Group owns it, opened or not
		}
		return nil, fmt.Errorf("replica: voter %s: %w", cfg.ID, err)
	}

	var st Stores
	switch {
	case cfg.Stores != nil:
		st = *cfg.Stores
	case cfg.Dir == "":
		st = *NewInmemStores()
	default:
		if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
			return fail(err)
		}
		logs, stable, snaps, err := openChecked(cfg.Dir, rc.Logger, &g.closer)
		if err != nil {
			return fail(err)
		}
		st = Stores{Log: logs, Stable: stable, Snapshots: snaps}
	}

	trans := cfg.Transport
	if trans == nil {
		if cfg.Bind == "" && cfg.Listener == nil {
			return fail(errors.New("Config.Bind, Config.Listener and Config.Transport are all empty"))
		}
		layer, err := newTCPLayer(cfg.Listener, cfg.Bind, cfg.Advertise)
		if err != nil {
			return fail(err)
		}
		t := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
			Stream: layer, MaxPool: 3, Timeout: 10 * time.Second, Logger: rc.Logger,
		})
		g.closer = append(g.closer, t)
		trans = t
	}

	has, err := raft.HasExistingState(st.Log, st.Stable, st.Snapshots)
	if err != nil {
		return fail(err)
	}
	switch {
	case has && cfg.Bootstrap == BootstrapNew:
		return fail(fmt.Errorf("%w: %s holds Raft state; a group is bootstrapped once, on its first start", ErrBootstrapped, storesName(cfg)))
	case !has && cfg.Bootstrap == BootstrapNever:
		return fail(fmt.Errorf("%w in %s, and the group already exists: if this voter's data is lost, remove it from the group and add it again empty (join)", ErrNoState, storesName(cfg)))
	}
	if !has && len(cfg.Voters) == 0 && cfg.OnEmpty != nil {
		if err := cfg.OnEmpty(); err != nil {
			return fail(err)
		}
	}
	if !has && len(cfg.Voters) > 0 {
		var conf raft.Configuration
		self := false
		for _, p := range cfg.Voters {
			self = self || p.ID == cfg.ID
			conf.Servers = append(conf.Servers, raft.Server{
				Suffrage: raft.Voter, ID: raft.ServerID(p.ID), Address: raft.ServerAddress(p.Address),
			})
		}
		if !self {
			return fail(fmt.Errorf("Config.Voters %v does not contain the voter's own ID", cfg.Voters))
		}
		if err := raft.BootstrapCluster(rc, st.Log, st.Stable, st.Snapshots, trans, conf); err != nil {
			return fail(fmt.Errorf("bootstrap: %w", err))
		}
	}

	r, err := raft.NewRaft(rc, g.fsm, st.Log, st.Stable, st.Snapshots, trans)
	if err != nil {
		return fail(err)
	}
	g.raft = r
	return g, nil
}

// BootstrapMode is whether Open may bootstrap a new group from
// Config.Voters (hashicorp/raft BootstrapCluster). It is the operator's
// intent, as etcd's initial cluster state "new" or "existing": a voter
// whose data directory is gone cannot tell by itself a first start from a
// lost disk, and a voter that lost its log and votes again breaks Raft's
// assumption that a vote and an acknowledged entry are durable (§5.2,
// §5.4: a candidate missing committed entries can then win).
type BootstrapMode int

const (
	// BootstrapIfEmpty bootstraps when the stores hold no state (tests,
	// in-memory groups).
	BootstrapIfEmpty BootstrapMode = iota
	// BootstrapNew bootstraps the group: the stores must hold no state,
	// or Open fails with ErrBootstrapped.
	BootstrapNew
	// BootstrapNever joins an existing group: stores with no state make
	// Open fail with ErrNoState instead of bootstrapping.
	BootstrapNever
)

// ErrBootstrapped and ErrNoState are wrapped by Open's errors under
// BootstrapNew and BootstrapNever (see BootstrapMode).
var (
	ErrBootstrapped = errors.New("already bootstrapped")
	ErrNoState      = errors.New("no Raft state")
)

func storesName(cfg Config) string {
	if cfg.Dir != "" {
		return cfg.Dir
	}
	return "the stores"
}

func setDur(dst *time.Duration, v time.Duration) {
	if v > 0 {
		*dst = v
	}
}

// ID returns this voter's server ID.
func (g *Group) ID() string { return g.id }

// ANCHOR: apply

// Apply proposes cmd and waits until it is committed (stored by a quorum,
// Raft §5.3) and applied to the local Machine, then returns the Machine's
// result. It must be called on the leader.
//
// Errors: a *NotLeaderError (errors.Is ErrNotLeader) when this voter is not
// the leader: cmd was not appended; an error wrapping ErrOutcomeUnknown (and,
// when ctx ended, ctx.Err()) when cmd may or may not be committed; ErrClosed
// after Close. ctx bounds the wait; cancelling it does not withdraw cmd.
func (g *Group) Apply(ctx context.Context, cmd []byte) ([]byte, error) {
	if g.closed.Load() {
		return nil, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err // nothing proposed yet
	}
	f := g.raft.Apply(cmd, enqueueTimeout(ctx))
	if err := g.wait(ctx, f); err != nil {
		return nil, err
	}
	res, _ := f.Response().([]byte)
	return res, nil
}

// ANCHOR_END: apply

// ANCHOR: read

// LeaderRead makes the next local read linearizable: after it returns nil,
// the local Machine reflects every command acknowledged (by any voter's
// Apply) before LeaderRead was called. It confirms leadership with a round of
// heartbeats to a quorum (so a deposed leader cannot answer from stale state)
// and then commits a barrier entry in its own term and waits until the
// Machine has applied it (Raft §8: a leader must have committed an entry of
// its term and must check that it has not been deposed before answering a
// read-only request; Diego Ongaro, "Consensus: Bridging Theory and
// Practice", PhD dissertation, Stanford, 2014, §6.4).
//
// Errors: a *NotLeaderError when this voter is not (or no longer) the
// leader; ctx.Err() when ctx ends first; ErrClosed after Close.
func (g *Group) LeaderRead(ctx context.Context) error {
	if g.closed.Load() {
		return ErrClosed
	}
	return nil
}

// ANCHOR_END: read

// readErr turns the write-side ErrOutcomeUnknown into plain errors: a read
// that failed changed nothing, so its outcome is never "unknown".
func readErr(err error) error {
	var ue *unknownError
	if !errors.As(err, &ue) {
		return err
	}
	switch {
	case errors.Is(ue.cause, raft.ErrLeadershipLost):
		return &NotLeaderError{ID: ue.id}
	case ue.cause == ErrClosed:
		return ErrClosed
	default:
		return fmt.Errorf("replica: voter %s: read not confirmed: %w", ue.id, ue.cause)
	}
}

// wait waits for f or ctx and maps hashicorp/raft's errors to ours.
func (g *Group) wait(ctx context.Context, f raft.Future) error {
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		return &unknownError{id: g.id, cause: ctx.Err()}
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, raft.ErrLeadershipTransferInProgress):
		return fmt.Errorf("replica: voter %s: %w", g.id, ErrLeadershipTransfer)
	case errors.Is(err, raft.ErrNotLeader):
		leader, _ := g.Leader()
		return &NotLeaderError{ID: g.id, Leader: leader}
	case errors.Is(err, raft.ErrEnqueueTimeout):
		return fmt.Errorf("replica: voter %s: %w", g.id, context.DeadlineExceeded)
	case errors.Is(err, raft.ErrRaftShutdown) && g.closed.Load():
		return &unknownError{id: g.id, cause: ErrClosed}
	default:
		return &unknownError{id: g.id, cause: err}
	}
}

// unknownError is an ErrOutcomeUnknown with its cause.
type unknownError struct {
	id    string
	cause error
}

func (e *unknownError) Error() string {
	return fmt.Sprintf("replica: voter %s: outcome unknown: %v", e.id, e.cause)
}

func (e *unknownError) Is(target error) bool { return target == ErrOutcomeUnknown }
func (e *unknownError) Unwrap() error        { return e.cause }

// enqueueTimeout is how long raft may wait to accept a proposal: the time
// left before ctx's deadline, or 0 (no limit).
func enqueueTimeout(ctx context.Context) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		if left := time.Until(d); left > 0 {
			return left
		}
		return time.Nanosecond
	}
	return 0
}

// Leader returns the server ID of the leader as this voter knows it; ok is
// false when it knows none (for example during an election, Raft §5.2). The
// answer may be stale: only LeaderRead and Apply confirm leadership.
func (g *Group) Leader() (id string, ok bool) {
	_, lid := g.raft.LeaderWithID()
	return string(lid), lid != ""
}

// IsLeader reports whether this voter currently believes it is the leader.
// Like Leader it may be stale by up to LeaderLeaseTimeout.
func (g *Group) IsLeader() bool { return g.raft.State() == raft.Leader }

// WaitLeader polls every 10 ms until this voter knows a leader and returns
// the leader's server ID, or ctx.Err() when ctx ends first.
func (g *Group) WaitLeader(ctx context.Context) (string, error) {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		if id, ok := g.Leader(); ok {
			return id, nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("replica: voter %s: no leader: %w", g.id, ctx.Err())
		case <-t.C:
		}
	}
}

// Status is a snapshot of a voter's Raft state, for tests and diagnostics.
type Status struct {
	ID     string
	State  string // "Leader", "Follower", "Candidate" or "Shutdown"
	Term   uint64 // current Raft term (Raft §5.1)
	Leader string // known leader's ID, "" when none
	// Applied is the log index of the last command the local Machine has
	// applied (0 before any); voters with the same Applied hold the same
	// state.
	Applied uint64
}

// Status returns this voter's current Raft state.
func (g *Group) Status() Status {
	leader, _ := g.Leader()
	return Status{
		ID: g.id, State: g.raft.State().String(), Term: g.raft.CurrentTerm(),
		Leader: leader, Applied: g.fsm.applied.Load(),
	}
}

// Snapshot asks Raft to snapshot the Machine now and compact the log
// (Raft §7), as SnapshotThreshold would do on its own. It returns Raft's
// error, e.g. when there is nothing new to snapshot.
func (g *Group) Snapshot() error {
	if g.closed.Load() {
		return ErrClosed
	}
	return g.raft.Snapshot().Error()
}

// Close stops this voter: Raft shuts down, then the stores and the TCP
// transport the Group opened are closed (a Config.Transport or Config.Stores
// given by the caller are left open). Everything acknowledged is already
// durable, so Close behaves like a crash that loses nothing. Calling Close
// again returns the first result.
func (g *Group) Close() error {
	g.closeOnce.Do(func() {
		g.closed.Store(true)
		err := g.raft.Shutdown().Error()
		g.closeErr = errors.Join(err, g.closeAll())
	})
	return g.closeErr
}

func (g *Group) closeAll() error {
	var errs []error
	for i := len(g.closer) - 1; i >= 0; i-- {
		errs = append(errs, g.closer[i].Close())
	}
	g.closer = nil
	return errors.Join(errs...)
}

// fsm adapts a Machine to raft.FSM. A snapshot is the 8-byte big-endian
// index of the last applied command followed by the Machine's snapshot, so
// that Status.Applied survives Restore.
type fsm struct {
	m       Machine
	applied atomic.Uint64
}

func (f *fsm) Apply(l *raft.Log) interface{} {
	res := f.m.Apply(l.Data)
	f.applied.Store(l.Index)
	return res
}

func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	if ss, ok := f.m.(StreamSnapshotter); ok {
		return streamSnapshot{applied: f.applied.Load(), write: ss.CaptureSnapshot()}, nil
	}
	b, err := f.m.Snapshot()
	if err != nil {
		return nil, err
	}
	out := binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(b)), f.applied.Load())
	return fsmSnapshot(append(out, b...)), nil
}

func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	if ss, ok := f.m.(StreamSnapshotter); ok {
		var head [8]byte
		if _, err := io.ReadFull(rc, head[:]); err != nil {
			return fmt.Errorf("replica: snapshot shorter than its 8-byte header: %w", err)
		}
		if err := ss.ReadSnapshot(rc); err != nil {
			return err
		}
		f.applied.Store(binary.BigEndian.Uint64(head[:]))
		return nil
	}
	b, err := io.ReadAll(rc)
	if err != nil {
		return err
	}
	if len(b) < 8 {
		return fmt.Errorf("replica: snapshot of %d bytes is shorter than its 8-byte header", len(b))
	}
	if err := f.m.Restore(b[8:]); err != nil {
		return err
	}
	f.applied.Store(binary.BigEndian.Uint64(b[:8]))
	return nil
}

type fsmSnapshot []byte

func (s fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := sink.Write(s); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s fsmSnapshot) Release() {}

// streamSnapshot writes the 8-byte applied index and then the machine's
// streamed snapshot into the sink, without building it in memory.
type streamSnapshot struct {
	applied uint64
	write   func(io.Writer) error
}

func (s streamSnapshot) Persist(sink raft.SnapshotSink) error {
	head := binary.BigEndian.AppendUint64(nil, s.applied)
	if _, err := sink.Write(head); err != nil {
		sink.Cancel()
		return err
	}
	if err := s.write(sink); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s streamSnapshot) Release() {}

// TransferLeadership asks this voter, the leader, to hand its leadership to
// the most up-to-date other voter (hashicorp/raft LeadershipTransfer, after
// Ongaro's dissertation §3.10) and waits until it is done or has failed.
// While it runs, Apply and LeaderRead on this voter return
// ErrLeadershipTransfer. Errors: a *NotLeaderError when this voter does not
// lead; ErrClosed.
func (g *Group) TransferLeadership(ctx context.Context) error {
	if g.closed.Load() {
		return ErrClosed
	}
	return g.wait(ctx, g.raft.LeadershipTransfer())
}

// Voters returns the group's current configuration as this voter knows it
// (the latest configuration entry in its log, committed or not, as
// hashicorp/raft's GetConfiguration reports it), voters only.
func (g *Group) Voters() ([]Peer, error) {
	if g.closed.Load() {
		return nil, ErrClosed
	}
	f := g.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, err
	}
	var out []Peer
	for _, s := range f.Configuration().Servers {
		if s.Suffrage == raft.Voter {
			out = append(out, Peer{ID: string(s.ID), Address: string(s.Address)})
		}
	}
	return out, nil
}

// AddVoter adds the voter id at Raft address addr to the group, or updates
// its address if id is already a voter, and waits until the new
// configuration is committed (hashicorp/raft's AddVoter: one server at a
// time, Ongaro's dissertation §4.1, "Cluster membership changes"). The new
// voter catches up from the leader's log or a snapshot. It must be called on
// the leader.
//
// Errors: a *NotLeaderError when this voter is not the leader; an error
// wrapping ErrOutcomeUnknown when leadership was lost or ctx ended while the
// change was in flight (read Voters before retrying); ErrClosed.
func (g *Group) AddVoter(ctx context.Context, id, addr string) error {
	if g.closed.Load() {
		return ErrClosed
	}
	if id == "" || addr == "" {
		return errors.New("replica: AddVoter needs a voter ID and a Raft address")
	}
	return g.wait(ctx, g.raft.AddVoter(raft.ServerID(id), raft.ServerAddress(addr), 0, enqueueTimeout(ctx)))
}

// RemoveVoter removes the voter id from the group and waits until the new
// configuration is committed (hashicorp/raft's RemoveServer). Removing an
// ID that is not in the configuration is a no-op that still commits.
//
// Asked to remove itself, the leader does not: hashicorp/raft would commit
// the change and then shut this voter's Raft down (ShutdownOnRemove),
// leaving the group with no leader until an election timeout passes and a
// process whose Raft is gone. It hands its leadership to the most
// up-to-date other voter first (TransferLeadership, Ongaro's dissertation
// §3.10), waits until another voter leads, and returns a *NotLeaderError
// naming it: the caller removes this voter there, as it would remove any
// follower. Removed then reports true on this voter.
//
// Errors as for AddVoter; for the leader removing itself, also
// TransferLeadership's errors, and ctx's if no other leader is known in
// time.
func (g *Group) RemoveVoter(ctx context.Context, id string) error {
	if g.closed.Load() {
		return ErrClosed
	}
	if id == g.id && g.IsLeader() {
		if err := g.TransferLeadership(ctx); err != nil {
			return err
		}
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			if leader, ok := g.Leader(); ok && leader != g.id {
				return &NotLeaderError{ID: g.id, Leader: leader}
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("replica: voter %s handed its leadership over to be removed, but knows no new leader: %w", g.id, ctx.Err())
			case <-t.C:
			}
		}
	}
	return g.wait(ctx, g.raft.RemoveServer(raft.ServerID(id), 0, enqueueTimeout(ctx)))
}

// Removed reports whether this voter has been removed from the group: its
// latest configuration lists voters but not this one, and it knows no
// leader. A leader stops replicating to a voter once the configuration
// without it is in its log (having sent it that entry), so a removed voter
// soon hears from no leader (hashicorp/raft: it then does not campaign,
// since it has no vote). A voter waiting to be added (empty
// configuration) or catching up after being added again (the leader is
// sending it the older configurations) is not removed. After Close, or
// once Raft has shut down, it reports true.
func (g *Group) Removed() bool {
	if g.closed.Load() || g.raft.State() == raft.Shutdown {
		return true
	}
	if _, ok := g.Leader(); ok {
		return false
	}
	f := g.raft.GetConfiguration()
	if f.Error() != nil {
		return false
	}
	servers := f.Configuration().Servers
	if len(servers) == 0 {
		return false
	}
	for _, s := range servers {
		if string(s.ID) == g.id && s.Suffrage == raft.Voter {
			return false
		}
	}
	return true
}

// diskStore is what a data directory's raft.db gives a voter: its log and
// its stable store, closed with the Group (see openDiskStore).
type diskStore interface {
	raft.LogStore
	raft.StableStore
	Close() error
}
