// Package replicatest runs a cluster of replica.Group voters in one process,
// on hashicorp/raft's in-memory transport, and injects the faults that Raft
// is built to survive (Raft §5: crash-stop of a minority, lost messages,
// network partitions): kill a voter, restart it from its stores, cut links
// between voters and heal them.
//
// Typical use in a test:
//
//	c := replicatest.New(t, replicatest.Options{Voters: 3},
//		func(id string) replica.Machine { return newCounter() })
//	res, err := c.Apply(ctx, cmd)   // on whichever voter is leader
//	leader, _ := c.WaitLeader(ctx)
//	c.Kill(leader)                  // crash-stop; its stores survive
//	c.Isolate("B"); c.Heal()        // partition and heal
//	c.Restart(leader)               // a fresh Machine, restored from the stores
//	c.WaitConverged(ctx)            // every running voter applied the same log
//
// Voters are named "A", "B", "C", … and their transport addresses equal
// their names. New closes the cluster with tb.Cleanup; Start leaves that to
// the caller.
package replicatest

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/ownership-book/ownership/examples/replica"
)

// Options configures a Cluster. Zero values select the defaults noted.
type Options struct {
	// Voters is the number of voters, 1 to 26; default 3.
	Voters int
	// Dir, if non-empty, makes each voter durable in Dir/<ID> (raft-boltdb
	// and file snapshots, as in production); "" keeps each voter's stores
	// in memory, where they survive Kill and Restart like a disk would.
	Dir string
	// Raft timing (see replica.Config). Defaults: HeartbeatTimeout and
	// ElectionTimeout 50 ms, LeaderLeaseTimeout 25 ms (200, 200 and 100 ms
	// with a Dir), CommitTimeout 5 ms.
	HeartbeatTimeout   time.Duration
	ElectionTimeout    time.Duration
	LeaderLeaseTimeout time.Duration
	CommitTimeout      time.Duration
	// Snapshot knobs (see replica.Config); zero: hashicorp/raft defaults.
	SnapshotThreshold uint64
	SnapshotInterval  time.Duration
	TrailingLogs      uint64
	// Logger receives every voter's raft log; nil discards it.
	Logger hclog.Logger
}

// Cluster is an in-process Raft cluster of replica.Groups. Its methods are
// safe for concurrent use, so a fault schedule may run in one goroutine while
// clients run in others.
type Cluster struct {
	opts       Options
	newMachine func(id string) replica.Machine

	mu     sync.Mutex
	ids    []string
	voters map[string]*voter
	cut    map[[2]string]bool // cut[{a,b}] with a<b: no messages between a and b
}

type voter struct {
	id      string
	group   *replica.Group // nil while killed
	machine replica.Machine
	trans   *raft.InmemTransport
	stores  *replica.Stores // nil with Options.Dir
}

// New starts a cluster with Start, registers Close with tb.Cleanup, and
// calls tb.Fatal if a voter cannot start. It does not wait for a leader (see
// WaitLeader).
func New(tb testing.TB, opts Options, newMachine func(id string) replica.Machine) *Cluster {
	tb.Helper()
	c, err := Start(opts, newMachine)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.Close)
	return c
}

