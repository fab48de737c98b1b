package chubby

import (
	"container/heap"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ownership-book/ownership/examples/ownership"
)

// Scheme is how a Scenario protects the resource server.
type Scheme int

const (
	// SchemeUnchecked: a Chubby cell with no lock-delay and an Unchecked
	// server. Nothing protects the server.
	SchemeUnchecked Scheme = iota + 1
	// SchemeLockDelay: a Chubby cell whose holder asks for Scenario.LockDelay
	// and an Unchecked server: Chubby's protection for servers that cannot
	// check sequencers.
	SchemeLockDelay
	// SchemeSequencerAtCell: no lock-delay; the server checks each
	// sequencer with the cell (CheckAtCell).
	SchemeSequencerAtCell
	// SchemeSequencerNewest: no lock-delay; the server keeps the newest
	// generation it has seen in writes (NewestSeen). Chubby's generation
	// moves when the next holder acquires.
	SchemeSequencerNewest
	// SchemeOwnership: the ownership record of chapter "Ownership: epochs
	// and fencing" instead of a cell. A coordinator revokes a holder it has
	// not heard from for Scenario.Detector, which moves the epoch at once;
	// it sends the new epoch to the server (arriving after
	// Scenario.FenceDelay), and the server is NewestSeen.
	SchemeOwnership
	// SchemeOwnershipAtRecord: SchemeOwnership with a server that asks the
	// ownership record about each write at its arrival and refuses an epoch
	// below the record's current one (CheckAtRecord): the ownership model's
	// counterpart of SchemeSequencerAtCell.
	SchemeOwnershipAtRecord
)

func (s Scheme) String() string {
	switch s {
	case SchemeUnchecked:
		return "unchecked"
	case SchemeLockDelay:
		return "lock-delay only"
	case SchemeSequencerAtCell:
		return "sequencer, checked at the cell"
	case SchemeSequencerNewest:
		return "sequencer, newest seen"
	case SchemeOwnership:
		return "ownership model"
	case SchemeOwnershipAtRecord:
		return "ownership, checked at the record"
	}
	return fmt.Sprintf("Scheme(%d)", int(s))
}

// StepKind is what a client does in one Step.
type StepKind int

const (
	// Pause: the client stops for Step.D (a garbage-collection pause, a
	// stalled VM): no KeepAlives, no heartbeats, nothing sent.
	Pause StepKind = iota + 1
	// Send: the client sends a write carrying its sequencer (or epoch)
	// without checking anything first; it arrives Step.D later, and the
	// client waits as long again for the reply, keeping its session alive.
	// Data names the write.
	Send
	// Work: the client computes for Step.D, keeping its session alive
	// (KeepAlives, heartbeats) the whole time.
	Work
)

// Step is one action of a client that holds the lock.
type Step struct {
	Kind StepKind
	D    time.Duration
	Data string
}

// Scenario is one run: clients named "client 1", "client 2", ... each
// running its steps once it holds the lock. Client 1 holds the lock at time
// 0 with generation Generation; the others are blocked in Acquire, in
// order. A client that finishes its steps releases the lock normally; a
// client that learns it has lost the lock (a failed KeepAlive) stops.
// Running clients keep their sessions alive; only a Pause lets a lease run
// out.
type Scenario struct {
	Scheme     Scheme
	Lease      time.Duration // session lease (Config.Lease); 0 means DefaultLease
	LockDelay  time.Duration // SchemeLockDelay: every holder's lock-delay (may exceed the paper's 1m bound)
	Detector   time.Duration // SchemeOwnership: silence before a revoke; 0 means Lease
	FenceDelay time.Duration // SchemeOwnership: delay of the fence notice
	NoNotice   bool          // SchemeOwnership: the coordinator sends no fence notice
	Generation uint64        // client 1's generation; 0 means 33
	Clients    [][]Step
}

// Lock is the name of the lock every Scenario uses.
const Lock = "/ls/cell/doc"

// Trace is one line of a run's timeline. To is empty for something that
// happens at From alone (a pause, an expiry); otherwise it is a message
// from From to To, drawn at its arrival.
type Trace struct {
	At       time.Duration
	From, To string
	Text     string
}

// Participants of a Trace besides the clients.
const (
	CellName        = "lock service"
	CoordinatorName = "coordinator"
	ServerName      = "file server"
)

