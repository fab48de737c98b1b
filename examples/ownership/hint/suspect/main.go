// Command suspect runs a real failure detector, hashicorp/memberlist (SWIM
// with Lifeguard's refinements), with three members on 127.0.0.1, and lets
// its suspicion drive the ownership record's Revoke. The owner A is paused
// (its transport stops sending and receiving, as a stopped process would),
// the detector suspects it, the coordinator revokes the actor to B at a new
// epoch, B acquires it and writes, and A, awake again, writes with its old
// token: the resource server refuses it. A then refutes the suspicion by
// raising its own incarnation number, and the detector takes it back as
// alive; the record does not give it the actor back.
//
// memberlist runs on real time and a real network, so the program prints
// only facts that do not depend on them: no ports, no durations, no
// incarnation values. It waits for each condition (up to a generous
// deadline) instead of sleeping for a fixed time, and acts on the first
// suspicion of the owner only, so that a loaded machine changes how long
// it runs, not what it prints.
//
// Reference: Abhinandan Das, Indranil Gupta and Ashish Motivala, "SWIM:
// Scalable Weakly-consistent Infection-style Process Group Membership
// Protocol", DSN 2002 (its suspicion mechanism and incarnation numbers);
// chapter "Failure detection is a hint".
package main

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/ownership-book/ownership/examples/ownership"
	"github.com/ownership-book/ownership/examples/ownership/hint"
)

// deadline bounds every wait for the detector. Generous: the detector
// needs a few probe intervals (a second each) on an idle machine.
const deadline = 60 * time.Second

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "suspect:", err)
		os.Exit(1)
	}
}

// member is one memberlist member with its pausable transport.
type member struct {
	name string
	ml   *memberlist.Memberlist
	tr   *pausable
}

func run(w io.Writer) error {
	names := []string{"A", "B", "C"}
	members := map[string]*member{}
	defer func() {
		for _, m := range members {
			_ = m.ml.Shutdown()
		}
	}()
	for _, n := range names {
		m, err := newMember(n)
		if err != nil {
			return err
		}
		members[n] = m
	}
	seed := members["A"].ml.LocalNode().Address()
	for _, n := range names[1:] {
		if _, err := members[n].ml.Join([]string{seed}); err != nil {
			return fmt.Errorf("%s joins: %w", n, err)
		}
	}
	view := members["C"].ml // the coordinator's detector
	var seen string         // the view as observed when the wait ended
	if err := waitFor("A, B and C alive in C's view", func() bool {
		seen = states(view)
		return seen == "A alive, B alive, C alive"
	}); err != nil {
		return err
	}
	fmt.Fprintln(w, "memberlist on 127.0.0.1: A, B and C are members")
	fmt.Fprintln(w, "C's view:", seen)

	rec, err := ownership.NewActor("x", ownership.Owned{Owner: "A", Epoch: 41})
	if err != nil {
		return err
	}
	var mu sync.Mutex // the record is updated atomically (the seed's first assumption)
	res := &hint.Resource{Record: rec}
	coord := &hint.Coordinator{Record: rec, Next: func(ownership.NodeID) ownership.NodeID { return "B" }}
	put := func(who string, t ownership.Token, v string) {
		mu.Lock()
		defer mu.Unlock()
		if err := res.Put(t, v); err != nil {
			fmt.Fprintf(w, "%s writes x=%s with %v: refused: %v\n", who, v, t, err)
			return
		}
		fmt.Fprintf(w, "%s writes x=%s with %v: accepted\n", who, v, t)
	}
	tokA := rec.Issued()[0]
	fmt.Fprintln(w, "record:", rec.State())
	put("A", tokA, "1")

	members["A"].tr.Pause()
	fmt.Fprintln(w, "A pauses: it sends and receives nothing, and its next write waits")
	var suspected memberlist.NodeStateType
	if err := waitFor("C's detector to suspect A", func() bool {
		suspected = state(view, "A")
		return suspected == memberlist.StateSuspect || suspected == memberlist.StateDead
	}); err != nil {
		return err
	}
	// A dead verdict comes only after a suspicion that A did not refute in
	// time; either way this is the first verdict against the owner.
	fmt.Fprintln(w, "C's detector suspects A (A is healthy, only paused)")
	mu.Lock()
	s, err := coord.Suspect(hint.Verdict{Node: "A", Epoch: rec.CurrentEpoch()})
	mu.Unlock()
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "coordinator: Revoke(-> B):", s)
	mu.Lock()
	tokB, err := rec.Acquire("B")
	mu.Unlock()
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "B acquires:", rec.State())
	put("B", tokB, "2")

	members["A"].tr.Resume()
	fmt.Fprintln(w, "A wakes and sends the write it was about to send")
	put("A", tokA, "3")

	if err := waitFor("A to refute the suspicion", func() bool {
		return state(view, "A") == memberlist.StateAlive
	}); err != nil {
		return err
	}
	fmt.Fprintln(w, "C's view: A alive again: A refuted the suspicion by raising its own incarnation number")
	mu.Lock()
	defer mu.Unlock()
	fmt.Fprintln(w, "record:", rec.State(), "(a refutation raises the incarnation, never the epoch)")
	var vals []string
	for _, wr := range res.Log {
		vals = append(vals, fmt.Sprintf("x=%s@%d", wr.Value, wr.Token.Epoch))
	}
	fmt.Fprintln(w, "resource accepted:", strings.Join(vals, ", "))
	fmt.Fprintln(w, "safety violations:", hint.Violations(res.Log))
	return nil
}

