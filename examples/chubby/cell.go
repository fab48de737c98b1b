package chubby

import (
	"fmt"
	"slices"
	"time"
)

// Defaults from Burrows 2006.
const (
	// DefaultLease is the lease extension a KeepAlive grants by default
	// (section 2.8: "The default extension is 12s").
	DefaultLease = 12 * time.Second
	// DefaultMaxLockDelay is the bound on a lock-delay (section 2.4: "any
	// lock-delay up to some bound, currently one minute").
	DefaultMaxLockDelay = time.Minute
	// DefaultGracePeriod is how long a client whose local lease has run out
	// waits before it gives its session up (section 2.8: "the grace period,
	// 45s by default").
	DefaultGracePeriod = 45 * time.Second
)

// Config sets a Cell's timing. Both durations are in simulated time.
type Config struct {
	// Lease is how far past now a KeepAlive (or a new session) moves the
	// session lease timeout. Must be positive.
	Lease time.Duration
	// MaxLockDelay is the largest lock-delay a client may ask for. Zero
	// allows no lock-delay at all.
	MaxLockDelay time.Duration
}

// DefaultConfig is the paper's timing: a 12s lease and lock-delays of up to
// a minute.
func DefaultConfig() Config {
	return Config{Lease: DefaultLease, MaxLockDelay: DefaultMaxLockDelay}
}

// SessionID names a session within one Cell; the first session is 1.
type SessionID uint64

type session struct {
	client  string
	timeout time.Duration // session lease timeout
	locks   []string
}

type holder struct {
	session   SessionID
	lockDelay time.Duration
}

type lock struct {
	generation uint64
	mode       Mode     // valid while holders is not empty
	holders    []holder // one in Exclusive mode
	delayUntil time.Duration
}

// Cell is a Chubby cell reduced to what locking needs: one master (its
// replicas and their consensus are assumed), sessions with leases, and
// named locks with generation numbers and lock-delay. It is a pure state
// machine: every method takes the simulated time now, expires the sessions
// whose lease timeout is at or before now, and then does its work. Time may
// not go backwards: a call with an earlier now than the previous call fails
// with a *TimeError and changes nothing. A Cell is not safe for concurrent
// use.
type Cell struct {
	cfg      Config
	last     time.Duration
	next     SessionID
	sessions map[SessionID]*session
	locks    map[string]*lock
	pending  []Event // events produced by expiry, returned by Advance
}

// NewCell returns an empty Cell. It fails with an *ArgumentError if
// cfg.Lease is not positive or cfg.MaxLockDelay is negative.
func NewCell(cfg Config) (*Cell, error) {
	if cfg.Lease <= 0 {
		return nil, &ArgumentError{Msg: fmt.Sprintf("lease %v: must be positive", cfg.Lease)}
	}
	if cfg.MaxLockDelay < 0 {
		return nil, &ArgumentError{Msg: fmt.Sprintf("max lock-delay %v: must not be negative", cfg.MaxLockDelay)}
	}
	return &Cell{cfg: cfg, next: 1, sessions: map[SessionID]*session{}, locks: map[string]*lock{}}, nil
}

// Config returns the Cell's timing.
func (c *Cell) Config() Config { return c.cfg }

// SetGeneration sets the generation of a lock that is free and has never
// been held, so that a run can start from a history (the zombie writer's
// first acquisition is generation 33). It fails with an *ArgumentError on a
// lock that already exists.
func (c *Cell) SetGeneration(name string, g uint64) error {
	if name == "" {
		return &ArgumentError{Msg: "SetGeneration: empty lock name"}
	}
	if _, ok := c.locks[name]; ok {
		return &ArgumentError{Msg: fmt.Sprintf("SetGeneration %s: the lock already exists", name)}
	}
	c.locks[name] = &lock{generation: g}
	return nil
}

// EventKind says what an Event records.
type EventKind int

const (
	// SessionExpired: a session's lease timeout passed without a KeepAlive.
	SessionExpired EventKind = iota + 1
	// LockLost: a lock was taken from a session whose lease expired; Until
	// is the end of its lock-delay (equal to At when the delay is zero).
	LockLost
)

// Event is something the Cell did on its own, because time passed: At is
// when it took effect (a lease timeout), not when Advance noticed it.
type Event struct {
	At      time.Duration
	Kind    EventKind
	Session SessionID
	Client  string
	Lock    string
	Until   time.Duration
}

func (e Event) String() string {
	switch e.Kind {
	case SessionExpired:
		return fmt.Sprintf("%v: session %d (%s) expired", e.At, e.Session, e.Client)
	case LockLost:
		if e.Until > e.At {
			return fmt.Sprintf("%v: %s lost %s; lock-delay until %v", e.At, e.Client, e.Lock, e.Until)
		}
		return fmt.Sprintf("%v: %s lost %s; free at once", e.At, e.Client, e.Lock)
	}
	return fmt.Sprintf("%v: event %d", e.At, int(e.Kind))
}