// Start starts a cluster of opts.Voters voters, each with a Machine from
// newMachine(id), and bootstraps it with all voters in the configuration.
// The caller must Close it. Errors: a voter count out of range, a voter
// that cannot start (the others are then stopped).
func Start(opts Options, newMachine func(id string) replica.Machine) (*Cluster, error) {
	if opts.Voters == 0 {
		opts.Voters = 3
	}
	if opts.Voters < 1 || opts.Voters > 26 {
		return nil, fmt.Errorf("replicatest: Options.Voters = %d, want 1 to 26", opts.Voters)
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	tick := 50 * time.Millisecond
	if opts.Dir != "" {
		tick = 200 * time.Millisecond // fsyncs on a busy disk take tens of ms
	}
	def(&opts.HeartbeatTimeout, tick)
	def(&opts.ElectionTimeout, tick)
	def(&opts.LeaderLeaseTimeout, tick/2)
	def(&opts.CommitTimeout, 5*time.Millisecond)
	c := &Cluster{opts: opts, newMachine: newMachine, voters: map[string]*voter{}, cut: map[[2]string]bool{}}
	var peers []replica.Peer
	for i := 0; i < opts.Voters; i++ {
		id := string(rune('A' + i))
		c.ids = append(c.ids, id)
		peers = append(peers, replica.Peer{ID: id, Address: id})
		v := &voter{id: id}
		if opts.Dir == "" {
			v.stores = replica.NewInmemStores()
		}
		c.voters[id] = v
	}
	c.mu.Lock()
	for _, id := range c.ids {
		if err := c.start(id, peers); err != nil {
			c.mu.Unlock()
			c.Close()
			return nil, err
		}
	}
	c.mu.Unlock()
	return c, nil
}

// start opens voter id with a fresh Machine and transport; c.mu is held.
func (c *Cluster) start(id string, bootstrap []replica.Peer) error {
	v := c.voters[id]
	_, v.trans = raft.NewInmemTransport(raft.ServerAddress(id))
	v.machine = c.newMachine(id)
	cfg := replica.Config{
		ID: id, Transport: v.trans, Stores: v.stores, Voters: bootstrap,
		HeartbeatTimeout: c.opts.HeartbeatTimeout, ElectionTimeout: c.opts.ElectionTimeout,
		LeaderLeaseTimeout: c.opts.LeaderLeaseTimeout, CommitTimeout: c.opts.CommitTimeout,
		SnapshotThreshold: c.opts.SnapshotThreshold, SnapshotInterval: c.opts.SnapshotInterval,
		TrailingLogs: c.opts.TrailingLogs, Logger: c.opts.Logger,
	}
	if c.opts.Dir != "" {
		cfg.Dir = filepath.Join(c.opts.Dir, id)
	}
	// Connect before Open so that the voter is reachable as soon as it runs.
	c.connect(id)
	g, err := replica.Open(cfg, v.machine)
	if err != nil {
		c.disconnect(id)
		return fmt.Errorf("replicatest: start voter %s: %w", id, err)
	}
	v.group = g
	return nil
}

func key(a, b string) [2]string {
	if a > b {
		a, b = b, a
	}
	return [2]string{a, b}
}

// connect links voter id with every other running voter, except across cut
// links; c.mu is held.
func (c *Cluster) connect(id string) {
	v := c.voters[id]
	for _, o := range c.voters {
		if o.id == id || o.group == nil || c.cut[key(id, o.id)] {
			continue
		}
		v.trans.Connect(raft.ServerAddress(o.id), o.trans)
		o.trans.Connect(raft.ServerAddress(id), v.trans)
	}
}

// disconnect removes every link of voter id, both ways; c.mu is held.
func (c *Cluster) disconnect(id string) {
	v := c.voters[id]
	for _, o := range c.voters {
		if o.id != id && o.trans != nil {
			o.trans.Disconnect(raft.ServerAddress(id))
		}
	}
	if v.trans != nil {
		v.trans.DisconnectAll()
	}
}

// IDs returns the voters' IDs in order: "A", "B", ….
func (c *Cluster) IDs() []string { return append([]string(nil), c.ids...) }

// Group returns voter id's running Group, or nil while it is killed.
func (c *Cluster) Group(id string) *replica.Group {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v := c.voters[id]; v != nil {
		return v.group
	}
	return nil
}

// Machine returns the Machine of voter id's current incarnation (a new one
// after each Restart), or nil for an unknown ID.
func (c *Cluster) Machine(id string) replica.Machine {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v := c.voters[id]; v != nil {
		return v.machine
	}
	return nil
}

// Voter returns voter id's running Group and the Machine it replicates,
// taken together (so that a Restart in between cannot pair a Group with
// another incarnation's Machine); g is nil while the voter is killed.
func (c *Cluster) Voter(id string) (g *replica.Group, m replica.Machine) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v := c.voters[id]; v != nil {
		return v.group, v.machine
	}
	return nil, nil
}

// Running returns the IDs of the voters that are not killed, in order.
func (c *Cluster) Running() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ids []string
	for _, id := range c.ids {
		if c.voters[id].group != nil {
			ids = append(ids, id)
		}
	}
	return ids
}

// ErrUnknownVoter is returned for an ID that names no voter.
var ErrUnknownVoter = errors.New("replicatest: unknown voter")

// Kill crash-stops voter id: its links are cut first, so it sends nothing
// more, then its Group is closed. Its stores keep what it had persisted,
// which in Raft is everything it acknowledged (Raft §5, Figure 2: persistent
// state is on stable storage before a voter answers).
// Killing a killed voter does nothing.
func (c *Cluster) Kill(id string) error {
	c.mu.Lock()
	v := c.voters[id]
	if v == nil {
		c.mu.Unlock()
		return fmt.Errorf("%w %q", ErrUnknownVoter, id)
	}
	g := v.group
	if g == nil {
		c.mu.Unlock()
		return nil
	}
	c.disconnect(id)
	v.group = nil
	c.mu.Unlock()
	// Close outside the lock: a shutdown waits for raft's goroutines.
	if err := g.Close(); err != nil {
		return fmt.Errorf("replicatest: kill voter %s: %w", id, err)
	}
	return nil
}

// Restart starts a killed voter again from its stores with a fresh Machine
// (newMachine(id)): raft restores its latest snapshot and replays the
// committed log after it. Restarting a running voter is an error.
func (c *Cluster) Restart(id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	v := c.voters[id]
	if v == nil {
		return fmt.Errorf("%w %q", ErrUnknownVoter, id)
	}
	if v.group != nil {
		return fmt.Errorf("replicatest: restart voter %s: it is running", id)
	}
	return c.start(id, nil)
}

