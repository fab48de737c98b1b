package chubby

import (
	"errors"
	"testing"
	"time"
)

const s = time.Second

func newCell(t *testing.T) *Cell {
	t.Helper()
	c, err := NewCell(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func open(t *testing.T, c *Cell, client string, now time.Duration) SessionID {
	t.Helper()
	id, err := c.OpenSession(client, now)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// The lock generation number increases when the lock goes from free to
// held: every exclusive acquisition gets a new one, and a shared holder
// joining a lock already held shared keeps the current one.
// Reference: Burrows 2006, section 2.3 (per-node meta-data).
func TestGenerationGrowsOnEveryAcquisition(t *testing.T) {
	c := newCell(t)
	if err := c.SetGeneration(Lock, 32); err != nil {
		t.Fatal(err)
	}
	a, b := open(t, c, "a", 0), open(t, c, "b", 0)
	var gens []uint64
	for i := range 3 {
		id := []SessionID{a, b, a}[i]
		seq, err := c.Acquire(id, Lock, Exclusive, 0, time.Duration(i)*s)
		if err != nil {
			t.Fatal(err)
		}
		gens = append(gens, seq.Generation)
		if err := c.Release(id, Lock, time.Duration(i)*s); err != nil {
			t.Fatal(err)
		}
	}
	if gens[0] != 33 || gens[1] != 34 || gens[2] != 35 {
		t.Fatalf("generations %v, want [33 34 35]", gens)
	}
	s1, err := c.Acquire(a, Lock, Shared, 0, 3*s)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := c.Acquire(b, Lock, Shared, 0, 3*s)
	if err != nil {
		t.Fatal(err)
	}
	if s1.Generation != 36 || s2.Generation != 36 || s2.Mode != Shared {
		t.Fatalf("shared sequencers %v and %v, want both /ls/cell/doc:shared:36", s1, s2)
	}
	_, err = c.Acquire(open(t, c, "c", 3*s), Lock, Exclusive, 0, 3*s)
	var held *LockHeldError
	if !errors.As(err, &held) || held.Mode != Shared || held.Generation != 36 {
		t.Fatalf("exclusive acquire of a shared lock: %v, want *LockHeldError at 36", err)
	}
	if _, err := c.Acquire(a, Lock, Shared, 0, 3*s); !errors.Is(err, ErrLockHeld) {
		t.Fatalf("second acquisition by one holder: %v, want ErrLockHeld", err)
	}
}

// A session lives while KeepAlives extend its lease; the master may move
// the lease timeout forward but never back, and a session whose timeout
// passes has expired: later calls on it fail.
// Reference: Burrows 2006, section 2.8.
func TestKeepAliveExtendsTheLeaseAndExpiryEndsTheSession(t *testing.T) {
	c := newCell(t)
	id := open(t, c, "a", 0)
	if to, _ := c.LeaseTimeout(id); to != 12*s {
		t.Fatalf("new session's lease timeout %v, want 12s (the default extension)", to)
	}
	to, err := c.KeepAlive(id, 10*s)
	if err != nil || to != 22*s {
		t.Fatalf("KeepAlive at 10s = %v, %v; want 22s", to, err)
	}
	if to, err := c.KeepAlive(id, 10*s); err != nil || to != 22*s {
		t.Fatalf("second KeepAlive at 10s = %v, %v; want 22s (never backwards)", to, err)
	}
	if _, err := c.KeepAlive(id, 22*s); !errors.Is(err, ErrSessionExpired) {
		t.Fatalf("KeepAlive at the lease timeout: %v, want ErrSessionExpired", err)
	}
	ev, err := c.Advance(22 * s)
	if err != nil || len(ev) != 1 || ev[0].Kind != SessionExpired || ev[0].At != 22*s {
		t.Fatalf("events %v, %v; want one SessionExpired at 22s", ev, err)
	}
}

// A lock freed because its holder's session expired cannot be taken by
// anyone for the holder's lock-delay, counted from the lease timeout; a lock
// released the normal way is free at once. A lock-delay above the bound is
// refused.
// Reference: Burrows 2006, section 2.4 ("lock-delay", "currently one
// minute").
func TestLockDelayAfterExpiryOnly(t *testing.T) {
	c := newCell(t)
	a, b := open(t, c, "a", 0), open(t, c, "b", 0)
	if _, err := c.Acquire(a, Lock, Exclusive, 61*s, 0); !errors.Is(err, ErrBadArgument) {
		t.Fatalf("lock-delay 61s: %v, want ErrBadArgument (bound 1m)", err)
	}
	if _, err := c.Acquire(a, Lock, Exclusive, time.Minute, 0); err != nil {
		t.Fatal(err)
	}
	// b keeps its session alive; a does not, and expires at 12s.
	for now := 4 * s; now <= 72*s; now += 4 * s {
		if _, err := c.KeepAlive(b, now); err != nil {
			t.Fatal(err)
		}
		_, err := c.Acquire(b, Lock, Exclusive, 0, now)
		var d *LockDelayError
		switch {
		case now < 12*s:
			if !errors.Is(err, ErrLockHeld) {
				t.Fatalf("at %v: %v, want ErrLockHeld", now, err)
			}
		case now < 72*s:
			if !errors.As(err, &d) || d.Until != 72*s {
				t.Fatalf("at %v: %v, want lock-delay until 1m12s", now, err)
			}
		default:
			if err != nil {
				t.Fatalf("at 1m12s the lock-delay is over: %v", err)
			}
		}
	}
	// A normal release: free at once, whatever lock-delay was asked for.
	if err := c.Release(b, Lock, 72*s); err != nil {
		t.Fatal(err)
	}
	d := open(t, c, "d", 72*s)
	if _, err := c.Acquire(d, Lock, Exclusive, 0, 72*s); err != nil {
		t.Fatalf("acquire after a normal release: %v", err)
	}
}

// CheckSequencer accepts a sequencer only while the lock is held in its mode
// at its generation: not after the holder's session expired (even before
// anyone else acquires), not after a newer acquisition, not in the other
// mode.
// Reference: Burrows 2006, sections 2.4 and 2.6 (CheckSequencer).
func TestCheckSequencer(t *testing.T) {
	c := newCell(t)
	a, b := open(t, c, "a", 0), open(t, c, "b", 0)
	seq, err := c.Acquire(a, Lock, Exclusive, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.GetSequencer(a, Lock, 1*s); err != nil || got != seq {
		t.Fatalf("GetSequencer = %v, %v; want %v", got, err, seq)
	}
	if _, err := c.GetSequencer(b, Lock, 1*s); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("GetSequencer by a non-holder: %v", err)
	}
	if err := c.CheckSequencer(seq, 11*s); err != nil {
		t.Fatalf("held: %v", err)
	}
	if err := c.CheckSequencer(Sequencer{Lock: Lock, Mode: Shared, Generation: seq.Generation}, 11*s); !errors.Is(err, ErrStaleSequencer) {
		t.Fatalf("wrong mode: %v", err)
	}
	if _, err := c.KeepAlive(b, 11*s); err != nil {
		t.Fatal(err)
	}
	if err := c.CheckSequencer(seq, 12*s); !errors.Is(err, ErrStaleSequencer) {
		t.Fatalf("after the holder's session expired: %v, want ErrStaleSequencer", err)
	}
	next, err := c.Acquire(b, Lock, Exclusive, 0, 13*s)
	if err != nil {
		t.Fatal(err)
	}
	var stale *StaleSequencerError
	if err := c.CheckSequencer(seq, 13*s); !errors.As(err, &stale) || stale.Current != next.Generation {
		t.Fatalf("after a newer acquisition: %v", err)
	}
	if err := c.CheckSequencer(next, 13*s); err != nil {
		t.Fatalf("the new holder's sequencer: %v", err)
	}
}

// The core takes time as an argument and refuses time that goes backwards,
// changing nothing.
func TestTimeMayNotGoBackwards(t *testing.T) {
	c := newCell(t)
	id := open(t, c, "a", 5*s)
	if _, err := c.KeepAlive(id, 4*s); !errors.Is(err, ErrTimeWentBack) {
		t.Fatalf("KeepAlive at 4s after 5s: %v", err)
	}
	if to, _ := c.LeaseTimeout(id); to != 17*s {
		t.Fatalf("lease timeout %v after a refused call, want 17s", to)
	}
}

// Bad configuration and arguments get errors that name them.
func TestBadArguments(t *testing.T) {
	if _, err := NewCell(Config{Lease: 0}); !errors.Is(err, ErrBadArgument) {
		t.Fatalf("zero lease: %v", err)
	}
	if _, err := NewCell(Config{Lease: s, MaxLockDelay: -1}); !errors.Is(err, ErrBadArgument) {
		t.Fatalf("negative lock-delay bound: %v", err)
	}
	c := newCell(t)
	id := open(t, c, "a", 0)
	if _, err := c.Acquire(id, "", Exclusive, 0, 0); !errors.Is(err, ErrBadArgument) {
		t.Fatalf("empty name: %v", err)
	}
	if _, err := c.Acquire(id, Lock, Mode(9), 0, 0); !errors.Is(err, ErrBadArgument) {
		t.Fatalf("unknown mode: %v", err)
	}
	if _, err := c.OpenSession("", 0); !errors.Is(err, ErrBadArgument) {
		t.Fatalf("empty client: %v", err)
	}
	if _, err := Run(Scenario{}); !errors.Is(err, ErrBadArgument) {
		t.Fatalf("no clients: %v", err)
	}
}

// A client whose local lease has run out is in jeopardy for the grace
// period, then gives its session up. The local lease is counted from when
// the KeepAlive was sent, so it never ends after the master's.
// Reference: Burrows 2006, section 2.8 (jeopardy, "the grace period, 45s by
// default").
func TestClientLeaseJeopardyAndGracePeriod(t *testing.T) {
	l := ClientLease{Lease: DefaultLease, Grace: DefaultGracePeriod}
	l.Renewed(10 * s) // sent at 10s; the master answered later
	for _, c := range []struct {
		at   time.Duration
		want LeaseState
	}{{21 * s, LeaseValid}, {22 * s, LeaseJeopardy}, {66 * s, LeaseJeopardy}, {67 * s, LeaseExpired}} {
		if got := l.State(c.at); got != c.want {
			t.Errorf("at %v: %v, want %v", c.at, got, c.want)
		}
	}
	c := newCell(t)
	id := open(t, c, "a", 0)
	master, err := c.KeepAlive(id, 10*s+300*time.Millisecond) // the RPC reached the master later
	if err != nil {
		t.Fatal(err)
	}
	if l.Timeout > master {
		t.Fatalf("local lease %v ends after the master's %v", l.Timeout, master)
	}
}
