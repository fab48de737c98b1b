package cluster_test

// The nemesis tests run each voter as a real OS process in a network
// namespace of its own (netlab) and inject faults from a seeded schedule
// while clients keep working against every voter, as Jepsen does (Kyle
// Kingsbury, "Jepsen" analyses, and the nemesis of jepsen.nemesis): SIGKILL
// and restart from the snapshot and log on disk, SIGSTOP/SIGCONT pauses
// longer than the election timeout, isolation of the leader, one-way and
// non-transitive partitions, flapping links, and heals. What they assert is
// independent of timing: the history the clients saw, and what every voter
// holds at the end.
//
// Figures (schedules, operations, faults injected, violations) are logged
// on one line starting "nemesis". Knobs:
//
//	NEMESIS_SEED=s       first schedule's seed (default 1; schedule i uses s+i)
//	NEMESIS_SCHEDULES=n  schedules per test, each on a fresh cluster (default 1)
//	NEMESIS_FAULTS=n     faults per schedule (default 6)
//	NEMESIS_LONG=1       shorthand for 5 schedules of 20 faults
//
// Rerun: go test ./tests/cluster -run Nemesis -v (as root; see netlab).

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

type nemesisConfig struct {
	seed              uint64
	schedules, faults int
}

func nemesisEnv(t *testing.T) nemesisConfig {
	t.Helper()
	cfg := nemesisConfig{seed: 1, schedules: 1, faults: 6}
	if os.Getenv("NEMESIS_LONG") != "" {
		cfg.schedules, cfg.faults = 5, 20
	}
	num := func(k string, dst *int) {
		if s := os.Getenv(k); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 {
				t.Fatalf("%s=%q: want a positive integer", k, s)
			}
			*dst = n
		}
	}
	num("NEMESIS_SCHEDULES", &cfg.schedules)
	num("NEMESIS_FAULTS", &cfg.faults)
	if s := os.Getenv("NEMESIS_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("NEMESIS_SEED=%q: want an unsigned integer", s)
		}
		cfg.seed = n
	}
	return cfg
}

// faultKinds are the nemesis's moves, in three groups (process deaths,
// process pauses, network faults); a schedule takes its faults from the
// groups in turn, so even a short one mixes all three. Each is undone
// before the next one starts (a kill is followed by a restart, a pause by
// SIGCONT, a cut by a heal), so that every schedule stays inside what Raft
// tolerates: at any moment a majority can be made to talk again.
var faultKinds = [][]string{{
	"kill-leader",   // SIGKILL the leader, restart it from its data directory
	"kill-follower", // the same for a follower
	"kill-majority", // SIGKILL two voters (no quorum), restart both
}, {
	"pause-leader",   // SIGSTOP the leader longer than the election timeout, SIGCONT
	"pause-follower", // the same for a follower
}, {
	"isolate-leader",   // cut the leader off both ways; clients keep writing to it
	"isolate-follower", // cut a follower off both ways
	"deaf-leader",      // one-way: the leader drops every packet from its peers
	"mute-leader",      // one-way: the peers drop every packet from the leader
	"bridge",           // non-transitive: the leader and one follower cannot talk, both talk to the third
	"flap",             // a random voter's links go down and up every 100-300 ms
}}

// fault is one step of a schedule: its kind, how long it is held and, for
// the moves that pick among voters, a random number that picks.
type fault struct {
	Kind string
	Hold time.Duration
	Pick int
}

// schedule returns n faults drawn from seed: the same seed, the same
// schedule (which voter is "the leader" is learned at run time).
func schedule(seed uint64, n int) []fault {
	rng := rand.New(rand.NewPCG(seed, 0x6e656d))
	out := make([]fault, n)
	for i := range out {
		g := faultKinds[(i+int(seed))%len(faultKinds)]
		out[i] = fault{Kind: g[rng.IntN(len(g))],
			Hold: time.Duration(600+rng.IntN(1400)) * time.Millisecond, Pick: rng.IntN(1 << 20)}
	}
	return out
}

// tally counts what the nemesis did, by kind.
type tally map[string]int

func (t tally) String() string {
	var ks []string
	n := 0
	for k, v := range t {
		ks = append(ks, fmt.Sprintf("%s %d", k, v))
		n += v
	}
	sort.Strings(ks)
	return fmt.Sprintf("%d (%s)", n, strings.Join(ks, ", "))
}

// --- streamd --------------------------------------------------------------

