package node

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/ownership-book/ownership/examples/stream"
)

// dirTag starts a log entry or a snapshot that carries the directory: the
// voters' HTTP base URLs. A stream command is JSON and starts with '{', so
// the two never mix.
const dirTag = 0x01

// dirEntry is one directory command: voter ID's HTTP base URL ("" removes
// the voter's entry).
type dirEntry struct {
	ID  string `json:"id"`
	URL string `json:"url"`
}

// machine is the replicated state of one voter: the stream machine and the
// directory of voters' HTTP URLs, both applied from the same Raft log so that
// every voter maps a leader's ID to the same URL. A leader records its own
// URL in the log (see Node.announce) before a follower forwards to it; a
// voter's Raft address is in Raft's configuration, its HTTP address only
// here.
type machine struct {
	*stream.Machine
	mu   sync.RWMutex
	urls map[string]string
}

func newMachine() *machine { return &machine{Machine: stream.NewMachine(), urls: map[string]string{}} }

func encodeDir(e dirEntry) []byte {
	b, _ := json.Marshal(e) // two strings always encode
	return append([]byte{dirTag}, b...)
}

// Apply applies a directory entry or a stream command.
func (m *machine) Apply(cmd []byte) []byte {
	if len(cmd) == 0 || cmd[0] != dirTag {
		return m.Machine.Apply(cmd)
	}
	var e dirEntry
	if err := json.Unmarshal(cmd[1:], &e); err != nil {
		return []byte("malformed directory entry")
	}
	m.mu.Lock()
	if e.URL == "" {
		delete(m.urls, e.ID)
	} else {
		m.urls[e.ID] = e.URL
	}
	m.mu.Unlock()
	return nil
}

// URL returns voter id's HTTP base URL as the log recorded it.
func (m *machine) URL(id string) (string, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	u, ok := m.urls[id]
	return u, ok
}

// URLs returns a copy of the directory.
func (m *machine) URLs() map[string]string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make(map[string]string, len(m.urls))
	for k, v := range m.urls {
		out[k] = v
	}
	return out
}

// Snapshot is dirTag, the directory's JSON length (uvarint), the directory
// (JSON, keys sorted), then the stream machine's snapshot.
func (m *machine) Snapshot() ([]byte, error) {
	m.mu.RLock()
	dir, err := json.Marshal(m.urls)
	m.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	st, err := m.Machine.Snapshot()
	if err != nil {
		return nil, err
	}
	out := binary.AppendUvarint([]byte{dirTag}, uint64(len(dir)))
	out = append(out, dir...)
	return append(out, st...), nil
}

// CaptureSnapshot is Snapshot's streamed form (replica.StreamSnapshotter):
// the same header and directory, then the stream machine's streamed
// snapshot, in which forks share their sources' bytes.
func (m *machine) CaptureSnapshot() func(w io.Writer) error {
	m.mu.RLock()
	dir, err := json.Marshal(m.urls)
	m.mu.RUnlock()
	write := m.Machine.CaptureSnapshot()
	return func(w io.Writer) error {
		if err != nil {
			return err
		}
		head := binary.AppendUvarint([]byte{dirTag}, uint64(len(dir)))
		if _, err := w.Write(append(head, dir...)); err != nil {
			return err
		}
		return write(w)
	}
}

// ReadSnapshot restores what CaptureSnapshot or Snapshot wrote, or a
// snapshot without the directory header (the stream machine's alone).
func (m *machine) ReadSnapshot(r io.Reader) error {
	br := bufio.NewReader(r)
	urls := map[string]string{}
	if b, err := br.Peek(1); err == nil && b[0] == dirTag {
		br.Discard(1)
		n, err := binary.ReadUvarint(br)
		if err != nil || n > 1<<20 {
			return fmt.Errorf("node: restore: malformed directory header")
		}
		dir := make([]byte, n)
		if _, err := io.ReadFull(br, dir); err != nil {
			return fmt.Errorf("node: restore: directory: %v", err)
		}
		if err := json.Unmarshal(dir, &urls); err != nil {
			return fmt.Errorf("node: restore: malformed directory: %v", err)
		}
	}
	if err := m.Machine.ReadSnapshot(br); err != nil {
		return err
	}
	m.mu.Lock()
	m.urls = urls
	m.mu.Unlock()
	return nil
}

// Restore restores a Snapshot; a snapshot without the tag (written before
// the directory existed) is the stream machine's alone.
func (m *machine) Restore(b []byte) error {
	urls := map[string]string{}
	if len(b) > 0 && b[0] == dirTag {
		n, k := binary.Uvarint(b[1:])
		if k <= 0 || uint64(len(b)-1-k) < n {
			return fmt.Errorf("node: restore: malformed directory header")
		}
		if err := json.Unmarshal(b[1+k:1+k+int(n)], &urls); err != nil {
			return fmt.Errorf("node: restore: malformed directory: %v", err)
		}
		b = b[1+k+int(n):]
	}
	if err := m.Machine.Restore(b); err != nil {
		return err
	}
	m.mu.Lock()
	m.urls = urls
	m.mu.Unlock()
	return nil
}
