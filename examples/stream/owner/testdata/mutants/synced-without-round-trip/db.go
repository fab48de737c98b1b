package owner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Options configure Open.
type Options struct {
	// Stream is the client of the database's stream. Required.
	Stream *Client
	// ID names this copy as a writer on the stream (records carry it). It is
	// used only when dir is new, and kept in dir/id; a random id is made if
	// empty. Give each directory its own: copies sharing an id are one
	// writer as far as their records tell, and a copy going live after an
	// offline open takes the other's records for its own (see "Copies of a
	// cache" in the package doc).
	ID string
	// Manual turns the background replicator off: replication then happens
	// only inside Synced and Push. Tests and transcripts use it.
	Manual bool
	// RetryInterval is the background replicator's pause after a failure
	// (default 100ms).
	RetryInterval time.Duration
	// MaxBatch is the most commits one append carries (default 64). A 413
	// halves it.
	MaxBatch int
	// Trace, if set, is called (synchronously, possibly with the DB's lock
	// held, so it must not call the DB) for every claim, append, recovery
	// and reset.
	Trace func(Event)
}

// Event describes one step of the replicator, for Options.Trace.
type Event struct {
	// Kind is "catch-up", "claim", "lost" (an open's claim lost a race; Epoch
	// is the claim's, Result its answer), "append", "probe", "recover",
	// "reset" or "new-history".
	Kind   string
	Reason string // for a claim: "open", "forgotten", "limit", "live"
	Epoch  uint64
	Seq    uint64
	Result AppendResult // for claim, append and probe
	// For recover: commits that had landed, pending commits kept to send,
	// pending commits discarded because another owner wrote, and commits
	// taken from the stream. For catch-up, Taken only.
	Landed, Kept, Discarded, Taken int
	Err                            error // for reset
}

