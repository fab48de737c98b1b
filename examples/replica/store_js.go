//go:build js

package replica

import (
	"errors"
	"io/fs"
	"os"
	"sync"

	"github.com/hashicorp/raft"
)

// pageStores holds, for the length of a run in a browser page (GOOS=js),
// the log and stable store of every raft.db path a voter has opened.
var pageStores = struct {
	sync.Mutex
	byPath map[string]*pageStore
}{byPath: map[string]*pageStore{}}

// pageStore is a voter's raft.db in a page: hashicorp/raft's in-memory
// store, kept under its path so that a voter that stops and opens the
// same data directory again finds its log, as it would on a disk.
type pageStore struct {
	*raft.InmemStore
}

// Close keeps the store for the next open of the same path.
func (pageStore) Close() error { return nil }

// openDiskStore gives a voter with a data directory, in a browser page,
// a log and stable store kept in memory in place of bolt's raft.db (bolt
// needs mmap and file locks, which the page does not have). The file at
// path is still made (the page's in-memory file system keeps it), and it
// stands for the store: while it exists, an open of the same path finds
// the log left by the last one; once it has been removed (a data
// directory deleted, a disk lost) the next open starts empty, as bolt
// would. Snapshots go to the data directory's files as on a host.
func openDiskStore(path string) (diskStore, error) {
	pageStores.Lock()
	defer pageStores.Unlock()
	_, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			return nil, err
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
		s := &pageStore{raft.NewInmemStore()}
		pageStores.byPath[path] = s
		return s, nil
	case err != nil:
		return nil, err
	}
	s, ok := pageStores.byPath[path]
	if !ok {
		return nil, errors.New(path + " was not written in this page: its log cannot be read here")
	}
	return s, nil
}
