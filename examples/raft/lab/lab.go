// Package lab runs a cluster of hashicorp/raft voters in one process, on
// raft's in-memory transport, for the experiments of the book's Raft
// chapter. Unlike replicatest (which tests the book's replica package), it
// hands out each voter's *raft.Raft, so that an experiment can call
// VerifyLeader, Barrier and LeadershipTransferToServer itself, and it
// records every vote: each RequestVote a candidate sends, with the term and
// whether it was granted (Raft §5.2).
//
// The state machine of every voter is a KV: "set key value" commands, each
// tagged with a client serial number so that a retried command is applied
// once (Raft §8).
//
// Voters are named "A", "B", …; their transport addresses equal their
// names. Nothing here sleeps to hope: every wait polls a condition until a
// deadline.
package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// Timing is one voter's Raft timing (see raft.Config). Zero fields take
// the Options default.
type Timing struct {
	HeartbeatTimeout   time.Duration
	ElectionTimeout    time.Duration
	LeaderLeaseTimeout time.Duration
}

// Options configures a Lab.
type Options struct {
	Voters int // 1 to 26; default 5
	// Timing of every voter; defaults: heartbeat and election timeouts
	// 300 ms, leader lease 150 ms (generous, so that a loaded machine does
	// not depose a healthy leader), commit timeout 5 ms.
	Timing Timing
	// Override, if non-nil, replaces the timing of the voters it names.
	Override map[string]Timing
}

// Vote is one RequestVote a candidate sent and the answer it got.
type Vote struct {
	Term      uint64
	Candidate string
	Voter     string
	Granted   bool
}

// Lab is a running cluster. Its methods are safe for concurrent use.
type Lab struct {
	opts Options
	ids  []string

	mu     sync.Mutex
	voters map[string]*Voter
	cut    map[[2]string]bool
	votes  []Vote
}

// Voter is one member of a Lab. Raft is nil while the voter is killed.
type Voter struct {
	ID   string
	Raft *raft.Raft
	KV   *KV

	trans  *raft.InmemTransport
	store  *raft.InmemStore
	snaps  *raft.InmemSnapshotStore
	timing Timing
}

// transport is raft's in-memory transport with every RequestVote recorded.
type transport struct {
	*raft.InmemTransport
	lab *Lab
	id  string
}

func (t *transport) RequestVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestVoteRequest, resp *raft.RequestVoteResponse) error {
	err := t.InmemTransport.RequestVote(id, target, args, resp)
	if err == nil {
		t.lab.mu.Lock()
		t.lab.votes = append(t.lab.votes, Vote{Term: args.Term, Candidate: t.id, Voter: string(target), Granted: resp.Granted})
		t.lab.mu.Unlock()
	}
	return err
}

// Start bootstraps and starts a cluster; the caller must Close it.
func Start(opts Options) (*Lab, error) {
	if opts.Voters == 0 {
		opts.Voters = 5
	}
	if opts.Voters < 1 || opts.Voters > 26 {
		return nil, fmt.Errorf("lab: Options.Voters = %d, want 1 to 26", opts.Voters)
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&opts.Timing.HeartbeatTimeout, 300*time.Millisecond)
	def(&opts.Timing.ElectionTimeout, 300*time.Millisecond)
	def(&opts.Timing.LeaderLeaseTimeout, 150*time.Millisecond)
	l := &Lab{opts: opts, voters: map[string]*Voter{}, cut: map[[2]string]bool{}}
	var conf raft.Configuration
	for i := range opts.Voters {
		id := string(rune('A' + i))
		l.ids = append(l.ids, id)
		conf.Servers = append(conf.Servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(id), Address: raft.ServerAddress(id)})
		t := opts.Timing
		if o, ok := opts.Override[id]; ok {
			def(&o.HeartbeatTimeout, t.HeartbeatTimeout)
			def(&o.ElectionTimeout, t.ElectionTimeout)
			def(&o.LeaderLeaseTimeout, t.LeaderLeaseTimeout)
			t = o
		}
		l.voters[id] = &Voter{ID: id, store: raft.NewInmemStore(), snaps: raft.NewInmemSnapshotStore(), timing: t}
	}
	for _, id := range l.ids {
		v := l.voters[id]
		if err := raft.BootstrapCluster(l.config(v), v.store, v.store, v.snaps, l.newTransport(v), conf); err != nil {
			return nil, fmt.Errorf("lab: bootstrap %s: %w", id, err)
		}
	}
	l.mu.Lock()
	var err error
	for _, id := range l.ids {
		if err = l.start(id); err != nil {
			break
		}
	}
	l.mu.Unlock()
	if err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