// newLabCluster makes a streamd cluster whose voters run in lab's
// namespaces, on fixed ports of their own addresses.
func newLabCluster(t *testing.T, lab *netlab, ids ...string) *cluster {
	c := &cluster{t: t, bin: binary(t, "stream/streamd"), byIP: map[string]*voter{}}
	root := t.TempDir()
	var peers []string
	for _, id := range ids {
		n := lab.nodes[id]
		v := &voter{id: id, ip: n.ip, raftBind: n.ip + ":7000", httpAddr: n.ip + ":8080",
			dir: filepath.Join(root, id), prefix: lab.exec(id)}
		v.url = "http://" + v.httpAddr
		peers = append(peers, id+"="+v.raftBind)
		c.voters = append(c.voters, v)
		c.byIP[n.ip] = v
	}
	for _, v := range c.voters {
		v.args = []string{"-id", v.id, "-addr", v.httpAddr, "-raft-addr", v.raftBind,
			"-data", v.dir, "-peers", strings.Join(peers, ","),
			"-raft-heartbeat", "300ms", "-raft-election", "300ms", "-raft-lease", "300ms",
			"-snapshot-threshold", "64", "-trailing-logs", "32", "-snapshot-interval", "100ms"}
	}
	t.Cleanup(func() {
		for _, v := range c.voters {
			if v.cmd != nil {
				v.cmd.Process.Signal(syscall.SIGCONT)
			}
			c.kill(v)
		}
		if t.Failed() {
			for _, v := range c.voters {
				b, _ := os.ReadFile(v.dir + ".log")
				t.Logf("voter %s's output:\n%s", v.id, lastLines(string(b), 30))
			}
		}
	})
	return c
}

// TestStreamdNemesis runs NEMESIS_SCHEDULES schedules of NEMESIS_FAULTS
// faults against three streamd voters in network namespaces, with four
// writers on two producer ids racing claims (each fenced writer claims a
// fresh epoch from a shared sequencer) and a reader, every attempt through
// a voter picked at random. After each schedule, with the network healed
// and every process running, load.check asserts that every acknowledged
// append is in every voter's stream exactly once, nothing is there that no
// producer sent, no append of a closed epoch follows the claim that closed
// it, all voters hold the same state, and the history is linearizable
// (porcupine). Reference: Raft §5.4, §8; PROTOCOL.md 5.2.1.
func TestStreamdNemesis(t *testing.T) {
	cfg := nemesisEnv(t)
	var total runFigures
	faults := tally{}
	for s := range cfg.schedules {
		seed := cfg.seed + uint64(s)
		ok := t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			fig := streamdSchedule(t, seed, cfg.faults, faults)
			total.Ops += fig.Ops
			total.Acked += fig.Acked
			total.Claims += fig.Claims
			total.Fenced += fig.Fenced
			total.Violations += fig.Violations
		})
		if !ok {
			break
		}
	}
	t.Logf("nemesis streamd: %d schedules (seeds %d..%d), %d operations checked, %d acknowledged appends, %d claims, %d stale-epoch appends refused, faults injected %v, violations %d",
		cfg.schedules, cfg.seed, cfg.seed+uint64(cfg.schedules)-1, total.Ops, total.Acked, total.Claims, total.Fenced, faults, total.Violations)
}

func streamdSchedule(t *testing.T, seed uint64, n int, faults tally) runFigures {
	lab := newNetlab(t, "A", "B", "C")
	c := newLabCluster(t, lab, "A", "B", "C")
	for _, v := range c.voters {
		c.start(v)
	}
	ld := c.leader(20 * time.Second)
	l := &load{t: t, c: c, start: time.Now(), acked: map[string]bool{}, sent: map[string]bool{},
		counts: map[string]int{}, http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}}
	put(t, c.follower(ld).url, streamPath, "application/octet-stream", "", http.StatusCreated)

	var wg sync.WaitGroup
	for w := range nWriters {
		rng := rand.New(rand.NewPCG(seed, uint64(w+1)))
		wg.Go(func() { l.writer(w, rng) })
	}
	rrng := rand.New(rand.NewPCG(seed, 100))
	wg.Go(func() { l.reader(nWriters, rrng) })
	defer func() { // a Fatal in the schedule still stops the load
		l.stop.Store(true)
		wg.Wait()
	}()

	g := nemesisTarget{
		kill:        func(i int) { c.kill(c.voters[i]) },
		start:       func(i int) { c.start(c.voters[i]) },
		signal:      func(i int, sig syscall.Signal) { c.voters[i].cmd.Process.Signal(sig) },
		leaderOther: func(i int) { c.leaderOtherThan(c.voters[i], 20*time.Second) },
	}
	for _, v := range c.voters {
		g.ids = append(g.ids, v.id)
	}
	var log []string
	for i, f := range schedule(seed, n) {
		time.Sleep(300 * time.Millisecond)
		ld := c.leader(20 * time.Second)
		li := 0
		for j, v := range c.voters {
			if v == ld {
				li = j
			}
		}
		desc := inject(t, g, lab, f, li, (li+1+f.Pick%(len(g.ids)-1))%len(g.ids))
		faults[f.Kind]++
		log = append(log, fmt.Sprintf("%d %s", i, desc))
		// Healed, every voter running: the group must elect a leader again.
		c.leader(20 * time.Second)
	}
	time.Sleep(500 * time.Millisecond)
	l.stop.Store(true)
	wg.Wait()
	t.Logf("schedule %d: %s", seed, strings.Join(log, "; "))
	return l.check()
}

