// Package cluster_test runs the book's replicated servers as real clusters:
// one voter per OS process, on loopback, with faults injected from outside
// the processes (SIGKILL, and partitions cut by TCP proxies in front of each
// voter's Raft address).
package cluster_test

// TestStreamdCluster starts three streamd processes, each one voter of one
// Raft group (-id, -peers), and keeps several producers appending through
// all three voters (a follower forwards to the leader) while it
//
//  1. SIGKILLs the leader, waits, restarts it on the same data directory;
//  2. SIGKILLs a follower, waits, restarts it;
//  3. isolates the leader (its proxy refuses everyone, every other proxy
//     refuses it), then heals;
//  4. isolates a follower, then heals;
//
// and checks after each restart that the restarted voter caught up with the
// leader (from the log or a snapshot), and at the end that:
//
//   - every acknowledged append is in the stream exactly once and nothing is
//     there that no producer sent (Raft §5.4 Leader Completeness; producer
//     sequence numbers make retries idempotent, PROTOCOL.md 5.2.1);
//   - the fence held: no append of an epoch follows the claim that closed
//     it, and each claim's answer names where the closed epoch stopped;
//   - all three voters applied the same log and hold the same state (equal
//     applied index and state digest; Raft §5.4 State Machine Safety), and a
//     read through each returns the same bytes;
//   - the history of appends and reads is linearizable (porcupine).
//
// Ports are chosen free at run time; everything is on 127.0.0.0/8. The
// default run takes about 20 s; CLUSTER_ROUNDS=n repeats the four faults n
// times (default 1).
//
// "Raft" is Diego Ongaro and John Ousterhout, "In Search of an
// Understandable Consensus Algorithm", 2014. Reference: Raft §5.4, §8;
// PROTOCOL.md 5.2.1.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/ownership-book/ownership/internal/freeport"
)

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// binary builds ./examples/<pkg> once per test binary and returns its path.
func binary(t testing.TB, pkg string) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "cluster-bin-")
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	out := filepath.Join(buildDir, filepath.Base(pkg))
	if _, err := os.Stat(out); err == nil {
		return out
	}
	b, err := exec.Command("go", "build", "-o", out, "../../examples/"+pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// freePort returns a port free on ip now, below the kernel's ephemeral
// range so that no outgoing connection takes it before the voter binds it.
func freePort(t testing.TB, ip string) string {
	t.Helper()
	addr, err := freeport.Pick(ip)
	if err != nil {
		t.Fatalf("listen on %s (the test gives each voter its own loopback address; Linux routes all of 127.0.0.0/8 to lo): %v", ip, err)
	}
	return addr
}

// voter is one streamd process and the proxy in front of its Raft address.
type voter struct {
	id, ip   string
	raftBind string // where streamd's Raft transport listens
	httpAddr string
	url      string
	dir      string
	args     []string
	proxy    *proxy
	cmd      *exec.Cmd
	log      *os.File
	starts   int
	prefix   []string // runs the binary through this command (a network namespace's ip netns exec)
}

type cluster struct {
	t      testing.TB
	bin    string
	voters []*voter
	byIP   map[string]*voter
}

func newCluster(t testing.TB, bin string, ids ...string) *cluster {
	c := &cluster{t: t, bin: bin, byIP: map[string]*voter{}}
	root := t.TempDir()
	var peers []string
	for i, id := range ids {
		ip := fmt.Sprintf("127.0.0.%d", i+2)
		v := &voter{id: id, ip: ip, raftBind: freePort(t, ip), httpAddr: freePort(t, "127.0.0.1"),
			dir: filepath.Join(root, id)}
		v.url = "http://" + v.httpAddr
		p, err := newProxy("127.0.0.1:0", v.raftBind)
		if err != nil {
			t.Fatal(err)
		}
		v.proxy = p
		t.Cleanup(p.close)
		peers = append(peers, id+"="+p.addr())
		c.voters = append(c.voters, v)
		c.byIP[ip] = v
	}
	for _, v := range c.voters {
		v.args = []string{"-id", v.id, "-addr", v.httpAddr, "-raft-addr", v.raftBind,
			"-raft-advertise", v.proxy.addr(), "-data", v.dir, "-peers", strings.Join(peers, ","),
			"-raft-heartbeat", "300ms", "-raft-election", "300ms", "-raft-lease", "300ms",
			"-snapshot-threshold", "64", "-trailing-logs", "32", "-snapshot-interval", "100ms"}
	}
	t.Cleanup(func() {
		for _, v := range c.voters {
			c.kill(v)
		}
		if t.Failed() {
			for _, v := range c.voters {
				b, _ := os.ReadFile(v.dir + ".log")
				t.Logf("voter %s's stderr:\n%s", v.id, lastLines(string(b), 30))
			}
		}
	})
	return c
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

func (c *cluster) start(v *voter) {
	c.t.Helper()
	f, err := os.OpenFile(v.dir+".log", os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		c.t.Fatal(err)
	}
	v.starts++
	fmt.Fprintf(f, "--- start %d\n", v.starts)
	argv := append(append(append([]string(nil), v.prefix...), c.bin), v.args...)
	if v.starts == 1 && slices.Contains(v.args, "-peers") {
		argv = append(argv, "-bootstrap") // the group's first start only
	}
	v.cmd = exec.Command(argv[0], argv[1:]...)
	v.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // no voter outlives a killed test
	v.cmd.Stderr, v.cmd.Stdout, v.log = f, f, f
	if err := v.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		if _, err := c.view(v, false); err == nil {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("voter %s does not answer on its HTTP address after 15s", v.id)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill sends SIGKILL: no shutdown code runs, as in a power cut (the Raft log
// is fsynced before every acknowledgement, so a kill loses nothing acked).
func (c *cluster) kill(v *voter) {
	if v.cmd == nil {
		return
	}
	v.cmd.Process.Signal(os.Kill)
	v.cmd.Wait()
	v.log.Close()
	v.cmd = nil
}

type view struct {
	ID      string `json:"id"`
	Leader  string `json:"leader"`
	Applied uint64 `json:"applied"`
	Digest  string `json:"digest"`
}

var admin = &http.Client{Timeout: 2 * time.Second}

func (c *cluster) view(v *voter, digest bool) (view, error) {
	u := v.url + "/v1/cluster"
	if digest {
		u += "?digest=1"
	}
	resp, err := admin.Get(u)
	if err != nil {
		return view{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return view{}, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	var out view
	return out, json.NewDecoder(resp.Body).Decode(&out)
}

// leader waits until one running voter says it leads and returns it.
func (c *cluster) leader(d time.Duration) *voter {
	c.t.Helper()
	deadline := time.Now().Add(d)
	for {
		for _, v := range c.voters {
			if v.cmd == nil {
				continue
			}
			if w, err := c.view(v, false); err == nil && w.Leader == v.id {
				return v
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("no voter leads after %v", d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// leaderOtherThan waits until a running voter other than old says it
// leads, and returns it.
func (c *cluster) leaderOtherThan(old *voter, d time.Duration) *voter {
	c.t.Helper()
	deadline := time.Now().Add(d)
	for {
		for _, v := range c.voters {
			if v == old || v.cmd == nil {
				continue
			}
			if w, err := c.view(v, false); err == nil && w.Leader == v.id {
				return v
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("no voter but %s leads %v after %s was cut off", old.id, d, old.id)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (c *cluster) follower(leader *voter) *voter {
	for _, v := range c.voters {
		if v != leader {
			return v
		}
	}
	return nil
}

// isolate cuts v off from the other voters' Raft traffic (nil: heal).
func (c *cluster) isolate(v *voter) {
	for _, w := range c.voters {
		w := w
		w.proxy.setAllow(func(src string) bool {
			from := c.byIP[src]
			if v == nil || from == nil {
				return true
			}
			return (from == v) == (w == v)
		})
	}
}

// caughtUp waits until v has applied at least what the leader has applied
// now, and returns how long that took.
func (c *cluster) caughtUp(v *voter, d time.Duration) time.Duration {
	c.t.Helper()
	start := time.Now()
	l := c.leader(d)
	lv, err := c.view(l, false)
	if err != nil {
		c.t.Fatalf("leader %s: %v", l.id, err)
	}
	for {
		if w, err := c.view(v, false); err == nil && w.Applied >= lv.Applied {
			return time.Since(start)
		}
		if time.Since(start) > d {
			c.t.Fatalf("voter %s has not caught up with leader %s (applied %d) after %v", v.id, l.id, lv.Applied, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// --- the producers and the model -------------------------------------

const (
	streamPath = "/v1/stream/s"
	nProducers = 2 // producer ids "p0", "p1"
	nWriters   = 4 // writer w uses producer id w%nProducers
	opTimeout  = 2 * time.Second
)

type appendIn struct {
	P          int
	Epoch, Seq uint64
	Data       string
}

type outcome string

const (
	appended  outcome = "appended"
	duplicate outcome = "duplicate"
	fenced    outcome = "fenced"
	gap       outcome = "gap"
)

type appendOut struct {
	Unknown     bool
	Outcome     outcome
	Epoch, Seq  uint64
	Claim       bool
	ClosedEpoch uint64
	LastSeq     uint64
}

type readIn struct{}
type readOut struct{ Content string }

type producerState struct {
	Known          bool
	Epoch, LastSeq uint64
}

type modelState struct {
	Content string
	P       [nProducers]producerState
}

// decide is the producer rule of PROTOCOL.md 5.2.1, written from the
// protocol text: the answer to an append and whether it is applied.
func decide(cur producerState, in appendIn) (appendOut, bool) {
	switch {
	case !cur.Known && in.Seq != 0:
		return appendOut{Outcome: gap}, false
	case !cur.Known:
		return appendOut{Outcome: appended, Epoch: in.Epoch}, true
	case in.Epoch < cur.Epoch:
		return appendOut{Outcome: fenced, Epoch: cur.Epoch}, false
	case in.Epoch > cur.Epoch && in.Seq != 0:
		return appendOut{Outcome: gap, Epoch: cur.Epoch}, false
	case in.Epoch > cur.Epoch:
		return appendOut{Outcome: appended, Epoch: in.Epoch, Claim: true, ClosedEpoch: cur.Epoch, LastSeq: cur.LastSeq}, true
	case in.Seq <= cur.LastSeq:
		return appendOut{Outcome: duplicate, Epoch: in.Epoch, Seq: cur.LastSeq}, false
	case in.Seq == cur.LastSeq+1:
		return appendOut{Outcome: appended, Epoch: in.Epoch, Seq: in.Seq}, true
	default:
		return appendOut{Outcome: gap, Epoch: in.Epoch}, false
	}
}

func sameAnswer(want, got appendOut) bool {
	if want.Outcome != got.Outcome {
		return false
	}
	switch want.Outcome {
	case appended:
		return want.Epoch == got.Epoch && want.Seq == got.Seq && want.Claim == got.Claim &&
			(!want.Claim || want.ClosedEpoch == got.ClosedEpoch && want.LastSeq == got.LastSeq)
	case duplicate, fenced:
		return want.Epoch == got.Epoch && want.Seq == got.Seq
	}
	return true
}

var streamModel = porcupine.NondeterministicModel{
	Init: func() []interface{} { return []interface{}{modelState{}} },
	Step: func(state, input, output interface{}) []interface{} {
		s := state.(modelState)
		switch in := input.(type) {
		case readIn:
			if output.(readOut).Content == s.Content {
				return []interface{}{s}
			}
			return nil
		case appendIn:
			want, apply := decide(s.P[in.P], in)
			if apply {
				s.Content += in.Data
				s.P[in.P] = producerState{Known: true, Epoch: in.Epoch, LastSeq: in.Seq}
			}
			out := output.(appendOut)
			if out.Unknown || sameAnswer(want, out) {
				return []interface{}{s}
			}
			return nil
		}
		panic(fmt.Sprintf("unknown input %T", input))
	},
	Hash: func(state interface{}) uint64 {
		s := state.(modelState)
		h := fnv.New64a()
		h.Write([]byte(s.Content))
		fmt.Fprint(h, s.P)
		return h.Sum64()
	},
	DescribeOperation: func(input, output interface{}) string {
		switch in := input.(type) {
		case readIn:
			return fmt.Sprintf("read() -> %d bytes", len(output.(readOut).Content))
		case appendIn:
			return fmt.Sprintf("append(p%d, epoch %d, seq %d) -> %+v", in.P, in.Epoch, in.Seq, output)
		}
		return "?"
	},
}

type claimAck struct {
	P                    int
	Epoch                uint64
	Data                 string
	ClosedEpoch, LastSeq uint64
}

// load is the producers' and the reader's shared state.
type load struct {
	t     *testing.T
	c     *cluster
	start time.Time
	epoch atomic.Uint64 // the sequencer that hands out epochs
	stop  atomic.Bool
	http  *http.Client

	mu     sync.Mutex
	ops    []porcupine.Operation
	acked  map[string]bool
	sent   map[string]bool
	claims []claimAck
	counts map[string]int
}

func (l *load) now() int64 { return time.Since(l.start).Nanoseconds() }

func (l *load) add(client int, in, out interface{}, call, ret int64) {
	l.mu.Lock()
	l.ops = append(l.ops, porcupine.Operation{ClientId: client, Input: in, Output: out, Call: call, Return: ret})
	l.mu.Unlock()
}

func (l *load) count(k string) {
	l.mu.Lock()
	l.counts[k]++
	l.mu.Unlock()
}

func headerUint(h http.Header, k string) uint64 {
	n, _ := strconv.ParseUint(h.Get(k), 10, 64)
	return n
}

// doAppend sends one attempt through voter v. ok is false when the outcome
// is unknown (a 5xx, a broken connection, a timeout): the writer retries the
// same append, which the producer rule makes idempotent.
func (l *load) doAppend(client int, v *voter, in appendIn) (appendOut, bool) {
	l.mu.Lock()
	l.sent[in.Data] = true
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, v.url+streamPath, strings.NewReader(in.Data))
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("Producer-Id", "p"+strconv.Itoa(in.P))
	req.Header.Set("Producer-Epoch", strconv.FormatUint(in.Epoch, 10))
	req.Header.Set("Producer-Seq", strconv.FormatUint(in.Seq, 10))
	call := l.now()
	resp, err := l.http.Do(req)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	ret := l.now()
	if err != nil || resp.StatusCode >= 500 {
		l.add(client, in, appendOut{Unknown: true}, call, math.MaxInt64)
		l.count("unknown")
		return appendOut{}, false
	}
	h := resp.Header
	out := appendOut{Epoch: headerUint(h, "Producer-Epoch"), Seq: headerUint(h, "Producer-Seq")}
	switch resp.StatusCode {
	case http.StatusOK:
		out.Outcome = appended
		if h.Get("Producer-Closed-Epoch") != "" {
			out.Claim, out.ClosedEpoch, out.LastSeq = true, headerUint(h, "Producer-Closed-Epoch"), headerUint(h, "Producer-Closed-Seq")
		}
	case http.StatusNoContent:
		out.Outcome = duplicate
	case http.StatusForbidden:
		out.Outcome, out.Seq = fenced, 0
	default:
		l.t.Errorf("append %+v through voter %s: %s", in, v.id, resp.Status)
		return appendOut{}, false
	}
	l.add(client, in, out, call, ret)
	l.count(string(out.Outcome))
	l.mu.Lock()
	defer l.mu.Unlock()
	if out.Outcome == appended || out.Outcome == duplicate {
		l.acked[in.Data] = true
	}
	if out.Claim {
		l.claims = append(l.claims, claimAck{P: in.P, Epoch: in.Epoch, Data: in.Data, ClosedEpoch: out.ClosedEpoch, LastSeq: out.LastSeq})
	}
	return out, true
}

func chunkData(p int, epoch, seq uint64, w int) string {
	return fmt.Sprintf("p%d.e%d.s%d.w%d|", p, epoch, seq, w)
}

// writer claims an epoch, appends in it until fenced (or, now and then,
// claims a newer one itself), each attempt through a voter picked at random.
func (l *load) writer(w int, rng *rand.Rand) {
	p := w % nProducers
	epoch, seq := l.epoch.Add(1), uint64(0)
	for !l.stop.Load() {
		v := l.c.voters[rng.IntN(len(l.c.voters))]
		in := appendIn{P: p, Epoch: epoch, Seq: seq, Data: chunkData(p, epoch, seq, w)}
		out, ok := l.doAppend(w, v, in)
		if !ok {
			time.Sleep(time.Duration(5+rng.IntN(20)) * time.Millisecond)
			continue
		}
		switch out.Outcome {
		case appended, duplicate:
			seq++
			if rng.IntN(8) == 0 {
				epoch, seq = l.epoch.Add(1), 0
			}
		case fenced:
			epoch, seq = l.epoch.Add(1), 0
		default:
			l.t.Errorf("writer %d: append %+v answered %+v", w, in, out)
			return
		}
		time.Sleep(time.Duration(4+rng.IntN(8)) * time.Millisecond) // keeps the history small enough for porcupine
	}
}

// read returns the stream's bytes read through v (a leader read, forwarded
// by a follower).
func (l *load) read(v *voter) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, v.url+streamPath+"?offset=-1", nil)
	resp, err := l.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET through %s: %s: %s", v.id, resp.Status, b)
	}
	if resp.Header.Get("Stream-Up-To-Date") != "true" {
		return "", errors.New("read is not up to date (more than one read's worth of data)")
	}
	return string(b), nil
}

func (l *load) reader(client int, rng *rand.Rand) {
	for !l.stop.Load() {
		v := l.c.voters[rng.IntN(len(l.c.voters))]
		call := l.now()
		content, err := l.read(v)
		ret := l.now()
		if err == nil {
			l.add(client, readIn{}, readOut{content}, call, ret)
			l.count("read")
		}
		time.Sleep(time.Duration(10+rng.IntN(20)) * time.Millisecond)
	}
}

func TestStreamdCluster(t *testing.T) {
	rounds := 1
	if s := os.Getenv("CLUSTER_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("CLUSTER_ROUNDS=%q: want a positive integer", s)
		}
		rounds = n
	}
	c := newCluster(t, binary(t, "stream/streamd"), "A", "B", "C")
	for _, v := range c.voters {
		c.start(v)
	}
	c.leader(20 * time.Second)

	l := &load{t: t, c: c, start: time.Now(), acked: map[string]bool{}, sent: map[string]bool{},
		counts: map[string]int{}, http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}}
	// Create through a voter that is not the leader: forwarded.
	create := func() error {
		req, _ := http.NewRequest(http.MethodPut, c.follower(c.leader(10*time.Second)).url+streamPath, nil)
		req.Header.Set("Content-Type", "application/octet-stream")
		resp, err := l.http.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			return fmt.Errorf("PUT %s: %s", streamPath, resp.Status)
		}
		return nil
	}
	if err := create(); err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	for w := range nWriters {
		rng := rand.New(rand.NewPCG(1, uint64(w+1)))
		wg.Go(func() { l.writer(w, rng) })
	}
	rrng := rand.New(rand.NewPCG(1, 100))
	wg.Go(func() { l.reader(nWriters, rrng) })

	var faults []string
	pause := func(d time.Duration) { time.Sleep(d) }
	for range rounds {
		pause(800 * time.Millisecond)
		ld := c.leader(10 * time.Second)
		c.kill(ld)
		faults = append(faults, "kill leader "+ld.id)
		pause(1500 * time.Millisecond)
		c.start(ld)
		faults = append(faults, fmt.Sprintf("restart %s, caught up in %v", ld.id, c.caughtUp(ld, 15*time.Second).Round(time.Millisecond)))

		pause(500 * time.Millisecond)
		// A follower other than the voter just restarted, when there is one.
		cur := c.leader(10 * time.Second)
		f := c.follower(cur)
		for _, v := range c.voters {
			if v != cur && v != ld {
				f = v
			}
		}
		c.kill(f)
		faults = append(faults, "kill follower "+f.id)
		pause(1500 * time.Millisecond)
		c.start(f)
		faults = append(faults, fmt.Sprintf("restart %s, caught up in %v", f.id, c.caughtUp(f, 15*time.Second).Round(time.Millisecond)))

		pause(500 * time.Millisecond)
		ld = c.leader(10 * time.Second)
		c.isolate(ld)
		faults = append(faults, "isolate leader "+ld.id)
		// The cut took effect: the other two elect a leader among them.
		nl := c.leaderOtherThan(ld, 10*time.Second)
		faults = append(faults, "new leader "+nl.id)
		pause(1500 * time.Millisecond)
		c.isolate(nil)
		faults = append(faults, fmt.Sprintf("heal, %s caught up in %v", ld.id, c.caughtUp(ld, 15*time.Second).Round(time.Millisecond)))

		pause(500 * time.Millisecond)
		f = c.follower(c.leader(10 * time.Second))
		c.isolate(f)
		faults = append(faults, "isolate follower "+f.id)
		pause(1500 * time.Millisecond)
		c.isolate(nil)
		faults = append(faults, fmt.Sprintf("heal, %s caught up in %v", f.id, c.caughtUp(f, 15*time.Second).Round(time.Millisecond)))
	}
	pause(500 * time.Millisecond)
	l.stop.Store(true)
	wg.Wait()
	t.Logf("faults: %s", strings.Join(faults, "; "))
	l.check()
}

// runFigures are what one checked run did and found.
type runFigures struct {
	Ops        int // operations in the history porcupine checked
	Acked      int // acknowledged appends (appended or duplicate)
	Claims     int // acknowledged claims (an append that closed an epoch)
	Fenced     int // appends refused at a closed epoch (403)
	Violations int // lost, doubled or foreign appends, fence breaks, a non-linearizable history
}

// check ends a run whose load has stopped: a read through the leader
// settles everything in flight; every voter must then have applied the same
// log (equal applied index and state digest) and read the same bytes, every
// acknowledged append must be there once (contentProblems), and the history
// must be linearizable (porcupine, streamModel). Each problem is reported
// with t.Error and counted in the returned figures.
func (l *load) check() runFigures {
	t, c := l.t, l.c
	t.Helper()
	var fig runFigures
	ld := c.leader(10 * time.Second)
	call := l.now()
	final, err := l.read(ld)
	if err != nil {
		t.Fatal(err)
	}
	end := l.now()
	l.add(nWriters+1, readIn{}, readOut{final}, call, end)
	deadline := time.Now().Add(15 * time.Second)
	for {
		var views []view
		for _, v := range c.voters {
			w, err := c.view(v, true)
			if err != nil {
				t.Fatalf("voter %s: %v", v.id, err)
			}
			views = append(views, w)
		}
		same := true
		for _, w := range views[1:] {
			same = same && w.Applied == views[0].Applied && w.Digest == views[0].Digest
		}
		if same {
			t.Logf("all voters applied index %d, state digest %.12s…", views[0].Applied, views[0].Digest)
			break
		}
		if time.Now().After(deadline) {
			fig.Violations++
			t.Errorf("voters differ 15s after the load stopped: %+v", views)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, v := range c.voters {
		got, err := l.read(v)
		if err != nil {
			t.Fatalf("final read through %s: %v", v.id, err)
		}
		if got != final {
			fig.Violations++
			t.Errorf("final read through %s: %d bytes, through the leader %d", v.id, len(got), len(final))
		}
	}

	t.Logf("outcomes %v; %d bytes, %d claims acknowledged", l.counts, len(final), len(l.claims))
	for _, p := range contentProblems(l.acked, l.sent, l.claims, final) {
		fig.Violations++
		t.Error(p)
	}
	if l.counts[string(appended)] == 0 || len(l.claims) == 0 || l.counts["read"] == 0 {
		t.Errorf("no append, claim or read was acknowledged: the run tested nothing")
	}
	l.mu.Lock()
	sort.Slice(l.ops, func(i, j int) bool { return l.ops[i].Call < l.ops[j].Call })
	l.mu.Unlock()
	ops := resolveUnknown(l.ops, final, end)
	start := time.Now()
	res, _ := porcupine.CheckOperationsVerbose(streamModel.ToModel(), ops, 2*time.Minute)
	t.Logf("porcupine checked %d operations in %v: %s", len(ops), time.Since(start).Round(time.Millisecond), res)
	if res != porcupine.Ok {
		fig.Violations++
		t.Errorf("the history is not linearizable (%s)", res)
	}
	fig.Ops, fig.Acked, fig.Claims, fig.Fenced = len(ops), len(l.acked), len(l.claims), l.counts[string(fenced)]
	return fig
}

// resolveUnknown settles the appends whose outcome the client never learned,
// using the final stream (read when nothing is in flight any more) and the
// writer's retries. One whose data is absent changed nothing and is dropped.
// One whose data is present took effect after its call and before the
// writer's next answered operation returned: the writer retries the same
// append until it is answered, and Raft's log order puts every surviving
// earlier attempt before the retry (Raft §5.3, §5.4), so the retry's answer
// already reflects it. Its Return is set there (or, for a writer's last
// attempt, to end: the final read's return). This keeps porcupine's search
// small and does not weaken the check: it is a true bound on when the effect
// happened.
func resolveUnknown(ops []porcupine.Operation, final string, end int64) []porcupine.Operation {
	var out []porcupine.Operation
	for i, op := range ops {
		o, ok := op.Output.(appendOut)
		if ok && o.Unknown {
			if !strings.Contains(final, op.Input.(appendIn).Data) {
				continue
			}
			op.Return = end
			for _, next := range ops[i+1:] {
				if no, ok := next.Output.(appendOut); next.ClientId == op.ClientId && ok && !no.Unknown && next.Call > op.Call {
					op.Return = next.Return
					break
				}
			}
		}
		out = append(out, op)
	}
	return out
}

type chunk struct {
	P          int
	Epoch, Seq uint64
	Data       string
}

// contentProblems checks the final stream against what the producers were
// told; one line per problem.
func contentProblems(acked, sent map[string]bool, claims []claimAck, final string) []string {
	var probs []string
	bad := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	var chunks []chunk
	pos := map[string]int{}
	for _, d := range strings.SplitAfter(final, "|") {
		if d == "" {
			continue
		}
		var ch chunk
		var w int
		if _, err := fmt.Sscanf(d, "p%d.e%d.s%d.w%d|", &ch.P, &ch.Epoch, &ch.Seq, &w); err != nil {
			bad("chunk %q: %v", d, err)
			continue
		}
		ch.Data = d
		if _, dup := pos[d]; dup {
			bad("append %q is present twice", d)
		}
		if !sent[d] {
			bad("append %q is present but no producer sent it", d)
		}
		pos[d] = len(chunks)
		chunks = append(chunks, ch)
	}
	for d := range acked {
		if _, ok := pos[d]; !ok {
			bad("acknowledged append %q is missing", d)
		}
	}
	type ps struct {
		epoch, next uint64
		seen        bool
	}
	var cur [nProducers]ps
	for i, ch := range chunks {
		s := &cur[ch.P]
		switch {
		case s.seen && ch.Epoch < s.epoch:
			bad("chunk %d %q: epoch %d applied after epoch %d was claimed", i, ch.Data, ch.Epoch, s.epoch)
		case !s.seen || ch.Epoch > s.epoch:
			if ch.Seq != 0 {
				bad("chunk %d %q: epoch %d starts at seq %d", i, ch.Data, ch.Epoch, ch.Seq)
			}
			*s = ps{epoch: ch.Epoch, next: 1, seen: true}
		case ch.Seq != s.next:
			bad("chunk %d %q: seq %d, want %d", i, ch.Data, ch.Seq, s.next)
		default:
			s.next++
		}
	}
	for _, cl := range claims {
		at := pos[cl.Data]
		var last int64 = -1
		for i, ch := range chunks {
			if ch.P != cl.P {
				continue
			}
			if i < at && ch.Epoch == cl.ClosedEpoch {
				last = int64(ch.Seq)
			}
			if i > at && ch.Epoch < cl.Epoch {
				bad("claim %q (closing epoch %d) is followed by %q of an older epoch", cl.Data, cl.ClosedEpoch, ch.Data)
			}
		}
		if last != int64(cl.LastSeq) {
			bad("claim %q answered epoch %d closed at seq %d; the stream has its last seq at %d", cl.Data, cl.ClosedEpoch, cl.LastSeq, last)
		}
	}
	return probs
}