// clock checks and records now, then expires every session whose lease
// timeout is at or before now, in order of timeout (then session id).
func (c *Cell) clock(now time.Duration) error {
	if now < c.last {
		return &TimeError{Now: now, Last: c.last}
	}
	c.last = now
	var due []SessionID
	for id, s := range c.sessions {
		if s.timeout <= now {
			due = append(due, id)
		}
	}
	slices.SortFunc(due, func(a, b SessionID) int {
		if d := c.sessions[a].timeout - c.sessions[b].timeout; d != 0 {
			if d < 0 {
				return -1
			}
			return 1
		}
		return int(a) - int(b)
	})
	for _, id := range due {
		c.expire(id)
	}
	return nil
}

// expire ends session id at its lease timeout and frees its locks, each with
// the lock-delay its holder asked for.
func (c *Cell) expire(id SessionID) {
	s := c.sessions[id]
	at := s.timeout
	c.pending = append(c.pending, Event{At: at, Kind: SessionExpired, Session: id, Client: s.client})
	for _, name := range s.locks {
		l := c.locks[name]
		i := slices.IndexFunc(l.holders, func(h holder) bool { return h.session == id })
		d := l.holders[i].lockDelay
		l.holders = slices.Delete(l.holders, i, i+1)
		until := at
		if len(l.holders) == 0 {
			// The lock became free because its holder failed: lock-delay.
			until = at + d
			l.delayUntil = max(l.delayUntil, until)
		}
		c.pending = append(c.pending, Event{At: at, Kind: LockLost, Session: id, Client: s.client, Lock: name, Until: until})
	}
	delete(c.sessions, id)
}

// Advance moves the Cell's time to now, expiring sessions, and returns the
// events that expiry produced since the last Advance, oldest first.
func (c *Cell) Advance(now time.Duration) ([]Event, error) {
	if err := c.clock(now); err != nil {
		return nil, err
	}
	ev := c.pending
	c.pending = nil
	return ev, nil
}

// NextDeadline returns the earliest time after which the Cell will change on
// its own (a session lease timeout or the end of a lock-delay), and false
// when there is none.
func (c *Cell) NextDeadline() (time.Duration, bool) {
	var best time.Duration
	found := false
	consider := func(t time.Duration) {
		if t > c.last && (!found || t < best) {
			best, found = t, true
		}
	}
	for _, s := range c.sessions {
		consider(s.timeout)
	}
	for _, l := range c.locks {
		consider(l.delayUntil)
	}
	return best, found
}

// OpenSession starts a session for the named client, with its lease timeout
// at now + Lease (section 2.8: the master advances the timeout on creation).
func (c *Cell) OpenSession(client string, now time.Duration) (SessionID, error) {
	if client == "" {
		return 0, &ArgumentError{Msg: "OpenSession: empty client name"}
	}
	if err := c.clock(now); err != nil {
		return 0, err
	}
	id := c.next
	c.next++
	c.sessions[id] = &session{client: client, timeout: now + c.cfg.Lease}
	return id, nil
}

// ANCHOR: keepalive

// KeepAlive extends a live session's lease to now + Lease and returns the
// new lease timeout. The master may move the timeout forward but never back
// (Burrows 2006, section 2.8). A session whose timeout is at or before now
// has already expired, with its locks: the call fails with a *SessionError.
func (c *Cell) KeepAlive(id SessionID, now time.Duration) (time.Duration, error) {
	if err := c.clock(now); err != nil {
		return 0, err
	}
	s, ok := c.sessions[id]
	if !ok {
		return 0, &SessionError{Session: id, At: now}
	}
	s.timeout = max(s.timeout, now+c.cfg.Lease)
	return s.timeout, nil
}

// ANCHOR_END: keepalive

// LeaseTimeout returns a live session's lease timeout as the master sees it.
func (c *Cell) LeaseTimeout(id SessionID) (time.Duration, bool) {
	s, ok := c.sessions[id]
	if !ok {
		return 0, false
	}
	return s.timeout, true
}

// ANCHOR: acquire