// nemesisTarget is what a fault acts on: a group of voters indexed 0..n-1.
type nemesisTarget struct {
	ids         []string
	kill, start func(i int)
	signal      func(i int, sig syscall.Signal)
	leaderOther func(i int) // waits until a voter other than i leads (Fatal otherwise)
}

// inject carries out f with ld the current leader and fol a follower
// (indexes into g.ids), undoes it, and describes what it did.
func inject(t *testing.T, g nemesisTarget, lab *netlab, f fault, ld, fol int) string {
	hold := func() { time.Sleep(f.Hold) }
	id := func(i int) string { return g.ids[i] }
	switch f.Kind {
	case "kill-leader", "kill-follower":
		v := ld
		if f.Kind == "kill-follower" {
			v = fol
		}
		g.kill(v)
		hold()
		g.start(v)
		return fmt.Sprintf("kill %s %s %v, restart", strings.TrimPrefix(f.Kind, "kill-"), id(v), f.Hold)
	case "kill-majority":
		g.kill(ld)
		g.kill(fol)
		hold()
		g.start(fol)
		g.start(ld)
		return fmt.Sprintf("kill %s and %s %v, restart", id(ld), id(fol), f.Hold)
	case "pause-leader", "pause-follower":
		v := ld
		if f.Kind == "pause-follower" {
			v = fol
		}
		g.signal(v, syscall.SIGSTOP)
		hold()
		g.signal(v, syscall.SIGCONT)
		return fmt.Sprintf("pause %s %v", id(v), f.Hold)
	case "isolate-leader", "isolate-follower":
		v := ld
		if f.Kind == "isolate-follower" {
			v = fol
		}
		lab.setCuts(lab.isolation(id(v))...)
		if v == ld {
			// The cut is real: the other two elect a leader among them
			// while clients still reach the old one.
			g.leaderOther(ld)
		}
		hold()
		lab.heal()
		return fmt.Sprintf("isolate %s %v, heal", id(v), f.Hold)
	case "deaf-leader", "mute-leader":
		var cuts [][2]string
		for i := range g.ids {
			if i == ld {
				continue
			}
			if f.Kind == "deaf-leader" {
				cuts = append(cuts, [2]string{id(ld), id(i)})
			} else {
				cuts = append(cuts, [2]string{id(i), id(ld)})
			}
		}
		lab.setCuts(cuts...)
		hold()
		lab.heal()
		return fmt.Sprintf("%s %s %v, heal", f.Kind, id(ld), f.Hold)
	case "bridge":
		lab.setCuts([2]string{id(ld), id(fol)}, [2]string{id(fol), id(ld)})
		hold()
		lab.heal()
		return fmt.Sprintf("cut %s-%s (both still reach the third) %v, heal", id(ld), id(fol), f.Hold)
	case "flap":
		v := f.Pick % len(g.ids)
		rng := rand.New(rand.NewPCG(uint64(f.Pick), 1))
		flips := 0
		for end := time.Now().Add(f.Hold); time.Now().Before(end); flips++ {
			if flips%2 == 0 {
				lab.setCuts(lab.isolation(id(v))...)
			} else {
				lab.heal()
			}
			time.Sleep(time.Duration(100+rng.IntN(200)) * time.Millisecond)
		}
		lab.heal()
		return fmt.Sprintf("flap %s %d times in %v, heal", id(v), flips, f.Hold)
	}
	t.Fatalf("unknown fault %q", f.Kind)
	return ""
}