// Partition cuts every link between voters in different groups and restores
// every link within a group; voters not named form one more group. For
// example Partition([]string{"A"}) isolates A from B and C.
func (c *Cluster) Partition(groups ...[]string) {
	side := map[string]int{}
	for i, g := range groups {
		for _, id := range g {
			side[id] = i + 1
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cut = map[[2]string]bool{}
	for _, a := range c.ids {
		for _, b := range c.ids {
			if a < b && side[a] != side[b] {
				c.cut[key(a, b)] = true
			}
		}
	}
	c.relink()
}

// Isolate cuts voter id off from all others (a partition of one).
func (c *Cluster) Isolate(id string) { c.Partition([]string{id}) }

// Heal restores every link between running voters.
func (c *Cluster) Heal() { c.Partition() }

// relink applies c.cut to the transports of running voters; c.mu is held.
func (c *Cluster) relink() {
	for _, a := range c.ids {
		for _, b := range c.ids {
			va, vb := c.voters[a], c.voters[b]
			if a == b || va.group == nil || vb.group == nil {
				continue
			}
			if c.cut[key(a, b)] {
				va.trans.Disconnect(raft.ServerAddress(b))
			} else {
				va.trans.Connect(raft.ServerAddress(b), vb.trans)
			}
		}
	}
}

// Leader returns the ID of the running voter that believes it is leader in
// the highest term and is recognised as leader by a quorum of the voters (a
// majority of all voters, Raft §5.2), or ok=false when there is none now.
func (c *Cluster) Leader() (id string, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := map[string]replica.Status{}
	for _, vid := range c.ids {
		if g := c.voters[vid].group; g != nil {
			st[vid] = g.Status()
		}
	}
	best, bestTerm := "", uint64(0)
	for vid, s := range st {
		if s.State != "Leader" || s.Term < bestTerm {
			continue
		}
		n := 0
		for _, o := range st {
			if o.Leader == vid && o.Term == s.Term {
				n++
			}
		}
		if n > len(c.ids)/2 {
			best, bestTerm = vid, s.Term
		}
	}
	return best, best != ""
}

// WaitLeader polls every 5 ms until Leader reports one and returns its ID,
// or an error wrapping ctx.Err().
func (c *Cluster) WaitLeader(ctx context.Context) (string, error) {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		if id, ok := c.Leader(); ok {
			return id, nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("replicatest: no leader among %v: %w", c.Running(), ctx.Err())
		case <-t.C:
		}
	}
}

// Apply proposes cmd on the current leader, retrying on another voter only
// when the command was certainly not appended (replica.ErrNotLeader, or
// replica.ErrClosed without replica.ErrOutcomeUnknown: a killed voter). Other
// errors are returned as they are, including those wrapping
// replica.ErrOutcomeUnknown: the caller decides whether to retry.
func (c *Cluster) Apply(ctx context.Context, cmd []byte) ([]byte, error) {
	for {
		id, err := c.WaitLeader(ctx)
		if err != nil {
			return nil, err
		}
		g := c.Group(id)
		if g == nil {
			continue
		}
		res, err := g.Apply(ctx, cmd)
		if !errors.Is(err, replica.ErrOutcomeUnknown) &&
			(errors.Is(err, replica.ErrNotLeader) || errors.Is(err, replica.ErrClosed)) {
			if err := sleep(ctx, 5*time.Millisecond); err != nil {
				return nil, err
			}
			continue
		}
		return res, err
	}
}

// LeaderRead runs replica.Group.LeaderRead on the current leader, retrying
// on another voter when leadership moves, and returns the leader's ID and
// Machine: reads of that Machine now reflect every command acknowledged
// before the call (Raft §8). Errors wrap ctx.Err().
func (c *Cluster) LeaderRead(ctx context.Context) (id string, m replica.Machine, err error) {
	for {
		id, err := c.WaitLeader(ctx)
		if err != nil {
			return "", nil, err
		}
		if g, m := c.Voter(id); g != nil {
			if err := g.LeaderRead(ctx); err == nil {
				return id, m, nil
			}
		}
		if err := sleep(ctx, 5*time.Millisecond); err != nil {
			return "", nil, fmt.Errorf("replicatest: leader read: %w", err)
		}
	}
}

// WaitConverged waits until every running voter has applied every command
// that was acknowledged before the call: it runs LeaderRead on the leader,
// then polls until each running voter's Status().Applied reaches the
// leader's. Heal partitions first, or cut-off voters never catch up. Errors
// wrap ctx.Err().
func (c *Cluster) WaitConverged(ctx context.Context) error {
	var target uint64
	for target == 0 {
		id, _, err := c.LeaderRead(ctx)
		if err != nil {
			return fmt.Errorf("replicatest: converge: %w", err)
		}
		if g := c.Group(id); g != nil {
			target = g.Status().Applied
		}
	}
	for {
		var behind []string
		for _, id := range c.Running() {
			if g := c.Group(id); g != nil && g.Status().Applied < target {
				behind = append(behind, fmt.Sprintf("%s@%d", id, g.Status().Applied))
			}
		}
		if len(behind) == 0 {
			return nil
		}
		sort.Strings(behind)
		if err := sleep(ctx, 5*time.Millisecond); err != nil {
			return fmt.Errorf("replicatest: converge to index %d: behind %v: %w", target, behind, err)
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Close stops every running voter. New registers it with tb.Cleanup;
// calling it again does nothing.
func (c *Cluster) Close() {
	for _, id := range c.ids {
		_ = c.Kill(id)
	}
}
