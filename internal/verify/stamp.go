package verify

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ownership-book/ownership/internal/filestamp"
)

// The stamp memos. Validating a cached check re-hashes every file and
// directory its manifest names, and reads and decodes the check's entry;
// a book's checks name the same example files again and again, and
// bookgen serve validates them all after every save. A memo remembers
// what was computed from a path under the stamp the path had when it was
// read (package filestamp), and hands it out again while the stamp is the
// same, so that a rebuild reads only what changed. A value is remembered
// only once the path's stamp is settled (filestamp.Stamp.Settled). The
// memos live as long as the process.

// stampMemo remembers one value per absolute path.
type stampMemo[V any] struct {
	window time.Duration // filestamp.RacyWindow; tests shorten it
	mu     sync.Mutex
	m      map[string]stamped[V]
}

type stamped[V any] struct {
	st filestamp.Stamp
	v  V
}

func newStampMemo[V any]() *stampMemo[V] {
	return &stampMemo[V]{window: filestamp.RacyWindow, m: map[string]stamped[V]{}}
}

// get returns the value remembered for path p, or computes it with read.
// A value read reports as not ok (the path does not exist or cannot be
// read) is never remembered.
func (h *stampMemo[V]) get(p string, read func(string) (V, bool)) V {
	fi, err := os.Stat(p)
	if err != nil {
		v, _ := read(p)
		return v
	}
	st := filestamp.Of(fi)
	h.mu.Lock()
	e, ok := h.m[p]
	h.mu.Unlock()
	if ok && e.st == st {
		return e.v
	}
	now := time.Now()
	v, ok := read(p)
	if !ok || !st.Settled(now, h.window) {
		return v
	}
	// Remember only if the path did not change while it was read.
	if fi2, err := os.Stat(p); err == nil && filestamp.Of(fi2) == st {
		h.mu.Lock()
		h.m[p] = stamped[V]{st: st, v: v}
		h.mu.Unlock()
	}
	return v
}

var (
	fileHashes = newStampMemo[string]()
	dirHashes  = newStampMemo[string]()
	entries    = newStampMemo[*entry]()
)

func readFileHash(p string) (string, bool) {
	data, err := os.ReadFile(p)
	if err != nil {
		return "-", false
	}
	return sum(data), true
}

func readDirHash(p string) (string, bool) {
	ents, err := os.ReadDir(p)
	if err != nil {
		return "-", false
	}
	var b []byte
	for _, e := range ents {
		b = append(b, e.Name()...)
		if e.IsDir() {
			b = append(b, '/')
		}
		b = append(b, '\n')
	}
	return sum(b), true
}

// readEntry decodes a cache entry file. The entry it returns is shared by
// every lookup until the file changes: it is not to be modified.
func readEntry(p string) (*entry, bool) {
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, false
	}
	var e entry
	if json.Unmarshal(data, &e) != nil {
		return nil, false
	}
	return &e, true
}

// hashes is one verification's view of the tree: each path is hashed (or
// its stamp checked) once per verification however many checks name it.
// The tree is taken to hold still while one verification runs; a change
// during it is seen by the next one (bookgen serve starts it).
type hashes struct {
	root  string
	mu    sync.Mutex
	files map[string]string
	dirs  map[string]string
}

func newHashes(root string) *hashes {
	return &hashes{root: root, files: map[string]string{}, dirs: map[string]string{}}
}

func (h *hashes) once(m map[string]string, rel string, memo *stampMemo[string], read func(string) (string, bool)) string {
	h.mu.Lock()
	v, ok := m[rel]
	h.mu.Unlock()
	if ok {
		return v
	}
	v = memo.get(filepath.Join(h.root, filepath.FromSlash(rel)), read)
	h.mu.Lock()
	m[rel] = v
	h.mu.Unlock()
	return v
}

// file is the hex sha256 of the repository file rel, "-" if it cannot be
// read.
func (h *hashes) file(rel string) string { return h.once(h.files, rel, fileHashes, readFileHash) }

// dir is the hex sha256 of the sorted entry names of the repository
// directory rel ("/" after a directory's), "-" if it cannot be read.
func (h *hashes) dir(rel string) string { return h.once(h.dirs, rel, dirHashes, readDirHash) }
