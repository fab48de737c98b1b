package stream

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"unsafe"
)

// snapMagic starts a snapshot in the streamed format (WriteSnapshot); its
// last byte is the format's version. A snapshot that starts with neither
// snapMagic nor snapMagicV1 is the JSON of Snapshot.
//
// Version 2 adds each stream's fence mode (Stream.Fence) after its
// SoftDeleted flag. Version 1 (snapMagicV1), written before fence modes
// existed, is still read: its streams have none.
const (
	snapMagic   = "DSS2"
	snapMagicV1 = "DSS1"
)

// maxSnapString bounds one string or one chunk read from a snapshot, so that
// a corrupt length cannot make Restore allocate without limit.
const maxSnapString = 1 << 30

// CaptureSnapshot captures the state for WriteTo, under the read lock, in
// time proportional to the number of streams and producers (not bytes): the
// bytes of a stream are never changed once appended, so the capture keeps
// references to them. The returned function writes the snapshot to w; it may
// run while later commands apply (Raft persists snapshots beside the log,
// Raft §7), and is safe to call once.
func (m *Machine) CaptureSnapshot() func(w io.Writer) error {
	m.mu.RLock()
	names := m.st.names()
	streams := make([]Stream, len(names))
	for i, n := range names {
		s := m.st.Streams[n]
		streams[i] = *s
		streams[i].Chunks = s.Chunks[:len(s.Chunks):len(s.Chunks)]
		streams[i].Producers = make(map[string]*ProducerState, len(s.Producers))
		for id, p := range s.Producers {
			cp := *p
			streams[i].Producers[id] = &cp
		}
	}
	next := m.st.NextIncarnation
	m.mu.RUnlock()
	return func(w io.Writer) error { return writeSnapshot(w, next, streams) }
}

// WriteSnapshot writes the whole state to w in the streamed format: equal
// states give equal bytes, and a fork's inherited bytes are written once, in
// its source, and referenced from the fork (so 100 forks of a 1 MB stream
// add a few bytes each, not 1 MB each).
func (m *Machine) WriteSnapshot(w io.Writer) error { return m.CaptureSnapshot()(w) }

// sameBytes reports whether a and b start at the same byte in memory: a
// fork's inherited chunk shares its source's bytes.
func sameBytes(a, b []byte) bool {
	return len(a) > 0 && len(b) > 0 && unsafe.SliceData(a) == unsafe.SliceData(b)
}

// inherited returns how many leading chunks of fork share their bytes with
// src's chunks at the same offsets (the last of them may be a prefix of
// src's chunk: a fork in the middle of a chunk).
func inherited(fork, src *Stream) int {
	k := 0
	for k < len(fork.Chunks) && k < len(src.Chunks) {
		f, s := fork.Chunks[k], src.Chunks[k]
		if f.Offset != s.Offset || !sameBytes(f.Data, s.Data) || len(f.Data) > len(s.Data) {
			break
		}
		k++
		if len(f.Data) < len(s.Data) {
			break
		}
	}
	return k
}

type snapWriter struct {
	w   *bufio.Writer
	buf [binary.MaxVarintLen64]byte
}

func (s *snapWriter) uvarint(v uint64) { s.w.Write(binary.AppendUvarint(s.buf[:0], v)) }
func (s *snapWriter) varint(v int64)   { s.w.Write(binary.AppendVarint(s.buf[:0], v)) }
func (s *snapWriter) bytes(b []byte)   { s.uvarint(uint64(len(b))); s.w.Write(b) }
func (s *snapWriter) str(v string)     { s.uvarint(uint64(len(v))); s.w.WriteString(v) }
func (s *snapWriter) bool(v bool) {
	if v {
		s.w.WriteByte(1)
	} else {
		s.w.WriteByte(0)
	}
}

