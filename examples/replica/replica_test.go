package replica_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/ownership-book/ownership/examples/replica"
	"github.com/ownership-book/ownership/examples/replica/replicatest"
	"github.com/ownership-book/ownership/internal/freeport"
)

// appendLog is the test Machine: it appends each command to a list and
// returns the command's position (1-based) in decimal. Commands are unique,
// so a command already in the list is a client's retry and is not appended
// again (Raft §8: retries after an unknown outcome must not apply twice).
type appendLog struct {
	mu       sync.Mutex
	entries  []string
	restores int // how many times Restore ran (not part of the state)
}

func (m *appendLog) Apply(cmd []byte) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if i := slices.Index(m.entries, string(cmd)); i >= 0 {
		return []byte(strconv.Itoa(i + 1))
	}
	m.entries = append(m.entries, string(cmd))
	return []byte(strconv.Itoa(len(m.entries)))
}

func (m *appendLog) Snapshot() ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return json.Marshal(m.entries)
}

func (m *appendLog) Restore(b []byte) error {
	var e []string
	if err := json.Unmarshal(b, &e); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.entries = e
	m.restores++
	return nil
}

func (m *appendLog) Entries() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.entries)
}

func (m *appendLog) Restores() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.restores
}

func newAppendLog(string) replica.Machine { return &appendLog{} }

// apply proposes cmd on the cluster's leader until it is acknowledged,
// retrying when the outcome is unknown (a leader change on a loaded machine);
// appendLog makes the retry harmless.
func apply(ctx context.Context, t *testing.T, c *replicatest.Cluster, cmd string) {
	t.Helper()
	for {
		_, err := c.Apply(ctx, []byte(cmd))
		if err == nil {
			return
		}
		if !errors.Is(err, replica.ErrOutcomeUnknown) || ctx.Err() != nil {
			t.Fatalf("Apply(%q): %v", cmd, err)
		}
	}
}

func entries(c *replicatest.Cluster, id string) []string {
	return c.Machine(id).(*appendLog).Entries()
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func cmds(prefix string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("%s%d", prefix, i))
	}
	return out
}

// fast is the test timing for voters opened directly with Open: short, but
// long enough for fsyncs on a busy disk. REPLICA_DEBUG=1 prints raft's log
// (Info level) to stderr.
func fast(cfg replica.Config) replica.Config {
	cfg.HeartbeatTimeout = 200 * time.Millisecond
	cfg.ElectionTimeout = 200 * time.Millisecond
	cfg.LeaderLeaseTimeout = 100 * time.Millisecond
	cfg.CommitTimeout = 5 * time.Millisecond
	if os.Getenv("REPLICA_DEBUG") != "" {
		cfg.Logger = hclog.New(&hclog.LoggerOptions{Name: cfg.ID, Level: hclog.Info})
	}
	return cfg
}