// Acquire takes the named lock for session id in mode m and returns its
// sequencer. lockDelay is how long others are kept from the lock if this
// session expires while holding it; it may be 0 and at most MaxLockDelay.
// The generation grows by one when the lock goes from free to held; a
// shared acquisition of a lock already held shared keeps it (section 2.3).
//
// Errors: *SessionError if the session is not live; *LockHeldError if
// another session holds the lock in a conflicting mode (the session itself
// already holding it is also refused, as a second acquisition by one
// holder); *LockDelayError if the lock is inside a lock-delay;
// *ArgumentError for an empty name, an unknown mode or a lock-delay out of
// range. A refused call changes nothing but the Cell's time.
func (c *Cell) Acquire(id SessionID, name string, m Mode, lockDelay time.Duration, now time.Duration) (Sequencer, error) {
	if name == "" {
		return Sequencer{}, &ArgumentError{Msg: "Acquire: empty lock name"}
	}
	if m != Exclusive && m != Shared {
		return Sequencer{}, &ArgumentError{Msg: fmt.Sprintf("Acquire %s: unknown mode %v", name, m)}
	}
	if lockDelay < 0 || lockDelay > c.cfg.MaxLockDelay {
		return Sequencer{}, &ArgumentError{Msg: fmt.Sprintf("Acquire %s: lock-delay %v is outside 0..%v", name, lockDelay, c.cfg.MaxLockDelay)}
	}
	if err := c.clock(now); err != nil {
		return Sequencer{}, err
	}
	s, ok := c.sessions[id]
	if !ok {
		return Sequencer{}, &SessionError{Session: id, At: now}
	}
	l := c.locks[name]
	if l == nil {
		l = &lock{}
		c.locks[name] = l
	}
	if len(l.holders) > 0 {
		mine := slices.ContainsFunc(l.holders, func(h holder) bool { return h.session == id })
		if mine || l.mode == Exclusive || m == Exclusive {
			return Sequencer{}, &LockHeldError{Lock: name, Mode: l.mode, Generation: l.generation}
		}
	} else {
		if now < l.delayUntil {
			return Sequencer{}, &LockDelayError{Lock: name, Until: l.delayUntil}
		}
		l.generation++
		l.mode = m
	}
	l.holders = append(l.holders, holder{session: id, lockDelay: lockDelay})
	s.locks = append(s.locks, name)
	return Sequencer{Lock: name, Mode: l.mode, Generation: l.generation}, nil
}

// ANCHOR_END: acquire

// Release gives the lock up the normal way: it is free for others at once,
// with no lock-delay (section 2.4). It fails with a *SessionError if the
// session is not live and a *NotHeldError if it does not hold the lock.
func (c *Cell) Release(id SessionID, name string, now time.Duration) error {
	if err := c.clock(now); err != nil {
		return err
	}
	s, ok := c.sessions[id]
	if !ok {
		return &SessionError{Session: id, At: now}
	}
	l := c.locks[name]
	i := -1
	if l != nil {
		i = slices.IndexFunc(l.holders, func(h holder) bool { return h.session == id })
	}
	if i < 0 {
		return &NotHeldError{Session: id, Lock: name}
	}
	l.holders = slices.Delete(l.holders, i, i+1)
	s.locks = slices.DeleteFunc(s.locks, func(n string) bool { return n == name })
	return nil
}

// GetSequencer returns the sequencer of a lock the session holds (section
// 2.6). It fails with a *SessionError or a *NotHeldError.
func (c *Cell) GetSequencer(id SessionID, name string, now time.Duration) (Sequencer, error) {
	if err := c.clock(now); err != nil {
		return Sequencer{}, err
	}
	if _, ok := c.sessions[id]; !ok {
		return Sequencer{}, &SessionError{Session: id, At: now}
	}
	l := c.locks[name]
	if l == nil || !slices.ContainsFunc(l.holders, func(h holder) bool { return h.session == id }) {
		return Sequencer{}, &NotHeldError{Session: id, Lock: name}
	}
	return Sequencer{Lock: name, Mode: l.mode, Generation: l.generation}, nil
}

// ANCHOR: check_sequencer

// CheckSequencer reports whether s still describes its lock at now: the lock
// is held, in s's mode, at s's generation (Burrows 2006, sections 2.4 and
// 2.6). A lock freed by an expired session fails the check at once, lock-
// delay or not. It returns nil or a *StaleSequencerError.
func (c *Cell) CheckSequencer(s Sequencer, now time.Duration) error {
	if err := c.clock(now); err != nil {
		return err
	}
	l := c.locks[s.Lock]
	if l == nil {
		return &StaleSequencerError{Sequencer: s}
	}
	if len(l.holders) == 0 || l.generation != s.Generation || l.mode != s.Mode {
		return &StaleSequencerError{Sequencer: s, Current: l.generation, Held: len(l.holders) > 0, HeldMode: l.mode}
	}
	return nil
}

// ANCHOR_END: check_sequencer

// Generation returns the lock's current generation (0 for a lock never
// seen) and whether it is held.
func (c *Cell) Generation(name string) (uint64, bool) {
	l := c.locks[name]
	if l == nil {
		return 0, false
	}
	return l.generation, len(l.holders) > 0
}

// CloseSession ends a live session the normal way: its locks are released
// with no lock-delay, as Release does. It fails with a *SessionError if the
// session is not live.
func (c *Cell) CloseSession(id SessionID, now time.Duration) error {
	if err := c.clock(now); err != nil {
		return err
	}
	s, ok := c.sessions[id]
	if !ok {
		return &SessionError{Session: id, At: now}
	}
	for _, name := range s.locks {
		l := c.locks[name]
		l.holders = slices.DeleteFunc(l.holders, func(h holder) bool { return h.session == id })
	}
	delete(c.sessions, id)
	return nil
}