// DB is one process's copy of a database. Its methods are safe for
// concurrent use.
type DB struct {
	dir  string
	opts Options
	c    *Client
	id   string // writer id of this copy
	// nonce tells this open's claims from claims by other opens of the same
	// copy (a copied directory has the same id).
	nonce string

	rmu sync.Mutex // serializes everything that talks to the stream

	lock      *os.File // dir/lock, flocked while the DB is open
	mu        sync.Mutex
	log       *localLog
	commits   []Commit
	kv        map[string]string
	kvShared  bool   // kv is referenced by a Snapshot: copy before writing
	ackIndex  uint64 // the stream holds commits[:ackIndex]
	ackOffset string // the stream offset up to which ackIndex is known
	epoch     uint64 // the epoch of this process's last won claim
	ownMax    uint64 // highest epoch this copy claimed
	seen      uint64 // highest epoch seen anywhere
	read      uint64 // highest epoch of the stream records this copy read (kept in ack records)
	seq       uint64 // last sequence number acknowledged in epoch
	inc       string // incarnation token followed
	live      bool   // false after an offline open (the stream was unreachable)
	maxBatch  int
	inflight  *batch // sent, answer not yet seen: resent unchanged
	last      *batch // last acknowledged append in epoch (for probes)
	discards  int    // how many times merge discarded pending commits
	resetErr  *ResetError
	listeners []func(error)
	due       []func(error) // listeners of a reset, not yet run (see fire)
	closed    bool

	kick chan struct{}
	stop chan struct{}
	// stopped is cancelled by Close: it ends the replicator's request in
	// flight.
	stopped context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

type batch struct {
	seq  uint64
	to   uint64 // commits[:to] are acknowledged when this batch is
	body []byte
}

// Open opens the database in dir (created if missing) and, if the stream is
// reachable, claims it: it claims an epoch above every one it has seen,
// again above the winner after a lost race, then recovers its pending
// commits (chapter "Owning a database through its stream", sections "The claim" and
// "Recovery after the claim"). If the stream cannot be reached, Open
// succeeds offline: reads and commits work locally, and the first Synced or
// Push (or the background replicator) goes live, claiming only if nobody
// else wrote or claimed since (section "Claims the package makes on its own").
//
// Open holds dir/lock until Close. It fails with an error matching ErrInUse
// while another open DB holds it, with one matching ErrClaimRaces after
// MaxClaimRounds lost claims, and with one naming dir/log and the record
// when the local log is damaged anywhere but in a torn last line.
func Open(ctx context.Context, dir string, opts Options) (*DB, error) {
	if opts.Stream == nil {
		return nil, fmt.Errorf("open %s: Options.Stream is nil", dir)
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = 64
	}
	if opts.RetryInterval <= 0 {
		opts.RetryInterval = 100 * time.Millisecond
	}
	if err := mkdirSynced(dir); err != nil {
		return nil, fmt.Errorf("open %s: %v", dir, err)
	}
	lock, err := lockDir(filepath.Join(dir, "lock"))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	db, err := open(ctx, dir, opts, lock)
	if err != nil {
		lock.Close()
		return nil, err
	}
	return db, nil
}

func open(ctx context.Context, dir string, opts Options, lock *os.File) (*DB, error) {
	id, err := loadID(dir, opts.ID)
	if err != nil {
		return nil, err
	}
	l, recs, err := openLocalLog(dir)
	if err != nil {
		return nil, err
	}
	db := &DB{dir: dir, opts: opts, c: opts.Stream, id: id, nonce: randomHex(8), log: l, lock: lock,
		kv: map[string]string{}, ackOffset: startOffset, maxBatch: opts.MaxBatch,
		kick: make(chan struct{}, 1), stop: make(chan struct{})}
	db.stopped, db.cancel = context.WithCancel(context.Background())
	if err := db.replay(recs); err != nil {
		l.close()
		return nil, fmt.Errorf("open %s: %v", dir, err)
	}
	err = db.c.Create(ctx)
	if err == nil {
		db.rmu.Lock()
		err = db.claimOpen(ctx)
		db.rmu.Unlock()
	}
	switch {
	case err == nil:
		db.live = true
	case errors.Is(err, ErrUnreachable):
		db.live = false // offline open: goLive later
	default:
		l.close()
		return nil, err
	}
	if !opts.Manual {
		db.wg.Add(1)
		go db.background()
	}
	return db, nil
}

func (db *DB) replay(recs []record) error {
	for n, r := range recs {
		switch r.T {
		case "commit":
			if r.I != uint64(len(db.commits))+1 {
				return fmt.Errorf("log record %d: commit %d out of order", n+1, r.I)
			}
			db.commits = append(db.commits, r.commit())
			db.kv[r.K] = r.V
		case "claim":
			db.ownMax = max(db.ownMax, r.E)
			db.seen = max(db.seen, r.E)
		case "owner":
			db.epoch, db.ackIndex, db.ackOffset = r.E, r.I, r.O
		case "ack":
			db.ackIndex, db.ackOffset = r.I, r.O
			db.read, db.seen = max(db.read, r.E), max(db.seen, r.E)
		case "inc":
			db.inc = r.X
		}
	}
	if db.ackIndex > uint64(len(db.commits)) {
		return fmt.Errorf("log acknowledges commit %d of %d", db.ackIndex, len(db.commits))
	}
	return nil
}

func loadID(dir, want string) (string, error) {
	path := filepath.Join(dir, "id")
	if lines := readLines(path); len(lines) > 0 {
		return lines[0], nil
	}
	id := want
	if id == "" {
		id = randomHex(8)
	}
	if err := writeSynced(path, []byte(id+"\n")); err != nil {
		return "", err
	}
	if err := syncDir(dir); err != nil {
		return "", fmt.Errorf("%s: %v", path, err)
	}
	return id, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// usable returns the error every operation returns once the DB is closed or
// reset. Call with mu held.
func (db *DB) usable() error {
	if db.resetErr != nil {
		return db.resetErr
	}
	if db.closed {
		return fmt.Errorf("%s: %w", db.dir, ErrClosed)
	}
	return nil
}

// Put commits key=value: the commit is written to the local log and fsynced
// before Put returns, and is replicated later. It is not safe to act on it
// outside the process before Synced returns.
func (db *DB) Put(key, value string) error {
	db.mu.Lock()
	if err := db.usable(); err != nil {
		db.mu.Unlock()
		return err
	}
	c := Commit{Index: uint64(len(db.commits)) + 1, Writer: db.id, Key: key, Value: value}
	if err := db.log.append(record{T: "commit", I: c.Index, W: c.Writer, K: key, V: value}); err != nil {
		db.mu.Unlock()
		return err
	}
	db.commits = append(db.commits, c)
	if db.kvShared {
		db.kv, db.kvShared = maps.Clone(db.kv), false
	}
	db.kv[key] = value
	db.mu.Unlock()
	select {
	case db.kick <- struct{}{}:
	default:
	}
	return nil
}

// Get reads key from the local state (pending commits included). It fails
// with an error matching ErrReset once the database has reset.
func (db *DB) Get(key string) (string, bool, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if err := db.usable(); err != nil {
		return "", false, err
	}
	v, ok := db.kv[key]
	return v, ok, nil
}

// Snapshot is a read-only view of the state at one moment. It keeps working
// after its DB resets or closes.
type Snapshot struct{ kv map[string]string }

// Get reads key in the snapshot.
func (s *Snapshot) Get(key string) (string, bool) {
	v, ok := s.kv[key]
	return v, ok
}

// Len is the number of keys in the snapshot.
func (s *Snapshot) Len() int { return len(s.kv) }

// Snapshot opens a read snapshot of the current state.
func (db *DB) Snapshot() (*Snapshot, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if err := db.usable(); err != nil {
		return nil, err
	}
	db.kvShared = true
	return &Snapshot{kv: db.kv}, nil
}

// OnReset registers f to run once when the database resets, with the reset
// error (matching ErrReset). If it has already reset, f runs now. f runs on
// the goroutine that found the reset (a Synced or Push call, or the
// background replicator) after the DB has released its own locks, so f may
// call the DB, Close included; a Synced call that found the reset returns
// after its listeners ran.
func (db *DB) OnReset(f func(error)) {
	db.mu.Lock()
	if db.resetErr != nil {
		err := db.resetErr
		db.mu.Unlock()
		f(err)
		return
	}
	db.listeners = append(db.listeners, f)
	db.mu.Unlock()
}

// Synced returns nil once the stream holds every commit this process made
// before the call, and a round trip that started after the call found the
// process still the owner. It is the one rule for callers: act outside the
// process (answer a client, send an email) only after Synced returned nil.
//
// Without Options.Manual, Synced keeps trying while the stream cannot be
// reached, until ctx is done. With Manual it makes one attempt. It fails with
// an error wrapping ErrUnreachable if the stream could not be reached (call
// it again), with an error matching
// ErrReset if the database reset, before or during the call, and with
// ErrDiscarded if a recovery during the call found another owner's commits
// and discarded pending ones.
func (db *DB) Synced(ctx context.Context) error {
	for {
		err := db.syncedOnce(ctx)
		if db.opts.Manual || !errors.Is(err, ErrUnreachable) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (%v)", err, ctx.Err())
		case <-time.After(db.opts.RetryInterval):
		}
	}
}

func (db *DB) syncedOnce(ctx context.Context) error {
	db.mu.Lock()
	if err := db.usable(); err != nil {
		db.mu.Unlock()
		return err
	}
	target, discards := uint64(len(db.commits)), db.discards
	db.mu.Unlock()

	db.rmu.Lock()
	defer db.releaseR()
	if err := db.checkUsable(); err != nil {
		return err // reset while this call waited: pending Synced calls fail
	}
	if !db.isLive() {
		if err := db.goLive(ctx); err != nil {
			return err
		}
	}
	appended, err := db.push(ctx)
	if err != nil {
		return err
	}
	db.mu.Lock()
	done, discarded := db.ackIndex >= target, db.discards != discards
	db.mu.Unlock()
	if discarded {
		return fmt.Errorf("%s: synced: %w", db.dir, ErrDiscarded)
	}
	if !done {
		return fmt.Errorf("%s: synced: commit %d not acknowledged", db.dir, target)
	}
	if appended > 0 {
		// An append sent after the call was acknowledged under our epoch:
		// that was the round trip.
		return nil
	}
	return nil
}

// Push sends pending commits to the stream (going live first if the open was
// offline). Unlike Synced it proves nothing about ownership. It is how a
// Manual DB replicates without waiting.
func (db *DB) Push(ctx context.Context) error {
	err := db.pushR(ctx)
	db.fire()
	return err
}

// pushR is Push without running the listeners of a reset it finds.
func (db *DB) pushR(ctx context.Context) error {
	db.rmu.Lock()
	defer db.rmu.Unlock()
	if err := db.checkUsable(); err != nil {
		return err
	}
	if !db.isLive() {
		if err := db.goLive(ctx); err != nil {
			return err
		}
	}
	_, err := db.push(ctx)
	return err
}

// releaseR releases rmu, then runs the listeners of a reset found while it
// was held.
func (db *DB) releaseR() {
	db.rmu.Unlock()
	db.fire()
}

func (db *DB) checkUsable() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.usable()
}