// Result is what Run observed.
type Result struct {
	Trace   []Trace
	Applied []Write // in arrival order
	Refused []Write
	// Regressed: a write of generation g was applied after one of g' > g.
	// Stale and Newer are that pair (the first such).
	Regressed    bool
	Stale, Newer Write
	Late         int // writes applied after a newer generation had been granted
	// Failover: client 1 lost the lock (its session expired, or the
	// coordinator revoked it) and another client then acquired it.
	Failover      bool
	LastHeard     time.Duration // when client 1 last acted before it lost the lock
	FirstNewWrite time.Duration // when the first write of a later generation was applied
	NewWrite      bool
}

// ErrRunaway: a Scenario that never settles (a bug in the simulation).
var ErrRunaway = errors.New("simulation did not settle")

type itemKind int

const (
	itemWake itemKind = iota
	itemArrive
	itemFence
	itemTick
)

type item struct {
	at     time.Duration
	seq    int
	kind   itemKind
	client int
	write  Write
	epoch  uint64
	quiet  bool // a wake that the trace does not show (a reply arrived)
}

type queue []item

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q queue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)   { *q = append(*q, x.(item)) }
func (q *queue) Pop() any {
	old := *q
	it := old[len(old)-1]
	*q = old[:len(old)-1]
	return it
}

type clientState int

const (
	waiting clientState = iota
	holding
	paused
	working
	done
	stopped
)

type simClient struct {
	name      string
	session   SessionID
	steps     []Step
	pc        int
	state     clientState
	seq       Sequencer
	lastHeard time.Duration
	lost      bool
	lostHeard time.Duration // lastHeard when the lock was lost
}

type sim struct {
	sc      Scenario
	cell    *Cell
	actor   *ownership.Actor
	server  *Server
	clients []*simClient
	q       queue
	seq     int
	res     Result
	holder  int    // ownership: index of the owner, -1 when none
	ticking bool   // a tick (KeepAlives of running clients) is queued
	applied uint64 // the newest generation the server has applied
	granted uint64 // the newest generation (or epoch) granted so far
}

func (m *sim) push(it item) {
	it.seq = m.seq
	m.seq++
	heap.Push(&m.q, it)
}

func (m *sim) trace(at time.Duration, from, to, format string, args ...any) {
	m.res.Trace = append(m.res.Trace, Trace{At: at, From: from, To: to, Text: fmt.Sprintf(format, args...)})
}

// Run plays the scenario and returns what happened. It fails with an
// *ArgumentError for a scenario without clients, an unknown scheme or step,
// or a negative duration, and with ErrRunaway if the run does not settle
// within a simulated day.
func Run(sc Scenario) (Result, error) {
	if sc.Lease == 0 {
		sc.Lease = DefaultLease
	}
	if sc.Detector == 0 {
		sc.Detector = sc.Lease
	}
	if sc.Generation == 0 {
		sc.Generation = 33
	}
	if len(sc.Clients) == 0 {
		return Result{}, &ArgumentError{Msg: "Run: no clients"}
	}
	if sc.Lease < 0 || sc.LockDelay < 0 || sc.Detector < 0 || sc.FenceDelay < 0 {
		return Result{}, &ArgumentError{Msg: "Run: negative duration"}
	}
	for i, steps := range sc.Clients {
		for j, st := range steps {
			if (st.Kind != Pause && st.Kind != Send && st.Kind != Work) || st.D < 0 {
				return Result{}, &ArgumentError{Msg: fmt.Sprintf("Run: client %d step %d: bad step %+v", i+1, j+1, st)}
			}
		}
	}
	m := &sim{sc: sc, holder: 0, granted: sc.Generation}
	var err error
	mode := Unchecked
	switch sc.Scheme {
	case SchemeUnchecked, SchemeLockDelay:
	case SchemeSequencerAtCell:
		mode = CheckAtCell
	case SchemeSequencerNewest, SchemeOwnership:
		mode = NewestSeen
	case SchemeOwnershipAtRecord:
		mode = CheckAtRecord
	default:
		return Result{}, &ArgumentError{Msg: fmt.Sprintf("Run: unknown scheme %v", sc.Scheme)}
	}
	maxDelay := max(sc.LockDelay, DefaultMaxLockDelay)
	if m.cell, err = NewCell(Config{Lease: sc.Lease, MaxLockDelay: maxDelay}); err != nil {
		return Result{}, err
	}
	if mode == CheckAtRecord {
		m.server = NewRecordServer(func() uint64 { return uint64(m.actor.CurrentEpoch()) })
	} else if m.server, err = NewServer(mode, m.cell); err != nil {
		return Result{}, err
	}
	for i, steps := range sc.Clients {
		c := &simClient{name: fmt.Sprintf("client %d", i+1), steps: steps}
		m.clients = append(m.clients, c)
	}
	if err := m.start(); err != nil {
		return Result{}, err
	}
	if err := m.loop(); err != nil {
		return Result{}, err
	}
	m.res.Applied = m.server.Applied()
	m.res.Refused = m.server.Refused()
	m.res.Stale, m.res.Newer, m.res.Regressed = Regression(m.res.Applied)
	return m.res, nil
}

