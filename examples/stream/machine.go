package stream

import (
	"encoding/json"
	"fmt"
	"sync"
)

// Machine is the replicated state machine's adapter: it holds a State behind
// a lock, applies encoded commands (the bytes a Raft log carries), takes and
// restores snapshots, and lets readers wait for a stream to change.
//
// Its methods match the replica package's Machine interface:
//
//	Apply(cmd []byte) []byte
//	Snapshot() ([]byte, error)
//	Restore([]byte) error
type Machine struct {
	mu      sync.RWMutex
	st      *State
	waiters map[string]*waiter
}

// waiter is one stream's Changed channel and how many readers hold it.
type waiter struct {
	ch chan struct{}
	n  int
}

// NewMachine returns a machine with no streams.
func NewMachine() *Machine {
	return &Machine{st: NewState(), waiters: map[string]*waiter{}}
}

// Apply decodes a command, applies it, wakes the stream's waiters and returns
// the encoded Result. Bytes that are not a command give a BadRequest result
// and change nothing.
func (m *Machine) Apply(cmd []byte) []byte {
	c, err := DecodeCommand(cmd)
	if err != nil {
		return refuse(BadRequest, "%v", err).Encode()
	}
	return m.ApplyCommand(c).Encode()
}

// ApplyCommand applies a decoded command (for a machine not behind a log,
// and for tests).
func (m *Machine) ApplyCommand(c Command) Result {
	m.mu.Lock()
	r := m.st.Apply(c)
	if c.Op == OpReincarnate && c.Stream == "" || c.Op == OpSweep {
		m.wakeAllLocked()
	} else {
		m.wakeLocked(c.Stream)
	}
	m.mu.Unlock()
	return r
}

// NeedsSweep reports whether an OpSweep at now (Unix ns) with producerTTL
// (ns) would change anything; see State.NeedsSweep.
func (m *Machine) NeedsSweep(now, producerTTL int64) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.st.NeedsSweep(now, producerTTL)
}

func (m *Machine) wakeLocked(name string) {
	if w, ok := m.waiters[name]; ok {
		close(w.ch)
		delete(m.waiters, name)
	}
}

func (m *Machine) wakeAllLocked() {
	for name, w := range m.waiters {
		close(w.ch)
		delete(m.waiters, name)
	}
}

// Changed returns a channel that is closed the next time a command is
// applied to the named stream (or the machine is restored), and a release
// func the reader must call once when it stops waiting (it may be called
// more than once). Take it before reading, then wait on it, and no change is
// missed. The entry for the stream goes when the channel is closed or when
// its last reader releases it, so a stream that expires (no command) while
// readers wait leaves nothing behind.
func (m *Machine) Changed(name string) (<-chan struct{}, func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	w, ok := m.waiters[name]
	if !ok {
		w = &waiter{ch: make(chan struct{})}
		m.waiters[name] = w
	}
	w.n++
	var once sync.Once
	return w.ch, func() {
		once.Do(func() {
			m.mu.Lock()
			defer m.mu.Unlock()
			w.n--
			if w.n == 0 && m.waiters[name] == w {
				delete(m.waiters, name)
			}
		})
	}
}

// Waiting returns how many streams have a Changed channel outstanding
// (readers waiting on them); for tests that check no entry is left behind.
func (m *Machine) Waiting() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.waiters)
}

// Readers returns how many Changed channels of stream name are outstanding:
// the long-poll and SSE readers waiting on it now. Tests wait for it
// instead of sleeping until their readers are in place.
func (m *Machine) Readers(name string) int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if w, ok := m.waiters[name]; ok {
		return w.n
	}
	return 0
}

// Snapshot returns the whole state as bytes (JSON, maps in key order, so
// equal states give equal snapshots).
func (m *Machine) Snapshot() ([]byte, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return json.Marshal(m.st)
}