func (db *DB) isLive() bool {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.live
}

// Epoch is the epoch of this process's last won claim (0 before any).
func (db *DB) Epoch() uint64 {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.epoch
}

// Live reports whether the DB has claimed the stream since it opened.
func (db *DB) Live() bool { return db.isLive() }

// Commits returns a copy of the local commits (acknowledged and pending).
func (db *DB) Commits() ([]Commit, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if err := db.usable(); err != nil {
		return nil, err
	}
	return append([]Commit(nil), db.commits...), nil
}

// Acknowledged is how many commits the stream is known to hold.
func (db *DB) Acknowledged() uint64 {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.ackIndex
}

// Close stops the replicator and closes the local log. Pending commits stay
// in the log; the next Open claims and sends them.
func (db *DB) Close() error {
	db.mu.Lock()
	if db.closed {
		db.mu.Unlock()
		return nil
	}
	db.closed = true
	db.mu.Unlock()
	close(db.stop)
	db.cancel()
	db.wg.Wait()
	db.rmu.Lock()
	defer db.rmu.Unlock()
	err := db.log.close()
	db.lock.Close()
	return err
}

// reset puts the DB in its terminal reset state. Its listeners become due;
// fire runs them once the caller has released the DB's locks, so that a
// listener may call the DB.
func (db *DB) reset(e *ResetError) error {
	db.mu.Lock()
	if db.resetErr != nil {
		err := db.resetErr
		db.mu.Unlock()
		return err
	}
	e.Dir, e.Stream = db.dir, db.c.Name
	db.resetErr = e
	db.due, db.listeners = db.listeners, nil
	db.mu.Unlock()
	db.trace(Event{Kind: "reset", Epoch: e.Epoch, Err: e})
	return e
}

// fire runs the listeners that a reset made due, each once. Call it with no
// lock of the DB held.
func (db *DB) fire() {
	db.mu.Lock()
	ls, err := db.due, db.resetErr
	db.due = nil
	db.mu.Unlock()
	for _, f := range ls {
		f(err)
	}
}

func (db *DB) trace(e Event) {
	if db.opts.Trace != nil {
		db.opts.Trace(e)
	}
}

// background replicates pending commits, and goes live after an offline
// open, until Close or a reset.
func (db *DB) background() {
	// A listener may call Close, which waits for this goroutine: it runs
	// after Done.
	defer func() {
		db.wg.Done()
		db.fire()
	}()
	t := time.NewTicker(db.opts.RetryInterval)
	defer t.Stop()
	for {
		select {
		case <-db.stop:
			return
		case <-db.kick:
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(db.stopped, 10*db.opts.RetryInterval+time.Second)
		err := db.pushR(ctx)
		cancel()
		if errors.Is(err, ErrReset) || errors.Is(err, ErrClosed) {
			return
		}
	}
}