func (l *Lab) config(v *Voter) *raft.Config {
	c := raft.DefaultConfig()
	c.LocalID = raft.ServerID(v.ID)
	c.HeartbeatTimeout = v.timing.HeartbeatTimeout
	c.ElectionTimeout = v.timing.ElectionTimeout
	c.LeaderLeaseTimeout = v.timing.LeaderLeaseTimeout
	c.CommitTimeout = 5 * time.Millisecond
	c.Logger = hclog.NewNullLogger()
	return c
}

func (l *Lab) newTransport(v *Voter) raft.Transport {
	_, v.trans = raft.NewInmemTransport(raft.ServerAddress(v.ID))
	return &transport{InmemTransport: v.trans, lab: l, id: v.ID}
}

// start runs voter id from its stores with a fresh KV; l.mu is held.
func (l *Lab) start(id string) error {
	v := l.voters[id]
	trans := l.newTransport(v)
	v.KV = NewKV()
	r, err := raft.NewRaft(l.config(v), v.KV, v.store, v.store, v.snaps, trans)
	if err != nil {
		return fmt.Errorf("lab: start %s: %w", id, err)
	}
	v.Raft = r
	l.relink()
	return nil
}

// relink connects every pair of running voters not cut apart and
// disconnects the rest; l.mu is held.
func (l *Lab) relink() {
	for _, a := range l.ids {
		for _, b := range l.ids {
			va, vb := l.voters[a], l.voters[b]
			if a == b || va.trans == nil || vb.trans == nil {
				continue
			}
			if va.Raft == nil || vb.Raft == nil || l.cut[key(a, b)] {
				va.trans.Disconnect(raft.ServerAddress(b))
			} else {
				va.trans.Connect(raft.ServerAddress(b), vb.trans)
			}
		}
	}
}

func key(a, b string) [2]string {
	if a > b {
		a, b = b, a
	}
	return [2]string{a, b}
}

// IDs returns the voters' IDs in order.
func (l *Lab) IDs() []string { return slices.Clone(l.ids) }

// Voter returns voter id (Raft nil while killed), or nil for an unknown ID.
func (l *Lab) Voter(id string) *Voter {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.voters[id]
}

// Raft returns voter id's running *raft.Raft, nil while it is killed.
func (l *Lab) Raft(id string) *raft.Raft {
	l.mu.Lock()
	defer l.mu.Unlock()
	if v := l.voters[id]; v != nil {
		return v.Raft
	}
	return nil
}

