package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ownership-book/ownership/examples/ownership"
	"github.com/ownership-book/ownership/examples/replica"
	"github.com/ownership-book/ownership/examples/replica/replicatest"
	"github.com/ownership-book/ownership/internal/freeport"
)

// freeAddr returns a loopback address free now, below the kernel's
// ephemeral range (see package freeport).
func freeAddr(t *testing.T) string {
	t.Helper()
	addr, err := freeport.Pick("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

func openVoter(t *testing.T, dir, bind string) (*replica.Group, *Machine) {
	t.Helper()
	m := NewMachine()
	g, err := replica.Open(replica.Config{
		ID: "v1", Dir: dir, Bind: bind, Voters: []replica.Peer{{ID: "v1", Address: bind}},
		HeartbeatTimeout: 100 * time.Millisecond, ElectionTimeout: 100 * time.Millisecond,
		LeaderLeaseTimeout: 100 * time.Millisecond,
	}, m)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	if _, err := g.WaitLeader(ctx); err != nil {
		t.Fatal(err)
	}
	return g, m
}

// The owner record is the Raft log (raft-boltdb on disk): a voter closed
// and reopened from its directory has every acknowledged transition, so the
// epochs of the actor continue upwards and the old owner's token stays stale.
// Reference: chapter "The ownership service", section "The owner record in
// Raft".
func TestRaftRecordSurvivesRestart(t *testing.T) {
	dir, bind := t.TempDir(), freeAddr(t)
	g, m := openVoter(t, dir, bind)
	auth := newAuthority(t)
	e := startEnv(t, auth, NewRaftRegistry(g, m))
	tokA := e.ownedBy("x", "A")
	ctx := ctxT(t)
	if _, err := e.client("A").BeginTransfer(ctx, "x", 1, "B"); err != nil {
		t.Fatal(err)
	}
	before := e.record("x")
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	// A closed voter refuses, and the refusal changes nothing. (One request,
	// not the client's retrying call: the refusal is what is checked, not
	// how long the client keeps trying.)
	status, err := e.client("A").Post(ctx, PathCompleteRelease, []byte(`{"actor":"x","epoch":1}`))
	if !errors.Is(err, ErrNotLeader) || status != http.StatusMisdirectedRequest {
		t.Fatalf("CompleteRelease on a closed voter: %d, %v; want 421 and ErrNotLeader", status, err)
	}

	g2, m2 := openVoter(t, dir, bind)
	defer g2.Close()
	e2 := startEnv(t, auth, NewRaftRegistry(g2, m2))
	if err := g2.LeaderRead(ctx); err != nil {
		t.Fatal(err)
	}
	if got := e2.record("x"); got != before {
		t.Fatalf("after restart:\n got %s\nwant %s", got, before)
	}
	if _, err := e2.client("A").CompleteRelease(ctx, "x", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := e2.client("B").Acquire(ctx, "x", 2); err != nil {
		t.Fatal(err)
	}
	v, err := e2.client("kv").Validate(ctx, tokA)
	if err != nil || v.Valid || v.CurrentEpoch != 2 {
		t.Fatalf("A's token after restart: %+v, %v; want stale at epoch 2", v, err)
	}
}

// Every voter applies the same entries to the same record and refuses the
// same bad ones alike, so a refused request is a log entry that changes
// nothing anywhere.
func TestMachineRefusesAlikeAndChangesNothing(t *testing.T) {
	m := NewMachine()
	ok := m.Apply(mustJSON(Request{Op: OpCreate, Actor: "x", To: "A"}))
	if string(ok) != `{"state":{"kind":"Unowned","epoch":1,"intended_owner":"A"},"token":{"actor":"","epoch":0,"holder":""}}` {
		t.Fatalf("create outcome %s", ok)
	}
	snap, err := m.Snapshot()
	if err != nil || len(snap) == 0 {
		t.Fatalf("snapshot after create: %q, %v", snap, err)
	}
	for _, cmd := range [][]byte{
		[]byte(`not json`),
		mustJSON(Request{Op: ownership.OpAcquire, Actor: "x", Caller: "B", Epoch: 1}),
		mustJSON(Request{Op: ownership.OpAcquire, Actor: "x", Caller: "A", Epoch: 0}),
		mustJSON(Request{Op: "Steal", Actor: "x", Caller: "A"}),
		mustJSON(Request{Op: ownership.OpAcquire, Actor: "y", Caller: "A", Epoch: 1}),
	} {
		out := m.Apply(cmd)
		if !containsError(out) {
			t.Fatalf("entry %s: outcome %s, want an error", cmd, out)
		}
		if got, err := m.Snapshot(); err != nil || string(got) != string(snap) {
			t.Fatalf("entry %s changed the record: %s (%v)", cmd, got, err)
		}
	}
	other := NewMachine()
	if err := other.Restore(snap); err != nil {
		t.Fatal(err)
	}
	if got, err := other.Snapshot(); err != nil || string(got) != string(snap) {
		t.Fatalf("restored snapshot %s (%v), want %s", got, err, snap)
	}
}

func containsError(out []byte) bool {
	var o outcome
	return jsonUnmarshal(out, &o) == nil && o.Error != nil && o.Error.Rule != ""
}

// voterHandler serves whichever Server currently fronts a voter (a new one
// after each restart).
type voterHandler struct{ s atomic.Pointer[Server] }

func (h *voterHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.s.Load().ServeHTTP(w, r) }

// Three voters, the leader killed again and again while handovers run over
// the wire. Checked: no two owners ever (at most one acknowledged token
// passes the fence check of any state read), epochs never go backwards for
// a client across leaders, and every transition acknowledged to a caller is
// in the final record of every voter.
// Reference: chapter "The ownership service", section "The owner record in
// Raft"; Ongaro and Ousterhout, "In Search of an Understandable Consensus
// Algorithm", 2014, section 5.4 (Leader Completeness).
func TestThreeVotersLeaderKilledDuringHandovers(t *testing.T) {
	const kills = 4
	auth := newAuthority(t)
	roster, _ := NewRoster(testRoster...)
	c := replicatest.New(t, replicatest.Options{Voters: 3, Dir: t.TempDir()}, func(string) replica.Machine { return NewMachine() })
	handlers := map[string]*voterHandler{}
	var addrs []string
	front := func(id string) {
		handlers[id].s.Store(NewServer(NewRaftRegistry(c.Group(id), c.Machine(id).(*Machine)), roster))
	}
	for _, id := range c.IDs() {
		handlers[id] = &voterHandler{}
		front(id)
		cert, err := auth.IssueServer(ownership.NodeID("voter-" + id))
		if err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		hs := &http.Server{Handler: handlers[id], TLSConfig: ServerTLS(auth, cert, roster), ErrorLog: NewServer(nil, roster).HTTPServer(auth, cert).ErrorLog}
		go hs.ServeTLS(l, "", "")
		t.Cleanup(func() { hs.Close() })
		addrs = append(addrs, l.Addr().String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	actors := []ownership.ActorID{"x", "y"}
	for _, a := range actors {
		// The coordinator creates each actor on whichever voter leads. An
		// early election may make the outcome unknown; a retry that finds
		// the actor already there is a success.
		for {
			leader, err := c.WaitLeader(ctx)
			if err != nil {
				t.Fatal(err)
			}
			_, err = handlers[leader].s.Load().Create(ctx, a, "A")
			if err == nil || errors.Is(err, ErrActorExists) {
				break
			}
			if !errors.Is(err, ErrNotLeader) && !errors.Is(err, ErrUnavailable) {
				t.Fatal(err)
			}
		}
	}
	clients := map[ownership.NodeID]*Client{}
	for _, n := range []ownership.NodeID{"A", "B", "C", "kv"} {
		clients[n] = clientFor(t, auth, n, addrs...)
	}

	type ack struct {
		state ownership.State
		token ownership.Token
	}
	var (
		mu       sync.Mutex
		acked    = map[ownership.ActorID][]ack{}
		problems []string
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		problems = append(problems, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, actor := range actors {
		wg.Add(1)
		go func() {
			defer wg.Done()
			next := map[ownership.NodeID]ownership.NodeID{"A": "B", "B": "C", "C": "A"}
			var seen ownership.Epoch
			observe := func(s ownership.State, what string) {
				e := ownership.CurrentEpoch(s)
				if e < seen {
					fail("%s: %s shows epoch %d after epoch %d was seen", actor, what, e, seen)
				}
				seen = max(seen, e)
				// No two owners: of the acknowledged tokens, at most one
				// passes the fence check of this one state.
				mu.Lock()
				valid := 0
				for _, a := range acked[actor] {
					if a.token != (ownership.Token{}) && ownership.ValidFence(s, a.token.Epoch) {
						valid++
					}
				}
				mu.Unlock()
				if valid > 1 {
					fail("%s: %d acknowledged tokens pass the fence of %v", actor, valid, s)
				}
			}
			for {
				select {
				case <-stop:
					return
				default:
				}
				rctx, rcancel := context.WithTimeout(ctx, 2*time.Second)
				s, err := clients["kv"].State(rctx, actor)
				if err != nil {
					rcancel()
					continue // no leader yet; read again
				}
				observe(s, "read")
				var a ack
				switch s := s.(type) {
				case ownership.Owned:
					a.state, err = clients[s.Owner].BeginTransfer(rctx, actor, s.Epoch, next[s.Owner])
				case ownership.Transferring:
					a.state, err = clients[s.From].CompleteRelease(rctx, actor, s.OldEpoch)
				case ownership.Unowned:
					a.token, err = clients[s.IntendedOwner].Acquire(rctx, actor, s.Epoch)
					a.state = ownership.Owned{Owner: a.token.Holder, Epoch: a.token.Epoch}
				}
				rcancel()
				if err != nil {
					continue // unknown outcome or a lost race with our own retry: read again
				}
				observe(a.state, "acknowledged transition")
				mu.Lock()
				acked[actor] = append(acked[actor], a)
				mu.Unlock()
			}
		}()
	}

	ackedCount := func() int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, as := range acked {
			n += len(as)
		}
		return n
	}
	midHandover := 0
	for k := 0; k < kills; k++ {
		startAcks := ackedCount()
		// Let some handovers complete under this leader, then kill it while
		// an actor is in the middle of one.
		for ackedCount() < startAcks+5 && ctx.Err() == nil {
			time.Sleep(5 * time.Millisecond)
		}
		leader, err := c.WaitLeader(ctx)
		if err != nil {
			t.Fatal(err)
		}
		m := c.Machine(leader).(*Machine)
		for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if slices.ContainsFunc(m.Actors(), func(a *ownership.Actor) bool { _, owned := a.State().(ownership.Owned); return !owned }) {
				midHandover++
				break
			}
		}
		if err := c.Kill(leader); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		if err := c.Restart(leader); err != nil {
			t.Fatal(err)
		}
		front(leader)
	}
	// Handovers go on after the last restart.
	for n := ackedCount(); ackedCount() < n+5 && ctx.Err() == nil; {
		time.Sleep(5 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if err := c.WaitConverged(ctx); err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	if midHandover < kills {
		t.Errorf("only %d of %d kills hit an actor mid-handover", midHandover, kills)
	}
	// Every voter holds the same record, and every acknowledged transition
	// is in it.
	var snap []byte
	for _, id := range c.Running() {
		s, err := c.Machine(id).(*Machine).Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		if snap != nil && string(s) != string(snap) {
			t.Fatalf("voter %s's record differs:\n%s\n%s", id, s, snap)
		}
		snap = s
	}
	final := c.Machine(c.Running()[0]).(*Machine)
	total := 0
	for _, actor := range actors {
		rec, err := final.Read(actor)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range acked[actor] {
			total++
			if e := ownership.CurrentEpoch(a.state); e > rec.CurrentEpoch() {
				t.Errorf("%s: acknowledged %v is newer than the final state %v", actor, a.state, rec.State())
			}
			if a.token != (ownership.Token{}) && !rec.WasIssued(a.token) {
				t.Errorf("%s: acknowledged %v is not in the final record", actor, a.token)
			}
		}
		t.Logf("%s: final %v, %d tokens issued", actor, rec.State(), len(rec.Issued()))
	}
	t.Logf("%d leader kills (%d mid-handover), %d acknowledged transitions", kills, midHandover, total)
	if total < 5*(kills+1) {
		t.Fatalf("only %d acknowledged transitions", total)
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// A caller whose transition had an unknown outcome (the leader died after
// proposing it) may retry, and the retry may reach the log after the
// original was committed: the log then holds the same entry twice. Each
// node transition's precondition is falsified by its own success (the
// state moves on, and with it the role epoch), so the second copy is
// refused and changes nothing: BeginTransfer burns one epoch, not two, and
// Acquire issues one token. The coordinator's Revoke applies in every
// state, so a retried Revoke burns a second epoch; that skips an epoch,
// which is safe.
// Reference: chapter "The ownership service", section "The owner record in
// Raft"; Ongaro and Ousterhout, 2014, section 8 (clients and duplicate
// commands).
func TestRetriedTransitionTakesEffectOnce(t *testing.T) {
	m := NewMachine()
	twice := func(req Request) (first, second []byte) {
		cmd := mustJSON(req)
		return m.Apply(cmd), m.Apply(cmd)
	}
	steps := []struct {
		req       Request
		wantEpoch ownership.Epoch
		wantCode  Code // of the duplicate
	}{
		{Request{Op: OpCreate, Actor: "x", To: "A"}, 1, CodeActorExists},
		{Request{Op: ownership.OpAcquire, Actor: "x", Caller: "A", Epoch: 1}, 1, CodeWrongState},
		{Request{Op: ownership.OpBeginTransfer, Actor: "x", Caller: "A", To: "B", Epoch: 1}, 2, CodeWrongState},
		{Request{Op: ownership.OpCompleteRelease, Actor: "x", Caller: "A", Epoch: 1}, 2, CodeWrongState},
		{Request{Op: ownership.OpAcquire, Actor: "x", Caller: "B", Epoch: 2}, 2, CodeWrongState},
		{Request{Op: ownership.OpBeginTransfer, Actor: "x", Caller: "B", To: "C", Epoch: 2}, 3, CodeWrongState},
		{Request{Op: ownership.OpAbort, Actor: "x"}, 4, CodeWrongState},
	}
	for _, s := range steps {
		first, second := twice(s.req)
		var o1, o2 outcome
		if err := json.Unmarshal(first, &o1); err != nil || o1.Error != nil {
			t.Fatalf("%s: first copy refused: %s", s.req.Op, first)
		}
		if err := json.Unmarshal(second, &o2); err != nil || o2.Error == nil || o2.Error.Code != s.wantCode {
			t.Fatalf("%s: second copy: %s; want refused with %s", s.req.Op, second, s.wantCode)
		}
		a, err := m.Read("x")
		if err != nil {
			t.Fatal(err)
		}
		if a.CurrentEpoch() != s.wantEpoch {
			t.Fatalf("after %s twice: epoch %d, want %d (one burn)", s.req.Op, a.CurrentEpoch(), s.wantEpoch)
		}
	}
	a, _ := m.Read("x")
	if got := a.Issued(); len(got) != 2 {
		t.Fatalf("issued %v; want one token per Acquire", got)
	}
	// Revoke twice: two epochs, both above every issued token.
	twice(Request{Op: ownership.OpRevoke, Actor: "x", To: "A"})
	a, _ = m.Read("x")
	if a.State() != (ownership.Unowned{Epoch: 6, IntendedOwner: "A"}) {
		t.Fatalf("after Revoke twice: %v; want Unowned(6, A)", a.State())
	}
}