// newMember starts a memberlist member named name on 127.0.0.1 with a
// port chosen by the kernel (never printed).
func newMember(name string) (*member, error) {
	quiet := log.New(io.Discard, "", 0)
	nt, port, err := newTransport(name, quiet)
	if err != nil {
		return nil, fmt.Errorf("member %s: %w", name, err)
	}
	tr := newPausable(nt)
	cfg := memberlist.DefaultLocalConfig()
	cfg.Name = name
	cfg.Transport = tr
	cfg.BindAddr, cfg.AdvertiseAddr = "127.0.0.1", "127.0.0.1"
	cfg.BindPort = port
	cfg.AdvertisePort = cfg.BindPort
	cfg.Logger = quiet
	// Lenient with a loaded machine: half a probe interval for an ack.
	cfg.ProbeTimeout = 500 * time.Millisecond
	ml, err := memberlist.Create(cfg)
	if err != nil {
		_ = nt.Shutdown()
		return nil, fmt.Errorf("member %s: %w", name, err)
	}
	return &member{name: name, ml: ml, tr: tr}, nil
}

// state returns the state of member name in m's view (StateDead when m
// does not know it).
func state(m *memberlist.Memberlist, name string) memberlist.NodeStateType {
	for _, n := range m.Members() {
		if n.Name == name {
			return n.State
		}
	}
	return memberlist.StateDead
}

// states formats m's view of A, B and C: "A alive, B suspect, C alive".
func states(m *memberlist.Memberlist) string {
	var out []string
	for _, n := range []string{"A", "B", "C"} {
		out = append(out, n+" "+stateName(state(m, n)))
	}
	return strings.Join(out, ", ")
}

func stateName(s memberlist.NodeStateType) string {
	switch s {
	case memberlist.StateAlive:
		return "alive"
	case memberlist.StateSuspect:
		return "suspect"
	case memberlist.StateLeft:
		return "left"
	}
	return "dead"
}

// waitFor polls cond every 10ms until it holds or deadline passes.
func waitFor(what string, cond func() bool) error {
	end := time.Now().Add(deadline)
	for !cond() {
		if time.Now().After(end) {
			return fmt.Errorf("waited %s for %s", deadline, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

// pausable wraps memberlist's network transport so that a member can be
// paused: while paused it sends nothing, drops every packet it receives
// and refuses every stream, as a stopped process whose socket buffers
// overflow would. Resume makes it a normal member again.
type pausable struct {
	inner   memberlist.NodeAwareTransport
	paused  atomic.Bool
	packets chan *memberlist.Packet
	streams chan net.Conn
	done    chan struct{}
	once    sync.Once
	wg      sync.WaitGroup
}

var errPaused = errors.New("paused")

func newPausable(inner memberlist.NodeAwareTransport) *pausable {
	p := &pausable{inner: inner, packets: make(chan *memberlist.Packet), streams: make(chan net.Conn), done: make(chan struct{})}
	p.wg.Add(2)
	go func() {
		defer p.wg.Done()
		for {
			select {
			case pkt := <-inner.PacketCh():
				if p.paused.Load() {
					continue
				}
				select {
				case p.packets <- pkt:
				case <-p.done:
					return
				}
			case <-p.done:
				return
			}
		}
	}()
	go func() {
		defer p.wg.Done()
		for {
			select {
			case c := <-inner.StreamCh():
				if p.paused.Load() {
					_ = c.Close()
					continue
				}
				select {
				case p.streams <- c:
				case <-p.done:
					_ = c.Close()
					return
				}
			case <-p.done:
				return
			}
		}
	}()
	return p
}

// Pause stops the member's traffic; Resume restarts it.
func (p *pausable) Pause()  { p.paused.Store(true) }
func (p *pausable) Resume() { p.paused.Store(false) }

func (p *pausable) FinalAdvertiseAddr(ip string, port int) (net.IP, int, error) {
	return p.inner.FinalAdvertiseAddr(ip, port)
}

func (p *pausable) WriteTo(b []byte, addr string) (time.Time, error) {
	if p.paused.Load() {
		return time.Now(), nil // lost on the way, as far as anyone can tell
	}
	return p.inner.WriteTo(b, addr)
}

func (p *pausable) WriteToAddress(b []byte, a memberlist.Address) (time.Time, error) {
	return p.WriteTo(b, a.Addr)
}

func (p *pausable) PacketCh() <-chan *memberlist.Packet { return p.packets }

func (p *pausable) DialTimeout(addr string, timeout time.Duration) (net.Conn, error) {
	if p.paused.Load() {
		return nil, errPaused
	}
	return p.inner.DialTimeout(addr, timeout)
}

func (p *pausable) DialAddressTimeout(a memberlist.Address, timeout time.Duration) (net.Conn, error) {
	return p.DialTimeout(a.Addr, timeout)
}

func (p *pausable) StreamCh() <-chan net.Conn { return p.streams }

func (p *pausable) Shutdown() error {
	p.once.Do(func() { close(p.done) })
	p.wg.Wait()
	// The forwarders have stopped, but the inner transport's listeners may
	// be blocked handing it a packet or a connection that nobody reads any
	// more; its Shutdown waits for them. Drain both until it has returned.
	stop := make(chan struct{})
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for {
			select {
			case <-p.inner.PacketCh():
			case c := <-p.inner.StreamCh():
				if c != nil {
					_ = c.Close()
				}
			case <-stop:
				return
			}
		}
	}()
	err := p.inner.Shutdown()
	close(stop)
	<-drained
	return err
}