func writeSnapshot(out io.Writer, next uint64, streams []Stream) error {
	byName := make(map[string]*Stream, len(streams))
	for i := range streams {
		byName[streams[i].Name] = &streams[i]
	}
	w := &snapWriter{w: bufio.NewWriterSize(out, 64<<10)}
	w.w.WriteString(snapMagic)
	w.uvarint(next)
	w.uvarint(uint64(len(streams)))
	for i := range streams {
		s := &streams[i]
		w.str(s.Name)
		w.str(s.ContentType)
		w.varint(s.TTL)
		w.varint(s.LastAccess)
		w.varint(s.ExpiresAt)
		w.varint(s.Tail)
		w.bool(s.Closed)
		w.bool(s.ClosedBy != nil)
		if s.ClosedBy != nil {
			w.str(s.ClosedBy.ID)
			w.uvarint(s.ClosedBy.Epoch)
			w.uvarint(s.ClosedBy.Seq)
		}
		w.str(s.StreamSeq)
		w.str(s.Incarnation)
		w.str(s.ForkFrom)
		w.varint(s.ForkOffset)
		w.varint(s.ForkSubOffset)
		w.varint(int64(s.Forks))
		w.bool(s.SoftDeleted)
		w.str(s.Fence)
		ids := slices.Sorted(maps.Keys(s.Producers))
		w.uvarint(uint64(len(ids)))
		for _, id := range ids {
			p := s.Producers[id]
			w.str(id)
			w.uvarint(p.Epoch)
			w.uvarint(p.LastSeq)
			w.varint(p.LastWrite)
		}
		// Inherited chunks: how many, and the length of the last one
		// (shorter than the source's when the fork split a chunk).
		k := 0
		if src := byName[s.ForkFrom]; src != nil {
			k = inherited(s, src)
		}
		w.uvarint(uint64(k))
		if k > 0 {
			w.uvarint(uint64(len(s.Chunks[k-1].Data)))
		}
		w.uvarint(uint64(len(s.Chunks) - k))
		for _, ch := range s.Chunks[k:] {
			w.varint(ch.Offset)
			w.bytes(ch.Data)
		}
	}
	return w.w.Flush()
}

type snapReader struct {
	r   *bufio.Reader
	err error
}

func (s *snapReader) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

func (s *snapReader) uvarint() uint64 {
	if s.err != nil {
		return 0
	}
	v, err := binary.ReadUvarint(s.r)
	s.fail(err)
	return v
}

func (s *snapReader) varint() int64 {
	if s.err != nil {
		return 0
	}
	v, err := binary.ReadVarint(s.r)
	s.fail(err)
	return v
}

func (s *snapReader) bytes() []byte {
	n := s.uvarint()
	if s.err != nil {
		return nil
	}
	if n > maxSnapString {
		s.fail(fmt.Errorf("a length of %d bytes", n))
		return nil
	}
	b := make([]byte, n)
	_, err := io.ReadFull(s.r, b)
	s.fail(err)
	return b
}

func (s *snapReader) str() string { return string(s.bytes()) }

func (s *snapReader) bool() bool {
	if s.err != nil {
		return false
	}
	b, err := s.r.ReadByte()
	s.fail(err)
	return b == 1
}

// ReadSnapshot replaces the state with one read from r, in the streamed
// format of WriteSnapshot or the JSON of Snapshot, and wakes every waiter.
// Forks share their sources' bytes again. Errors: a malformed or truncated
// snapshot (the state is then left as it was).
func (m *Machine) ReadSnapshot(r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	head, err := br.Peek(len(snapMagic))
	if err != nil || string(head) != snapMagic && string(head) != snapMagicV1 {
		b, err := io.ReadAll(br)
		if err != nil {
			return fmt.Errorf("stream: restore: %v", err)
		}
		return m.Restore(b)
	}
	v2 := true
	br.Discard(len(snapMagic))
	st, err := readSnapshot(&snapReader{r: br}, v2)
	if err != nil {
		return fmt.Errorf("stream: restore: malformed snapshot: %v", err)
	}
	m.mu.Lock()
	m.st = st
	m.wakeAllLocked()
	m.mu.Unlock()
	return nil
}

type pending struct {
	k       int
	lastLen int
	own     []Chunk
}