func (m *sim) ownershipScheme() bool {
	return m.sc.Scheme == SchemeOwnership || m.sc.Scheme == SchemeOwnershipAtRecord
}

func (m *sim) lockDelay() time.Duration {
	if m.sc.Scheme == SchemeLockDelay {
		return m.sc.LockDelay
	}
	return 0
}

func (m *sim) start() error {
	first := m.clients[0]
	if m.ownershipScheme() {
		a, err := ownership.NewActor("doc", ownership.Owned{Owner: ownership.NodeID(first.name), Epoch: ownership.Epoch(m.sc.Generation)})
		if err != nil {
			return err
		}
		m.actor = a
		first.seq = Sequencer{Lock: Lock, Mode: Exclusive, Generation: m.sc.Generation}
		m.trace(0, first.name, CoordinatorName, "Acquire: epoch %d", m.sc.Generation)
	} else {
		if err := m.cell.SetGeneration(Lock, m.sc.Generation-1); err != nil {
			return err
		}
		for _, c := range m.clients {
			id, err := m.cell.OpenSession(c.name, 0)
			if err != nil {
				return err
			}
			c.session = id
		}
		seq, err := m.cell.Acquire(first.session, Lock, Exclusive, m.lockDelay(), 0)
		if err != nil {
			return err
		}
		first.seq = seq
		m.trace(0, first.name, CellName, "Acquire: generation %d", seq.Generation)
	}
	first.state = holding
	m.tick(0)
	return m.runSteps(0, 0)
}

// runSteps runs client i from its current step until it pauses, finishes
// or stops.
func (m *sim) runSteps(i int, now time.Duration) error {
	c := m.clients[i]
	for c.state == holding {
		c.lastHeard = now
		if c.pc == len(c.steps) {
			return m.finish(i, now)
		}
		st := c.steps[c.pc]
		c.pc++
		switch st.Kind {
		case Pause:
			if !m.ownershipScheme() {
				if _, err := m.cell.KeepAlive(c.session, now); err != nil {
					return m.stop(i, now)
				}
				to, _ := m.cell.LeaseTimeout(c.session)
				m.trace(now, c.name, "", "pauses for %s (lease valid until %s)", FormatDuration(st.D), FormatDuration(to))
			} else {
				m.trace(now, c.name, "", "pauses for %s", FormatDuration(st.D))
			}
			c.state = paused
			m.push(item{at: now + st.D, kind: itemWake, client: i})
			return nil
		case Work:
			if m.ownershipScheme() {
				if !m.actor.MayMutate(ownership.Token{Actor: "doc", Epoch: ownership.Epoch(c.seq.Generation), Holder: ownership.NodeID(c.name)}) {
					return m.stop(i, now)
				}
			} else if _, err := m.cell.KeepAlive(c.session, now); err != nil {
				return m.stop(i, now)
			}
			m.trace(now, c.name, "", "works for %s", FormatDuration(st.D))
			c.state = working
			m.tick(now)
			m.push(item{at: now + st.D, kind: itemWake, client: i})
			return nil
		case Send:
			data := st.Data
			if data == "" {
				data = fmt.Sprintf("%c%d", 'A'+i%26, c.pc)
			}
			m.push(item{at: now + st.D, kind: itemArrive, client: i,
				write: Write{From: c.name, Data: data, Seq: c.seq, Sent: now, Arrived: now + st.D}})
			// After acting, the client hears whether it still holds the lock.
			if m.ownershipScheme() {
				if !m.actor.MayMutate(ownership.Token{Actor: "doc", Epoch: ownership.Epoch(c.seq.Generation), Holder: ownership.NodeID(c.name)}) {
					return m.stop(i, now)
				}
			} else if _, err := m.cell.KeepAlive(c.session, now); err != nil {
				return m.stop(i, now)
			}
			c.state = working
			m.tick(now)
			m.push(item{at: now + 2*st.D, kind: itemWake, client: i, quiet: true})
			return nil
		}
	}
	return nil
}

func (m *sim) stop(i int, now time.Duration) error {
	c := m.clients[i]
	c.state = stopped
	if m.ownershipScheme() {
		m.trace(now, c.name, "", "learns epoch %d is no longer current; stops", c.seq.Generation)
	} else {
		m.trace(now, c.name, "", "KeepAlive fails: session expired; stops")
	}
	return nil
}

