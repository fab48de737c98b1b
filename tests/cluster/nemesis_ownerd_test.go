package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/ownership-book/ownership/examples/ownership"
	"github.com/ownership-book/ownership/examples/ownership/service"
)

// ownIn is one call to the ownership service on actor x: a transition
// (begin, complete, acquire) by Caller at Epoch, or a read of x's state.
type ownIn struct {
	Op     string // "begin", "complete", "acquire", "read"
	Caller ownership.NodeID
	Epoch  ownership.Epoch
	To     ownership.NodeID
}

// ownOut is what the call returned: x's state after it, or Unknown when
// the client never learned (a timeout, a broken connection, a refusal
// after one of those: the call may or may not have taken effect).
type ownOut struct {
	Unknown bool
	State   string
}

// ownStep is the service's rule for one transition, from the pure
// transitions of package ownership plus the epoch the caller names: it
// must be the current owner's epoch (begin), the handover's old epoch
// (complete) or the free epoch (acquire). ok is false for a call the
// service must refuse.
func ownStep(s ownership.State, in ownIn) (ownership.State, bool) {
	var next ownership.State
	var err error
	switch in.Op {
	case "begin":
		o, isOwned := s.(ownership.Owned)
		if !isOwned || o.Epoch != in.Epoch {
			return s, false
		}
		next, err = ownership.BeginTransfer(s, in.Caller, in.To)
	case "complete":
		tr, isTr := s.(ownership.Transferring)
		if !isTr || tr.OldEpoch != in.Epoch {
			return s, false
		}
		next, err = ownership.CompleteRelease(s, in.Caller)
	case "acquire":
		u, isU := s.(ownership.Unowned)
		if !isU || u.Epoch != in.Epoch {
			return s, false
		}
		next, err = ownership.Acquire(s, in.Caller)
	default:
		panic("unknown op " + in.Op)
	}
	return next, err == nil
}

// ownerModel checks a history of calls on x against one copy of the state
// machine (linearizability; Herlihy and Wing, "Linearizability: A
// Correctness Condition for Concurrent Objects", 1990).
var ownerModel = porcupine.NondeterministicModel{
	Step: func(state, input, output interface{}) []interface{} {
		s, in, out := state.(ownership.State), input.(ownIn), output.(ownOut)
		if in.Op == "read" {
			if out.State == s.String() {
				return []interface{}{s}
			}
			return nil
		}
		next, ok := ownStep(s, in)
		switch {
		case out.Unknown && ok:
			return []interface{}{s, next}
		case out.Unknown:
			return []interface{}{s}
		case ok && next.String() == out.State:
			return []interface{}{next}
		}
		return nil
	},
	Hash: func(state interface{}) uint64 {
		var h uint64 = 14695981039346656037
		for _, b := range []byte(state.(ownership.State).String()) {
			h = (h ^ uint64(b)) * 1099511628211
		}
		return h
	},
	DescribeOperation: func(input, output interface{}) string {
		in, out := input.(ownIn), output.(ownOut)
		return fmt.Sprintf("%s(%s, %d, %s) -> %+v", in.Op, in.Caller, in.Epoch, in.To, out)
	},
}

// ownerFigures are what one ownerd schedule did and found.
type ownerFigures struct {
	Ops, Handovers, StaleRefused, Violations int
}