// Restore replaces the state by one from Snapshot and wakes every waiter.
func (m *Machine) Restore(b []byte) error {
	st := NewState()
	if err := json.Unmarshal(b, st); err != nil {
		return fmt.Errorf("stream: restore: malformed snapshot: %v", err)
	}
	if st.Streams == nil {
		st.Streams = map[string]*Stream{}
	}
	for _, s := range st.Streams {
		if s.Producers == nil {
			s.Producers = map[string]*ProducerState{}
		}
	}
	m.mu.Lock()
	m.st = st
	m.wakeAllLocked()
	m.mu.Unlock()
	return nil
}

// Info is a stream's metadata as of a read (HEAD, PROTOCOL.md 5.5).
type Info struct {
	Name        string
	ContentType string
	Tail        int64
	Closed      bool
	TTL         int64 // seconds, -1 for none
	ExpiresAt   int64 // Unix ns, 0 for none
	Incarnation string
	// Fence is the stream's fence mode: FenceRequired, or "" for none.
	Fence string
	// ExpiresBy is when the stream expires (Unix ns) unless a read touches
	// its sliding TTL first: the earlier of ExpiresAt and the last access
	// plus TTL; 0 when it never expires. Readers that wait on the stream
	// wake then, since expiry is not a command and wakes no one.
	ExpiresBy int64
}

// Stat returns the stream's metadata, or NotFound (also for a stream expired
// at now, Unix ns) or Gone (soft-deleted). It changes nothing.
func (m *Machine) Stat(name string, now int64) (Info, Outcome) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	s := m.st.Streams[name]
	if s == nil || (!s.SoftDeleted && s.Expired(now)) {
		return Info{}, NotFound
	}
	if s.SoftDeleted {
		return Info{}, Gone
	}
	return s.info(), ""
}

func (s *Stream) info() Info {
	by := s.ExpiresAt
	if s.TTL >= 0 {
		if t := s.LastAccess + s.TTL*1e9; by == 0 || t < by {
			by = t
		}
	}
	return Info{Name: s.Name, ContentType: s.ContentType, Tail: s.Tail, Closed: s.Closed,
		TTL: s.TTL, ExpiresAt: s.ExpiresAt, Incarnation: s.Incarnation, Fence: s.Fence, ExpiresBy: by}
}

// ReadResult is the answer to a catch-up read.
type ReadResult struct {
	Info
	// Messages are the messages from the offset on (the first one may be the
	// rest of a byte stream's chunk). For a byte stream their concatenation
	// is the body; for a JSON stream each is one JSON value.
	Messages [][]byte
	// Start is the offset read from; Next the offset after the last byte
	// returned.
	Start, Next int64
	// UpToDate is true when the read reached the tail.
	UpToDate bool
}

// Read returns the stream's messages from offset (bytes, 0 for the start),
// at most about maxBytes of them (always at least one message if any), or
// NotFound/Gone, or BadRequest for an offset past the tail or inside a JSON
// message. It changes nothing.
func (m *Machine) Read(name string, offset int64, maxBytes int, now int64) (ReadResult, Outcome) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	s := m.st.Streams[name]
	if s == nil || (!s.SoftDeleted && s.Expired(now)) {
		return ReadResult{}, NotFound
	}
	if s.SoftDeleted {
		return ReadResult{}, Gone
	}
	r := ReadResult{Info: s.info(), Start: offset, Next: offset}
	if offset < 0 || offset > s.Tail {
		return r, BadRequest
	}
	// Find the first chunk that ends after offset.
	lo, hi := 0, len(s.Chunks)
	for lo < hi {
		mid := (lo + hi) / 2
		ch := s.Chunks[mid]
		if ch.Offset+int64(len(ch.Data)) <= offset {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	size := 0
	for i := lo; i < len(s.Chunks); i++ {
		ch := s.Chunks[i]
		data := ch.Data
		if ch.Offset < offset {
			if s.IsJSON() {
				return r, BadRequest
			}
			data = data[offset-ch.Offset:]
		}
		if size > 0 && size+len(data) > maxBytes {
			break
		}
		r.Messages = append(r.Messages, data)
		size += len(data)
		r.Next = ch.Offset + int64(len(ch.Data))
	}
	r.UpToDate = r.Next == s.Tail
	return r, ""
}