// finish releases the lock the normal way.
func (m *sim) finish(i int, now time.Duration) error {
	c := m.clients[i]
	if m.ownershipScheme() {
		if !m.actor.MayMutate(ownership.Token{Actor: "doc", Epoch: ownership.Epoch(c.seq.Generation), Holder: ownership.NodeID(c.name)}) {
			return m.stop(i, now)
		}
		c.state = done
		next := m.nextWaiter()
		if next < 0 {
			m.trace(now, c.name, "", "done; keeps epoch %d", c.seq.Generation)
			return nil
		}
		if err := m.actor.BeginTransfer(ownership.NodeID(c.name), ownership.NodeID(m.clients[next].name)); err != nil {
			return err
		}
		if err := m.actor.CompleteRelease(ownership.NodeID(c.name)); err != nil {
			return err
		}
		m.trace(now, c.name, CoordinatorName, "hands over to %s: epoch %d", m.clients[next].name, m.actor.CurrentEpoch())
		m.holder = -1
		m.fence(now)
		return m.grant(now)
	}
	if err := m.cell.CloseSession(c.session, now); errors.Is(err, ErrSessionExpired) {
		return m.stop(i, now)
	} else if err != nil {
		return err
	}
	c.state = done
	m.trace(now, c.name, CellName, "Release")
	return m.grant(now)
}

func (m *sim) nextWaiter() int {
	for i, c := range m.clients {
		if c.state == waiting {
			return i
		}
	}
	return -1
}

// fence sends the record's current epoch to the server.
func (m *sim) fence(now time.Duration) {
	if m.sc.NoNotice || m.sc.Scheme != SchemeOwnership {
		return
	}
	m.push(item{at: now + m.sc.FenceDelay, kind: itemFence, epoch: uint64(m.actor.CurrentEpoch())})
}

// grant gives the lock to waiting clients, in order, while it is free.
func (m *sim) grant(now time.Duration) error {
	for {
		i := m.nextWaiter()
		if i < 0 {
			return nil
		}
		c := m.clients[i]
		if m.ownershipScheme() {
			tok, err := m.actor.Acquire(ownership.NodeID(c.name))
			if err != nil {
				return nil // not the intended owner, or not unowned
			}
			c.seq = Sequencer{Lock: Lock, Mode: Exclusive, Generation: uint64(tok.Epoch)}
			m.granted = max(m.granted, uint64(tok.Epoch))
			m.holder = i
			m.trace(now, c.name, CoordinatorName, "Acquire: epoch %d", tok.Epoch)
		} else {
			seq, err := m.cell.Acquire(c.session, Lock, Exclusive, m.lockDelay(), now)
			if errors.Is(err, ErrLockHeld) || errors.Is(err, ErrLockDelay) {
				return nil
			}
			if err != nil {
				return err
			}
			c.seq = seq
			m.granted = max(m.granted, seq.Generation)
			m.trace(now, c.name, CellName, "Acquire: generation %d", seq.Generation)
		}
		if i != 0 && m.clients[0].lost && !m.res.Failover {
			m.res.Failover = true
			m.res.LastHeard = m.clients[0].lostHeard
		}
		c.state = holding
		if err := m.runSteps(i, now); err != nil {
			return err
		}
	}
}

// tick queues the next round of KeepAlives for running clients, a quarter
// of a lease from now, unless one is queued already. The ownership model
// has no sessions to keep alive.
func (m *sim) tick(now time.Duration) {
	if m.ticking || m.ownershipScheme() {
		return
	}
	m.ticking = true
	m.push(item{at: now + m.sc.Lease/4, kind: itemTick})
}

// nextTime is the earliest moment something happens: a queued item, a
// deadline of the cell, or the failure detector's suspicion.
func (m *sim) nextTime() (time.Duration, bool) {
	var best time.Duration
	found := false
	consider := func(t time.Duration) {
		if !found || t < best {
			best, found = t, true
		}
	}
	if len(m.q) > 0 {
		consider(m.q[0].at)
	}
	if m.ownershipScheme() {
		if m.holder >= 0 && m.nextWaiter() >= 0 && m.clients[m.holder].state == paused {
			consider(m.clients[m.holder].lastHeard + m.sc.Detector)
		}
	} else if t, ok := m.cell.NextDeadline(); ok && m.nextWaiter() >= 0 {
		consider(t)
	}
	return best, found
}