// TestOwnerdNemesis runs NEMESIS_SCHEDULES schedules of NEMESIS_FAULTS
// faults (the same moves as TestStreamdNemesis) against three ownerd voters
// in network namespaces, Raft between them over mutual TLS, while a driver
// hands x back and forth between A and B (BeginTransfer, CompleteRelease,
// Acquire, each as the node the rule names) and a reader reads x's state
// through the leader. It asserts that
//
//   - the history of calls is linearizable against the pure transitions of
//     package ownership (porcupine, ownerModel), so in particular
//   - epochs never go backwards: an answer that returned before another
//     call began never carries a higher epoch than that call's answer, across
//     kills and restarts of the voters;
//   - a stale write is refused: after each acquire, a write to a fenced
//     store (service.Store, checking tokens with the service) with the
//     previous holder's token fails with ErrFenced, and one with the new
//     token is accepted;
//   - at the end x's epoch is at least every epoch ever acknowledged.
//
// Reference: chapter "Ownership: epochs and fencing"; Raft §5.4, §8.
func TestOwnerdNemesis(t *testing.T) {
	cfg := nemesisEnv(t)
	var total ownerFigures
	faults := tally{}
	for s := range cfg.schedules {
		seed := cfg.seed + uint64(s)
		ok := t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			fig := ownerdSchedule(t, seed, cfg.faults, faults)
			total.Ops += fig.Ops
			total.Handovers += fig.Handovers
			total.StaleRefused += fig.StaleRefused
			total.Violations += fig.Violations
		})
		if !ok {
			break
		}
	}
	t.Logf("nemesis ownerd: %d schedules (seeds %d..%d), %d operations checked, %d handovers, %d stale writes refused, faults injected %v, violations %d",
		cfg.schedules, cfg.seed, cfg.seed+uint64(cfg.schedules)-1, total.Ops, total.Handovers, total.StaleRefused, faults, total.Violations)
}