// readSnapshot reads the streams after the magic; withFence is true for
// version 2, whose streams carry their fence mode.
func readSnapshot(r *snapReader, withFence bool) (*State, error) {
	st := NewState()
	st.NextIncarnation = r.uvarint()
	n := r.uvarint()
	pend := map[string]pending{}
	for i := uint64(0); i < n && r.err == nil; i++ {
		s := &Stream{Name: r.str(), ContentType: r.str(), TTL: r.varint(), LastAccess: r.varint(),
			ExpiresAt: r.varint(), Tail: r.varint(), Closed: r.bool()}
		if r.bool() {
			s.ClosedBy = &Producer{ID: r.str(), Epoch: r.uvarint(), Seq: r.uvarint()}
		}
		s.StreamSeq, s.Incarnation, s.ForkFrom = r.str(), r.str(), r.str()
		s.ForkOffset, s.ForkSubOffset = r.varint(), r.varint()
		s.Forks, s.SoftDeleted = int(r.varint()), r.bool()
		if withFence {
			switch s.Fence = r.str(); s.Fence {
			case "", FenceRequired:
			default:
				return nil, fmt.Errorf("stream %q: unknown fence mode %q", s.Name, s.Fence)
			}
		}
		np := r.uvarint()
		s.Producers = make(map[string]*ProducerState, min(np, 1<<16))
		for j := uint64(0); j < np && r.err == nil; j++ {
			id := r.str()
			s.Producers[id] = &ProducerState{Epoch: r.uvarint(), LastSeq: r.uvarint(), LastWrite: r.varint()}
		}
		var p pending
		k := r.uvarint()
		if k > 0 {
			last := r.uvarint()
			if k > maxSnapString || last > maxSnapString {
				return nil, fmt.Errorf("stream %q: inherits %d chunks, the last of %d bytes", s.Name, k, last)
			}
			p.k, p.lastLen = int(k), int(last)
		}
		nc := r.uvarint()
		p.own = make([]Chunk, 0, min(nc, 1<<16))
		for j := uint64(0); j < nc && r.err == nil; j++ {
			p.own = append(p.own, Chunk{Offset: r.varint(), Data: r.bytes()})
		}
		if _, dup := st.Streams[s.Name]; dup {
			return nil, fmt.Errorf("stream %q appears twice", s.Name)
		}
		st.Streams[s.Name] = s
		pend[s.Name] = p
	}
	if r.err != nil {
		return nil, r.err
	}
	// Rebuild each stream's chunks, a fork's after its source's, so that a
	// fork's inherited chunks are its source's (the same bytes in memory).
	done := map[string]bool{}
	var build func(name string, depth int) error
	build = func(name string, depth int) error {
		if done[name] {
			return nil
		}
		if depth > len(st.Streams) {
			return fmt.Errorf("stream %q: forks form a cycle", name)
		}
		s, p := st.Streams[name], pend[name]
		if p.k > 0 {
			src := st.Streams[s.ForkFrom]
			if src == nil {
				return fmt.Errorf("stream %q inherits %d chunks from %q, which is not in the snapshot", name, p.k, s.ForkFrom)
			}
			if err := build(src.Name, depth+1); err != nil {
				return err
			}
			if p.k > len(src.Chunks) || p.lastLen > len(src.Chunks[p.k-1].Data) {
				return fmt.Errorf("stream %q inherits more of %q than it holds", name, s.ForkFrom)
			}
			s.Chunks = make([]Chunk, 0, p.k+len(p.own))
			s.Chunks = append(s.Chunks, src.Chunks[:p.k]...)
			last := &s.Chunks[p.k-1]
			last.Data = last.Data[:p.lastLen:p.lastLen]
		}
		s.Chunks = append(s.Chunks, p.own...)
		done[name] = true
		return nil
	}
	for _, name := range st.names() {
		if err := build(name, 0); err != nil {
			return nil, err
		}
	}
	if _, err := r.r.ReadByte(); err != io.EOF {
		return nil, errors.New("trailing bytes after the last stream")
	}
	return st, nil
}