// A single voter bootstraps itself, becomes leader, and applies commands in
// order, returning the Machine's results.
func TestSingleVoterApply(t *testing.T) {
	ctx := ctxFor(t, 10*time.Second)
	_, trans := raft.NewInmemTransport("A")
	m := &appendLog{}
	g, err := replica.Open(fast(replica.Config{ID: "A", Transport: trans,
		Voters: []replica.Peer{{ID: "A", Address: "A"}}}), m)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if id, err := g.WaitLeader(ctx); err != nil || id != "A" {
		t.Fatalf("WaitLeader = %q, %v; want A", id, err)
	}
	want := cmds("x", 5)
	for i, c := range want {
		res, err := g.Apply(ctx, []byte(c))
		if err != nil {
			t.Fatal(err)
		}
		if got := string(res); got != strconv.Itoa(i+1) {
			t.Fatalf("Apply(%q) = %q, want %d", c, got, i+1)
		}
	}
	if err := g.LeaderRead(ctx); err != nil {
		t.Fatal(err)
	}
	if got := m.Entries(); !slices.Equal(got, want) {
		t.Fatalf("entries = %v, want %v", got, want)
	}
	if !g.IsLeader() {
		t.Fatal("IsLeader = false on the only voter")
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Apply(ctx, []byte("late")); !errors.Is(err, replica.ErrClosed) {
		t.Fatalf("Apply after Close: err = %v, want ErrClosed", err)
	}
}

func TestOpenRejectsBadConfig(t *testing.T) {
	_, trans := raft.NewInmemTransport("A")
	if _, err := replica.Open(replica.Config{Transport: trans}, &appendLog{}); err == nil {
		t.Error("Open without ID: no error")
	}
	_, err := replica.Open(fast(replica.Config{ID: "A", Transport: trans,
		Voters: []replica.Peer{{ID: "B", Address: "B"}}}), &appendLog{})
	if err == nil {
		t.Error("Open with own ID missing from Voters: no error")
	}
	if _, err := replica.Open(replica.Config{ID: "A"}, &appendLog{}); err == nil {
		t.Error("Open with neither Bind nor Transport: no error")
	}
}

// freeAddrs returns n loopback TCP addresses that were free a moment ago,
// below the ephemeral range (see package freeport).
func freeAddrs(t *testing.T, n int) []string {
	var out []string
	for range n {
		addr, err := freeport.Pick("127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, addr)
	}
	return out
}

// A voter reopened on the same Dir recovers its state from its latest file
// snapshot plus the log entries after it (Raft §7; persistent state, §5).
func TestRestartFromDiskRecoversState(t *testing.T) {
	ctx := ctxFor(t, 20*time.Second)
	dir := t.TempDir()
	addr := freeAddrs(t, 1)[0]
	cfg := fast(replica.Config{ID: "A", Dir: dir, Bind: addr, Voters: []replica.Peer{{ID: "A", Address: addr}}})

	g, err := replica.Open(cfg, &appendLog{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.WaitLeader(ctx); err != nil {
		t.Fatal(err)
	}
	want := cmds("w", 15)
	for i, c := range want {
		if _, err := g.Apply(ctx, []byte(c)); err != nil {
			t.Fatal(err)
		}
		if i == 9 {
			if err := g.Snapshot(); err != nil {
				t.Fatalf("Snapshot: %v", err)
			}
		}
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	snaps, _ := filepath.Glob(filepath.Join(dir, "snapshots", "*", "state.bin"))
	if len(snaps) != 1 {
		t.Fatalf("snapshot files = %v, want one", snaps)
	}
	if _, err := os.Stat(filepath.Join(dir, "raft.db")); err != nil {
		t.Fatal(err)
	}

	m := &appendLog{}
	cfg.Voters = nil // an existing voter ignores Voters; it must not need them
	g, err = replica.Open(cfg, m)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if m.Restores() != 1 {
		t.Fatalf("restores on reopen = %d, want 1 (from the file snapshot)", m.Restores())
	}
	if _, err := g.WaitLeader(ctx); err != nil {
		t.Fatal(err)
	}
	if err := g.LeaderRead(ctx); err != nil {
		t.Fatal(err)
	}
	if got := m.Entries(); !slices.Equal(got, want) {
		t.Fatalf("after restart entries = %v, want %v", got, want)
	}
	if got := g.Status().Applied; got == 0 {
		t.Fatal("Status().Applied = 0 after recovery")
	}
	res, err := g.Apply(ctx, []byte("after"))
	if err != nil || string(res) != "16" {
		t.Fatalf("Apply after restart = %q, %v; want 16", res, err)
	}
}

// Three voters on one machine over loopback TCP, each with its own Dir:
// writes go through the leader and every voter converges.
func TestThreeVotersTCP(t *testing.T) {
	ctx := ctxFor(t, 20*time.Second)
	addrs := freeAddrs(t, 3)
	ids := []string{"A", "B", "C"}
	var peers []replica.Peer
	for i, id := range ids {
		peers = append(peers, replica.Peer{ID: id, Address: addrs[i]})
	}
	groups := map[string]*replica.Group{}
	machines := map[string]*appendLog{}
	base := t.TempDir()
	for i, id := range ids {
		machines[id] = &appendLog{}
		g, err := replica.Open(fast(replica.Config{ID: id, Dir: filepath.Join(base, id), Bind: addrs[i], Voters: peers}), machines[id])
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		groups[id] = g
	}
	want := cmds("t", 10)
	for _, c := range want {
		for {
			leader, err := groups["A"].WaitLeader(ctx)
			if err != nil {
				t.Fatal(err)
			}
			_, err = groups[leader].Apply(ctx, []byte(c))
			if err == nil {
				break
			}
			// Retry on a leader change (appendLog ignores duplicates).
			if !errors.Is(err, replica.ErrNotLeader) && !errors.Is(err, replica.ErrOutcomeUnknown) || ctx.Err() != nil {
				t.Fatal(err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	for _, id := range ids {
		for !slices.Equal(machines[id].Entries(), want) {
			if ctx.Err() != nil {
				t.Fatalf("voter %s entries = %v, want %v", id, machines[id].Entries(), want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// Writes on the leader reach every voter, in the same order.
func TestThreeVotersConverge(t *testing.T) {
	ctx := ctxFor(t, 20*time.Second)
	c := replicatest.New(t, replicatest.Options{Voters: 3}, newAppendLog)
	want := cmds("c", 50)
	for _, cmd := range want {
		apply(ctx, t, c, cmd)
	}
	if err := c.WaitConverged(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range c.IDs() {
		if got := entries(c, id); !slices.Equal(got, want) {
			t.Errorf("voter %s entries = %v, want %v", id, got, want)
		}
	}
}

// A follower refuses a write and names the leader, so the client can retry
// there (Raft §8); the refused write changes no state.
func TestFollowerApplyNotLeader(t *testing.T) {
	ctx := ctxFor(t, 20*time.Second)
	// Slow timing: the leader must stay leader while the followers are
	// asked, even on a loaded machine.
	c := replicatest.New(t, replicatest.Options{Voters: 3, HeartbeatTimeout: time.Second,
		ElectionTimeout: time.Second, LeaderLeaseTimeout: 500 * time.Millisecond}, newAppendLog)
	leader, err := c.WaitLeader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	apply(ctx, t, c, "first")
	if err := c.WaitConverged(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range c.IDs() {
		if id == leader {
			continue
		}
		_, err := c.Group(id).Apply(ctx, []byte("refused"))
		var nle *replica.NotLeaderError
		if !errors.As(err, &nle) || !errors.Is(err, replica.ErrNotLeader) {
			t.Fatalf("follower %s Apply: err = %v, want *NotLeaderError", id, err)
		}
		if nle.Leader != leader || nle.ID != id {
			t.Fatalf("follower %s: NotLeaderError = %+v, want Leader %s", id, nle, leader)
		}
		if err := c.Group(id).LeaderRead(ctx); !errors.Is(err, replica.ErrNotLeader) {
			t.Fatalf("follower %s LeaderRead: err = %v, want ErrNotLeader", id, err)
		}
	}
	if err := c.WaitConverged(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range c.IDs() {
		if got := entries(c, id); !slices.Equal(got, []string{"first"}) {
			t.Errorf("voter %s entries = %v, want [first]", id, got)
		}
	}
}

// When the leader crashes, the others elect a new one (Raft §5.2) that holds
// every acknowledged write (Leader Completeness, Raft §5.4); the old leader,
// restarted, catches up.
func TestLeaderKilledNoAcknowledgedWriteLost(t *testing.T) {
	for _, durable := range []bool{false, true} {
		t.Run(fmt.Sprintf("durable=%v", durable), func(t *testing.T) {
			ctx := ctxFor(t, 30*time.Second)
			opts := replicatest.Options{Voters: 3}
			if durable {
				opts.Dir = t.TempDir()
			}
			c := replicatest.New(t, opts, newAppendLog)
			want := cmds("k", 20)
			for _, cmd := range want {
				apply(ctx, t, c, cmd)
			}
			old, _ := c.WaitLeader(ctx)
			if err := c.Kill(old); err != nil {
				t.Fatal(err)
			}
			next, m, err := c.LeaderRead(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if next == old {
				t.Fatalf("leader after kill = %s, the killed voter", next)
			}
			if got := m.(*appendLog).Entries(); !slices.Equal(got, want) {
				t.Fatalf("new leader %s entries = %v, want %v", next, got, want)
			}
			more := cmds("m", 10)
			for _, cmd := range more {
				apply(ctx, t, c, cmd)
			}
			want = append(want, more...)
			if err := c.Restart(old); err != nil {
				t.Fatal(err)
			}
			if err := c.WaitConverged(ctx); err != nil {
				t.Fatal(err)
			}
			for _, id := range c.IDs() {
				if got := entries(c, id); !slices.Equal(got, want) {
					t.Errorf("voter %s entries = %v, want %v", id, got, want)
				}
			}
		})
	}
}

// A follower that was down while the leader compacted its log catches up by
// InstallSnapshot and Restore (Raft §7).
func TestLaggingFollowerCatchesUpBySnapshot(t *testing.T) {
	ctx := ctxFor(t, 30*time.Second)
	c := replicatest.New(t, replicatest.Options{
		Voters: 3, SnapshotThreshold: 8, SnapshotInterval: 10 * time.Millisecond, TrailingLogs: 2,
	}, newAppendLog)
	leader, err := c.WaitLeader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lag := c.IDs()[0]
	if lag == leader {
		lag = c.IDs()[1]
	}
	if err := c.Kill(lag); err != nil {
		t.Fatal(err)
	}
	want := cmds("s", 60)
	for i, cmd := range want {
		apply(ctx, t, c, cmd)
		if i%10 == 9 {
			time.Sleep(20 * time.Millisecond) // let the snapshot timer fire
		}
	}
	if err := c.Restart(lag); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitConverged(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range c.IDs() {
		if got := entries(c, id); !slices.Equal(got, want) {
			t.Errorf("voter %s entries = %v, want %v", id, got, want)
		}
	}
	if n := c.Machine(lag).(*appendLog).Restores(); n == 0 {
		t.Errorf("lagging voter %s: Restore never ran, want catch-up by snapshot", lag)
	}
}

// A leader cut off from the quorum cannot commit or serve reads (Raft §8);
// its unacknowledged write is discarded when it rejoins (Raft §5.3), while
// the majority elects a new leader and goes on.
func TestIsolatedLeader(t *testing.T) {
	ctx := ctxFor(t, 30*time.Second)
	c := replicatest.New(t, replicatest.Options{Voters: 3}, newAppendLog)
	apply(ctx, t, c, "before")
	old, err := c.WaitLeader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c.Isolate(old)
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = c.Group(old).Apply(short, []byte("lost"))
	cancel()
	if !errors.Is(err, replica.ErrOutcomeUnknown) && !errors.Is(err, replica.ErrNotLeader) {
		t.Fatalf("isolated leader Apply: err = %v, want ErrOutcomeUnknown or ErrNotLeader", err)
	}
	short, cancel = context.WithTimeout(ctx, 300*time.Millisecond)
	err = c.Group(old).LeaderRead(short)
	cancel()
	if err == nil {
		t.Fatal("isolated leader LeaderRead succeeded")
	}
	var next string
	for next == "" || next == old {
		if next, err = c.WaitLeader(ctx); err != nil {
			t.Fatal(err)
		}
	}
	apply(ctx, t, c, "after")
	c.Heal()
	if err := c.WaitConverged(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{"before", "after"}
	for _, id := range c.IDs() {
		if got := entries(c, id); !slices.Equal(got, want) {
			t.Errorf("voter %s entries = %v, want %v", id, got, want)
		}
	}
}