func ownerdSchedule(t *testing.T, seed uint64, n int, faults tally) ownerFigures {
	ids := []string{"v1", "v2", "v3"}
	lab := newNetlab(t, ids...)
	bin := binary(t, "ownership/ownerd")
	root := t.TempDir()
	certs := filepath.Join(root, "certs")
	if out, err := exec.Command(bin, "-init-ca", certs).CombinedOutput(); err != nil {
		t.Fatalf("ownerd -init-ca: %v\n%s", err, out)
	}
	var ps []*proc
	var peers, addrs []string
	for _, id := range ids {
		ip := lab.nodes[id].ip
		p := &proc{id: id, addr: ip + ":5001", raft: ip + ":6001", prefix: lab.exec(id)}
		peers = append(peers, id+"="+p.raft)
		addrs = append(addrs, p.addr)
		ps = append(ps, p)
	}
	logs := map[string]*os.File{}
	for _, p := range ps {
		p.args = []string{"-id", p.id, "-addr", p.addr, "-raft-addr", p.raft, "-data", filepath.Join(root, p.id),
			"-ca", certs, "-peers", strings.Join(peers, ",")}
		f, err := os.Create(filepath.Join(root, p.id+".log"))
		if err != nil {
			t.Fatal(err)
		}
		logs[p.id], p.stderr = f, f
	}
	t.Cleanup(func() {
		for _, p := range ps {
			if p.cmd != nil {
				p.cmd.Process.Signal(syscall.SIGCONT)
			}
			p.kill()
			logs[p.id].Close()
			if t.Failed() {
				b, _ := os.ReadFile(filepath.Join(root, p.id+".log"))
				t.Logf("voter %s's stderr:\n%s", p.id, lastLines(string(b), 30))
			}
		}
	})
	for _, p := range ps {
		p.start(t, bin)
	}
	caPEM, _ := os.ReadFile(filepath.Join(certs, "ca.pem"))
	caKey, _ := os.ReadFile(filepath.Join(certs, "ca.key"))
	auth, err := service.LoadAuthority(caPEM, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kvCert := mustCert(t, certs, "kv")
	clients := map[ownership.NodeID]*service.Client{}
	for _, n := range []ownership.NodeID{"A", "B"} {
		clients[n] = service.NewClient(auth, mustCert(t, certs, string(n)), addrs...)
	}
	kv := service.NewClient(auth, kvCert, addrs...)
	defer kv.Close()
	store := service.NewStore("x", kv)

	// leaderOf returns the index of a voter that answers State (only the
	// leader does), or -1.
	leaderOf := func(skip int) int {
		for i, p := range ps {
			if i == skip || p.cmd == nil {
				continue
			}
			c := service.NewClient(auth, kvCert, p.addr)
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			_, err := c.State(ctx, "x")
			cancel()
			c.Close()
			if err == nil {
				return i
			}
		}
		return -1
	}
	waitLeader := func(skip int) int {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			if i := leaderOf(skip); i >= 0 {
				return i
			}
			if time.Now().After(deadline) {
				t.Fatalf("no ownerd voter (other than %d) leads after 20s", skip)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	// A takes x at epoch 1 once the leader has created it.
	bctx, bcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer bcancel()
	var tok ownership.Token
	for {
		if tok, err = clients["A"].Acquire(bctx, "x", 1); err == nil {
			break
		}
		if bctx.Err() != nil {
			t.Fatalf("A could not acquire x at epoch 1: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}

	var (
		start   = time.Now()
		mu      sync.Mutex
		ops     []porcupine.Operation
		stop    atomic.Bool
		fig     ownerFigures
		maxAck  ownership.Epoch
		accepts int
	)
	now := func() int64 { return time.Since(start).Nanoseconds() }
	record := func(client int, in ownIn, out ownOut, call, ret int64) {
		mu.Lock()
		ops = append(ops, porcupine.Operation{ClientId: client, Input: in, Output: out, Call: call, Return: ret})
		mu.Unlock()
	}
	violation := func(format string, args ...any) {
		mu.Lock()
		fig.Violations++
		mu.Unlock()
		t.Errorf(format, args...)
	}
	read := func(client int) (ownership.State, bool) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		call := now()
		s, err := kv.State(ctx, "x")
		if err != nil {
			return nil, false
		}
		record(client, ownIn{Op: "read"}, ownOut{State: s.String()}, call, now())
		return s, true
	}
	initial := ownership.State(ownership.Owned{Owner: "A", Epoch: 1})

	var wg sync.WaitGroup
	// The driver: one handover step at a time, as the node the rule names.
	wg.Go(func() {
		cur, prev := initial, tok
		other := map[ownership.NodeID]ownership.NodeID{"A": "B", "B": "A"}
		for !stop.Load() {
			var in ownIn
			switch s := cur.(type) {
			case ownership.Owned:
				in = ownIn{Op: "begin", Caller: s.Owner, Epoch: s.Epoch, To: other[s.Owner]}
			case ownership.Transferring:
				in = ownIn{Op: "complete", Caller: s.From, Epoch: s.OldEpoch}
			case ownership.Unowned:
				in = ownIn{Op: "acquire", Caller: s.IntendedOwner, Epoch: s.Epoch}
			}
			c := clients[in.Caller]
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			call := now()
			var next ownership.State
			var got ownership.Token
			var err error
			switch in.Op {
			case "begin":
				next, err = c.BeginTransfer(ctx, "x", in.Epoch, in.To)
			case "complete":
				next, err = c.CompleteRelease(ctx, "x", in.Epoch)
			case "acquire":
				got, err = c.Acquire(ctx, "x", in.Epoch)
				next = ownership.Owned{Owner: in.Caller, Epoch: in.Epoch}
			}
			cancel()
			ret := now()
			if err != nil {
				record(0, in, ownOut{Unknown: true}, call, math.MaxInt64)
				// Learn where x is before the next step.
				for !stop.Load() {
					if s, ok := read(0); ok {
						cur = s
						break
					}
					time.Sleep(50 * time.Millisecond)
				}
				continue
			}
			record(0, in, ownOut{State: next.String()}, call, ret)
			cur = next
			mu.Lock()
			maxAck = max(maxAck, ownership.CurrentEpoch(next))
			mu.Unlock()
			if in.Op != "acquire" {
				continue
			}
			fig.Handovers++
			// The previous holder writes late: fenced. The new one: accepted.
			wctx, wcancel := context.WithTimeout(context.Background(), 3*time.Second)
			if err := store.Put(wctx, prev, "k", "stale"); errors.Is(err, service.ErrFenced) {
				fig.StaleRefused++
			} else if err == nil {
				violation("a write with %v was accepted after %v was acquired", prev, got)
			}
			if err := store.Put(wctx, got, "k", "fresh"); err == nil {
				accepts++
			}
			wcancel()
			prev = got
		}
	})
	wg.Go(func() {
		for !stop.Load() {
			read(1)
			time.Sleep(30 * time.Millisecond)
		}
	})
	defer func() {
		stop.Store(true)
		wg.Wait()
	}()

	g := nemesisTarget{ids: ids,
		kill:        func(i int) { ps[i].kill() },
		start:       func(i int) { ps[i].start(t, bin) },
		signal:      func(i int, sig syscall.Signal) { ps[i].cmd.Process.Signal(sig) },
		leaderOther: func(i int) { waitLeader(i) },
	}
	var log []string
	for i, f := range schedule(seed, n) {
		time.Sleep(300 * time.Millisecond)
		li := waitLeader(-1)
		desc := inject(t, g, lab, f, li, (li+1+f.Pick%(len(ids)-1))%len(ids))
		faults[f.Kind]++
		log = append(log, fmt.Sprintf("%d %s", i, desc))
		waitLeader(-1)
	}
	time.Sleep(500 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	t.Logf("schedule %d: %s", seed, strings.Join(log, "; "))

	// The final state, read when nothing is in flight.
	var final ownership.State
	for deadline := time.Now().Add(20 * time.Second); final == nil; {
		if s, ok := read(2); ok {
			final = s
		} else if time.Now().After(deadline) {
			t.Fatal("x cannot be read 20s after the schedule ended")
		}
	}
	if e := ownership.CurrentEpoch(final); e < maxAck {
		violation("x is %v at the end, below epoch %d acknowledged earlier", final, maxAck)
	}
	if fig.Handovers == 0 || accepts == 0 {
		t.Errorf("%d handovers, %d writes with a current token accepted: the run tested nothing", fig.Handovers, accepts)
	}

	// Epochs never go backwards in real time.
	sort.Slice(ops, func(i, j int) bool { return ops[i].Call < ops[j].Call })
	type done struct {
		ret   int64
		epoch ownership.Epoch
		what  string
	}
	var known []done
	for _, op := range ops {
		if out := op.Output.(ownOut); !out.Unknown {
			s := parseState(t, out.State)
			known = append(known, done{op.Return, ownership.CurrentEpoch(s), ownerModel.DescribeOperation(op.Input, op.Output)})
		}
	}
	byRet := append([]done(nil), known...)
	sort.Slice(byRet, func(i, j int) bool { return byRet[i].ret < byRet[j].ret })
	var best done
	j := 0
	for _, op := range ops {
		for ; j < len(byRet) && byRet[j].ret < op.Call; j++ {
			if byRet[j].epoch > best.epoch {
				best = byRet[j]
			}
		}
		if out := op.Output.(ownOut); !out.Unknown {
			if e := ownership.CurrentEpoch(parseState(t, out.State)); e < best.epoch {
				violation("epoch went backwards: %s answered epoch %d after %s had answered %d",
					ownerModel.DescribeOperation(op.Input, op.Output), e, best.what, best.epoch)
			}
		}
	}

	model := ownerModel
	model.Init = func() []interface{} { return []interface{}{initial} }
	res, _ := porcupine.CheckOperationsVerbose(model.ToModel(), ops, 2*time.Minute)
	t.Logf("x is %v; porcupine checked %d operations: %s; %d handovers, %d stale writes refused", final, len(ops), res, fig.Handovers, fig.StaleRefused)
	if res != porcupine.Ok {
		violation("the history of x is not linearizable (%s)", res)
	}
	fig.Ops = len(ops)
	for _, c := range clients {
		c.Close()
	}
	return fig
}

// parseState reads back a State's String form.
func parseState(t *testing.T, s string) ownership.State {
	t.Helper()
	var a, b string
	var e, f uint64
	switch {
	case strings.HasPrefix(s, "Owned("):
		if _, err := fmt.Sscanf(s, "Owned(%1s, %d)", &a, &e); err == nil {
			return ownership.Owned{Owner: ownership.NodeID(a), Epoch: ownership.Epoch(e)}
		}
	case strings.HasPrefix(s, "Unowned("):
		if _, err := fmt.Sscanf(s, "Unowned(%d, %1s)", &e, &a); err == nil {
			return ownership.Unowned{Epoch: ownership.Epoch(e), IntendedOwner: ownership.NodeID(a)}
		}
	case strings.HasPrefix(s, "Transferring("):
		if _, err := fmt.Sscanf(s, "Transferring(%1s, %1s, %d, %d)", &a, &b, &e, &f); err == nil {
			return ownership.Transferring{From: ownership.NodeID(a), To: ownership.NodeID(b), OldEpoch: ownership.Epoch(e), NewEpoch: ownership.Epoch(f)}
		}
	}
	t.Fatalf("cannot parse state %q", s)
	return nil
}
