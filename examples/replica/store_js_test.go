//go:build js

package replica

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/raft"
)

// TestPageStore checks the page's stand-in for raft.db: a second open of
// the same path finds the log the first left, and once the file is
// removed (a data directory lost) the next open starts empty. Run in Node
// by tests/TestPageStoreInNode.
func TestPageStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "raft.db")
	s, err := openDiskStore(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.StoreLog(&raft.Log{Index: 1, Term: 2, Data: []byte("epoch 7")}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetUint64([]byte("CurrentTerm"), 2); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := openDiskStore(path)
	if err != nil {
		t.Fatal(err)
	}
	var l raft.Log
	if err := again.GetLog(1, &l); err != nil || string(l.Data) != "epoch 7" || l.Term != 2 {
		t.Errorf("reopened store: log 1 = %+v, %v; want term 2, epoch 7", l, err)
	}
	if term, err := again.GetUint64([]byte("CurrentTerm")); err != nil || term != 2 {
		t.Errorf("reopened store: CurrentTerm %d, %v; want 2", term, err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	fresh, err := openDiskStore(path)
	if err != nil {
		t.Fatal(err)
	}
	if last, err := fresh.LastIndex(); err != nil || last != 0 {
		t.Errorf("store opened after its file was removed: last index %d, %v; want an empty log", last, err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the open did not make %s: %v", path, err)
	}
}