// Partition cuts every link between voters of different groups; voters
// not named form one more group. Partition() heals.
func (l *Lab) Partition(groups ...[]string) {
	side := map[string]int{}
	for i, g := range groups {
		for _, id := range g {
			side[id] = i + 1
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cut = map[[2]string]bool{}
	for _, a := range l.ids {
		for _, b := range l.ids {
			if a < b && side[a] != side[b] {
				l.cut[key(a, b)] = true
			}
		}
	}
	l.relink()
}

// Heal restores every link between running voters.
func (l *Lab) Heal() { l.Partition() }

// Kill crash-stops voter id: its links are cut, then raft shuts down. Its
// stores keep the term, the vote and the log (Raft Figure 2).
func (l *Lab) Kill(id string) error {
	l.mu.Lock()
	v := l.voters[id]
	if v == nil || v.Raft == nil {
		l.mu.Unlock()
		return fmt.Errorf("lab: kill %s: not running", id)
	}
	r := v.Raft
	v.Raft = nil
	v.trans.DisconnectAll()
	l.relink()
	l.mu.Unlock()
	return r.Shutdown().Error()
}

// Restart starts a killed voter again from its stores.
func (l *Lab) Restart(id string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	v := l.voters[id]
	if v == nil || v.Raft != nil {
		return fmt.Errorf("lab: restart %s: not killed", id)
	}
	return l.start(id)
}

// Close shuts every running voter down.
func (l *Lab) Close() {
	for _, id := range l.ids {
		if l.Raft(id) != nil {
			_ = l.Kill(id)
		}
	}
}

// Votes returns every RequestVote answered so far, in the order answered.
func (l *Lab) Votes() []Vote {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.votes)
}

// Leader returns the running voter among ids (all voters if none given)
// that is leader in the highest term, with that term; ok is false when
// none is.
func (l *Lab) Leader(ids ...string) (id string, term uint64, ok bool) {
	if len(ids) == 0 {
		ids = l.ids
	}
	for _, vid := range ids {
		r := l.Raft(vid)
		if r == nil || r.State() != raft.Leader {
			continue
		}
		if t := r.CurrentTerm(); t > term {
			id, term, ok = vid, t, true
		}
	}
	return id, term, ok
}

// WaitFor polls cond every 5 ms until it holds or ctx ends; what names
// the condition in the error.
func WaitFor(ctx context.Context, what string, cond func() bool) error {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("lab: waiting for %s: %w", what, ctx.Err())
		case <-t.C:
		}
	}
	return nil
}

// WaitLeader waits until a voter among ids (all if none given) is leader
// with a term above after, and a quorum of all voters has confirmed it
// (VerifyLeader), and returns it.
func (l *Lab) WaitLeader(ctx context.Context, after uint64, ids ...string) (string, uint64, error) {
	var id string
	var term uint64
	err := WaitFor(ctx, "a leader", func() bool {
		var ok bool
		id, term, ok = l.Leader(ids...)
		if !ok || term <= after {
			return false
		}
		r := l.Raft(id)
		return r != nil && r.VerifyLeader().Error() == nil && r.CurrentTerm() == term
	})
	return id, term, err
}

// ErrNotLeader is returned by Apply when the voter is not leader.
var ErrNotLeader = errors.New("lab: not the leader")

// Apply proposes cmd on voter id and waits until it is committed and
// applied there. Errors: ErrNotLeader (the command was not appended);
// any other error means the outcome is unknown (Raft §8).
func (l *Lab) Apply(id string, cmd string, timeout time.Duration) error {
	r := l.Raft(id)
	if r == nil {
		return ErrNotLeader
	}
	err := r.Apply([]byte(cmd), timeout).Error()
	if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipTransferInProgress) {
		return fmt.Errorf("%w (%v)", ErrNotLeader, err)
	}
	return err
}