func (m *sim) loop() error {
	const horizon = 24 * time.Hour
	for steps := 0; ; steps++ {
		now, ok := m.nextTime()
		if !ok {
			return nil
		}
		if now > horizon || steps > 1_000_000 {
			return fmt.Errorf("%w: still running at %v", ErrRunaway, now)
		}
		if err := m.advance(now); err != nil {
			return err
		}
		if err := m.grant(now); err != nil {
			return err
		}
		for len(m.q) > 0 && m.q[0].at == now {
			it := heap.Pop(&m.q).(item)
			if err := m.handle(it, now); err != nil {
				return err
			}
			if err := m.grant(now); err != nil {
				return err
			}
		}
	}
}

// advance lets time pass at the cell (sessions expire) or at the
// coordinator (the failure detector suspects a silent holder).
func (m *sim) advance(now time.Duration) error {
	if m.ownershipScheme() {
		h := m.holder
		next := m.nextWaiter()
		if h >= 0 && next >= 0 && m.clients[h].state == paused && now >= m.clients[h].lastHeard+m.sc.Detector {
			if err := m.actor.Revoke(ownership.NodeID(m.clients[next].name)); err != nil {
				return err
			}
			m.clients[h].lost, m.clients[h].lostHeard = true, m.clients[h].lastHeard
			m.holder = -1
			m.trace(now, CoordinatorName, "", "no word from %s for %s: Revoke, epoch %d", m.clients[h].name, FormatDuration(m.sc.Detector), m.actor.CurrentEpoch())
			m.fence(now)
		}
		return nil
	}
	ev, err := m.cell.Advance(now)
	if err != nil {
		return err
	}
	for _, e := range ev {
		if e.Kind != LockLost {
			continue
		}
		for _, c := range m.clients {
			if c.session == e.Session {
				c.lost, c.lostHeard = true, c.lastHeard
			}
		}
		if e.Until > e.At {
			m.trace(e.At, CellName, "", "%s's session expired: lock free, lock-delay until %s", e.Client, FormatDuration(e.Until))
		} else {
			m.trace(e.At, CellName, "", "%s's session expired: lock free", e.Client)
		}
	}
	return nil
}

func (m *sim) handle(it item, now time.Duration) error {
	switch it.kind {
	case itemTick:
		// Clients blocked in Acquire or working are running: they keep
		// their sessions alive with KeepAlives, well inside the lease.
		alive := false
		for i, c := range m.clients {
			if c.state == waiting || c.state == working {
				alive = true
				if _, err := m.cell.KeepAlive(c.session, now); err != nil {
					return fmt.Errorf("%s lost its session while running: %w", m.clients[i].name, err)
				}
			}
		}
		m.ticking = false
		if alive {
			m.tick(now)
		}
	case itemWake:
		c := m.clients[it.client]
		if c.state != paused && c.state != working {
			return nil
		}
		if c.state == paused {
			m.trace(now, c.name, "", "wakes up")
		}
		c.state = holding
		return m.runSteps(it.client, now)
	case itemFence:
		m.server.RaiseFence(it.epoch)
		m.trace(now, CoordinatorName, ServerName, "fence: epoch %d", it.epoch)
	case itemArrive:
		w := it.write
		err := m.server.Receive(w, now)
		verdict := "applied"
		var refused *RefusedError
		switch {
		case errors.As(err, &refused):
			verdict = "refused"
		case err != nil:
			return err
		default:
			switch {
			case w.Seq.Generation < m.applied:
				m.res.Late++
				verdict = fmt.Sprintf("applied over %d's write", m.applied)
			case w.Seq.Generation < m.granted:
				m.res.Late++
				verdict = fmt.Sprintf("applied, though %d is granted", m.granted)
			}
			m.applied = max(m.applied, w.Seq.Generation)
			if w.Seq.Generation > m.sc.Generation && !m.res.NewWrite {
				m.res.NewWrite = true
				m.res.FirstNewWrite = now
			}
		}
		unit := "generation"
		if m.ownershipScheme() {
			unit = "epoch"
		}
		m.trace(now, w.From, ServerName, "write %s with %s %d (sent at %s): %s", w.Data, unit, w.Seq.Generation, FormatDuration(w.Sent), verdict)
	}
	return nil
}

// FormatDuration prints d as time.Duration does, without a trailing zero
// unit: "1m" rather than "1m0s", "1m12s", "20.01s".
func FormatDuration(d time.Duration) string {
	t := d.String()
	if strings.HasSuffix(t, "m0s") {
		t = strings.TrimSuffix(t, "0s")
	}
	if strings.HasSuffix(t, "h0m") {
		t = strings.TrimSuffix(t, "0m")
	}
	return t
}