// Write applies "set key value" with serial number seq of client on
// whichever voter is leader, retrying every refusal and every unknown
// outcome until it is acknowledged or ctx ends; the KV applies a retried
// serial number once. It returns the number of attempts.
func (l *Lab) Write(ctx context.Context, client string, seq int, key, value string) (int, error) {
	cmd := fmt.Sprintf("%s %d set %s %s", client, seq, key, value)
	for n := 1; ; n++ {
		if id, _, ok := l.Leader(); ok {
			if err := l.Apply(id, cmd, time.Second); err == nil {
				return n, nil
			}
		}
		select {
		case <-ctx.Done():
			return n, fmt.Errorf("lab: write %q: %w", cmd, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// KV is the voters' state machine: a map of keys to values. A command is
// "client seq set key value"; a command whose seq is not above the last
// one applied for its client is a retry and changes nothing (Raft §8:
// "the state machine tracks the latest serial number processed for each
// client"). Methods are safe for concurrent use.
type KV struct {
	mu      sync.Mutex
	data    map[string]string
	last    map[string]int // client -> last serial number applied
	applied int            // commands that changed the state
	retries int            // commands dropped as retries
}

// NewKV returns an empty KV.
func NewKV() *KV { return &KV{data: map[string]string{}, last: map[string]int{}} }

// Apply implements raft.FSM.
func (kv *KV) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		return nil
	}
	f := strings.Fields(string(l.Data))
	if len(f) != 5 || f[2] != "set" {
		return fmt.Errorf("kv: bad command %q", l.Data)
	}
	seq, err := strconv.Atoi(f[1])
	if err != nil {
		return fmt.Errorf("kv: bad serial number in %q", l.Data)
	}
	kv.mu.Lock()
	defer kv.mu.Unlock()
	if seq <= kv.last[f[0]] {
		kv.retries++
		return nil
	}
	kv.last[f[0]] = seq
	kv.data[f[3]] = f[4]
	kv.applied++
	return nil
}

// Get returns the value of key ("" if unset).
func (kv *KV) Get(key string) string {
	kv.mu.Lock()
	defer kv.mu.Unlock()
	return kv.data[key]
}

// Applied returns the number of commands applied and of retries dropped.
func (kv *KV) Applied() (applied, retries int) {
	kv.mu.Lock()
	defer kv.mu.Unlock()
	return kv.applied, kv.retries
}

// Snapshot implements raft.FSM.
func (kv *KV) Snapshot() (raft.FSMSnapshot, error) {
	kv.mu.Lock()
	defer kv.mu.Unlock()
	var b strings.Builder
	for _, k := range slices.Sorted(mapKeys(kv.last)) {
		fmt.Fprintf(&b, "c %s %d\n", k, kv.last[k])
	}
	for _, k := range slices.Sorted(mapKeys(kv.data)) {
		fmt.Fprintf(&b, "d %s %s\n", k, kv.data[k])
	}
	fmt.Fprintf(&b, "n %d %d\n", kv.applied, kv.retries)
	return snapshot(b.String()), nil
}

// Restore implements raft.FSM.
func (kv *KV) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return err
	}
	kv.mu.Lock()
	defer kv.mu.Unlock()
	kv.data, kv.last = map[string]string{}, map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		switch f[0] {
		case "c":
			kv.last[f[1]], _ = strconv.Atoi(f[2])
		case "d":
			kv.data[f[1]] = f[2]
		case "n":
			kv.applied, _ = strconv.Atoi(f[1])
			kv.retries, _ = strconv.Atoi(f[2])
		}
	}
	return nil
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

type snapshot string

func (s snapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := io.WriteString(sink, string(s)); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s snapshot) Release() {}

// WaitApplied waits until every voter in ids (every running voter if none
// given) has applied exactly n commands.
func (l *Lab) WaitApplied(ctx context.Context, n int, ids ...string) error {
	return WaitFor(ctx, fmt.Sprintf("%d commands applied on %v", n, ids), func() bool {
		list := ids
		if len(list) == 0 {
			for _, id := range l.ids {
				if l.Raft(id) != nil {
					list = append(list, id)
				}
			}
		}
		for _, id := range list {
			v := l.Voter(id)
			if v == nil || v.KV == nil {
				return false
			}
			if a, _ := v.KV.Applied(); a != n {
				return false
			}
		}
		return true
	})
}

// VoteAudit is what a record of votes shows (Raft §5.2).
type VoteAudit struct {
	Granted int // votes granted
	// DoubleVotes counts (voter, term) pairs in which the voter granted
	// its vote to two different candidates.
	DoubleVotes int
	// Winners maps each term to the candidates that gathered a quorum in
	// it (votes granted plus their own).
	Winners map[uint64][]string
}

// AuditVotes checks votes from a cluster of n voters.
func AuditVotes(votes []Vote, n int) VoteAudit {
	a := VoteAudit{Winners: map[uint64][]string{}}
	type vt struct {
		voter string
		term  uint64
	}
	gave := map[vt]string{}
	count := map[uint64]map[string]int{}
	for _, v := range votes {
		if !v.Granted {
			continue
		}
		a.Granted++
		k := vt{v.Voter, v.Term}
		if c, ok := gave[k]; ok && c != v.Candidate {
			a.DoubleVotes++
		}
		gave[k] = v.Candidate
		if count[v.Term] == nil {
			count[v.Term] = map[string]int{}
		}
		count[v.Term][v.Candidate]++
	}
	for term, cs := range count {
		for c, k := range cs {
			if k+1 > n/2 {
				a.Winners[term] = append(a.Winners[term], c)
			}
		}
	}
	return a
}
