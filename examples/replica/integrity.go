package replica

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// ErrDamaged is wrapped by the error Open (and a checked log store's
// GetLog) returns when a voter's data directory fails an integrity check:
// a log entry whose checksum does not match, a hole in the log, a snapshot
// whose metadata cannot be read or whose state fails its CRC. The error
// names the file. A damaged voter must not take part: Raft's safety
// (§5.4, State Machine Safety) assumes a voter's log holds what it
// acknowledged, and a voter that applied changed bytes would diverge
// silently. The remedy is the operator's: remove the voter's data
// directory and add it back as a new member (it then copies the leader's
// snapshot and log).
var ErrDamaged = errors.New("damaged data")

// Each stored log entry carries a checksum in raft.Log.Extensions, which
// hashicorp/raft leaves to middleware ("opaque ... for middleware", see its
// Log type) and raft-boltdb stores with the entry. The stored form is
// sumMagic, then the CRC-32C (Castagnoli) of the entry's index, term, type,
// the original extensions and data, big-endian, then the original
// extensions. GetLog verifies and strips it, so the rest of Raft (and the
// entries it sends to followers) never sees it; every voter computes its
// own when it stores an entry.
const sumMagic = "sum1"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func entrySum(l *raft.Log, ext []byte) uint32 {
	var h [8 + 8 + 1 + 8]byte
	binary.BigEndian.PutUint64(h[0:], l.Index)
	binary.BigEndian.PutUint64(h[8:], l.Term)
	h[16] = byte(l.Type)
	binary.BigEndian.PutUint64(h[17:], uint64(len(ext)))
	c := crc32.Update(0, castagnoli, h[:])
	c = crc32.Update(c, castagnoli, ext)
	return crc32.Update(c, castagnoli, l.Data)
}

// checkedLog is a raft.LogStore whose entries carry a checksum (see
// sumMagic). file names the store's file in errors.
type checkedLog struct {
	raft.LogStore
	file string
}

func (s *checkedLog) StoreLog(l *raft.Log) error { return s.StoreLogs([]*raft.Log{l}) }

// StoreLogs stores copies of logs with a checksum added; Raft's own
// entries (which it may keep and send on) are left as they are.
func (s *checkedLog) StoreLogs(logs []*raft.Log) error {
	out := make([]*raft.Log, len(logs))
	for i, l := range logs {
		c := *l
		ext := make([]byte, 0, len(sumMagic)+4+len(l.Extensions))
		ext = append(ext, sumMagic...)
		ext = binary.BigEndian.AppendUint32(ext, entrySum(l, l.Extensions))
		c.Extensions = append(ext, l.Extensions...)
		out[i] = &c
	}
	return s.LogStore.StoreLogs(out)
}

// GetLog reads entry index and verifies its checksum. Errors:
// raft.ErrLogNotFound as the store returns it; an error wrapping
// ErrDamaged, naming the file and the index, when the entry's checksum is
// missing or does not match.
func (s *checkedLog) GetLog(index uint64, l *raft.Log) error {
	if err := s.LogStore.GetLog(index, l); err != nil {
		if errors.Is(err, raft.ErrLogNotFound) {
			return err
		}
		return fmt.Errorf("%w: %s: log entry %d: %v", ErrDamaged, s.file, index, err)
	}
	ext := l.Extensions
	if len(ext) < len(sumMagic)+4 || string(ext[:len(sumMagic)]) != sumMagic {
		return fmt.Errorf("%w: %s: log entry %d has no checksum", ErrDamaged, s.file, index)
	}
	want := binary.BigEndian.Uint32(ext[len(sumMagic):])
	l.Extensions = ext[len(sumMagic)+4:]
	if len(l.Extensions) == 0 {
		l.Extensions = nil
	}
	if l.Index != index {
		return fmt.Errorf("%w: %s: log entry %d holds index %d", ErrDamaged, s.file, index, l.Index)
	}
	if got := entrySum(l, l.Extensions); got != want {
		return fmt.Errorf("%w: %s: log entry %d (term %d): checksum %08x, stored %08x",
			ErrDamaged, s.file, index, l.Term, got, want)
	}
	return nil
}

// openChecked opens dir/raft.db (raft-boltdb) and dir/snapshots
// (hashicorp/raft's FileSnapshotStore, keeping 2) and runs checkStores on
// them; the bolt store is appended to closers.
//
// bbolt keeps no checksums on its pages, and it answers some damage (a torn
// freelist, a page of unknown type, a page past the end of a cut file)
// with a panic or a memory fault, and other damage (a branch page whose
// children lead back to it) with a loop that never ends (etcd-io/bbolt
// issues 877 and 1257; its own Tx.Check loops too). So the opening and the
// check run on their own goroutine: a panic or fault there becomes an
// error wrapping ErrDamaged naming raft.db, and so does a check that has
// not finished after checkBound(size of raft.db) — at least 10 s, plus a
// second per 10 MiB; reading a healthy log's tail takes milliseconds. A
// slow disk can make a healthy voter refuse to start: that errs on the
// safe side. After a panic or a timeout the bolt store is left open (the
// goroutine may still hold bbolt's locks, and Close would wait for them);
// the caller is expected to exit, which releases the file.
func openChecked(dir string, logger hclog.Logger, closers *[]io.Closer) (raft.LogStore, raft.StableStore, raft.SnapshotStore, error) {
	file := filepath.Join(dir, "raft.db")
	type opened struct {
		bolt  diskStore
		snaps raft.SnapshotStore
		err   error
	}
	done := make(chan opened, 1)
	go func() {
		var o opened
		debug.SetPanicOnFault(true)
		defer func() {
			if p := recover(); p != nil {
				o = opened{err: fmt.Errorf("%w: %s: %v", ErrDamaged, file, p)}
			}
			done <- o
		}()
		o.bolt, o.err = openDiskStore(file)
		if o.err != nil {
			o.err = fmt.Errorf("open %s: %w", file, o.err)
			return
		}
		o.snaps, o.err = raft.NewFileSnapshotStoreWithLogger(dir, 2, logger)
		if o.err == nil {
			o.err = checkStores(dir, &checkedLog{LogStore: o.bolt, file: file}, o.snaps)
		}
	}()
	var size int64
	if fi, err := os.Stat(file); err == nil {
		size = fi.Size()
	}
	bound := checkBound(size)
	select {
	case o := <-done:
		if o.bolt != nil {
			*closers = append(*closers, o.bolt)
		}
		if o.err != nil {
			return nil, nil, nil, o.err
		}
		return &checkedLog{LogStore: o.bolt, file: file}, o.bolt, o.snaps, nil
	case <-time.After(bound):
		return nil, nil, nil, fmt.Errorf("%w: %s: reading the log back did not finish in %v (bbolt loops on some damaged page trees)",
			ErrDamaged, file, bound)
	}
}

// checkBound is how long openChecked waits for the check of a raft.db of
// size bytes: 10 s, plus one second per 10 MiB.
func checkBound(size int64) time.Duration {
	return 10*time.Second + time.Duration(size/(10<<20))*time.Second
}

// checkStores is run by Open before Raft starts on a data directory dir:
// every snapshot directory under dir/snapshots must be listed by snaps (a
// snapshot whose meta.json cannot be read is skipped by hashicorp/raft's
// FileSnapshotStore, which then silently starts from an older one) and
// must pass the store's CRC-64 check of state.bin on Open; and every log
// entry from the first index to the last must be present and pass its
// checksum, with no gap between the newest snapshot and the log. Reading
// everything once costs one pass over the snapshots and the log's
// untruncated tail (bounded by the snapshot threshold plus TrailingLogs).
func checkStores(dir string, logs raft.LogStore, snaps raft.SnapshotStore) error {
	metas, err := snaps.List()
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrDamaged, filepath.Join(dir, "snapshots"), err)
	}
	listed := map[string]bool{}
	for _, m := range metas {
		listed[m.ID] = true
	}
	ents, err := os.ReadDir(filepath.Join(dir, "snapshots"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for _, e := range ents {
		if e.IsDir() && !strings.HasSuffix(e.Name(), ".tmp") && !listed[e.Name()] {
			return fmt.Errorf("%w: %s: snapshot metadata unreadable", ErrDamaged,
				filepath.Join(dir, "snapshots", e.Name(), "meta.json"))
		}
	}
	var snapIndex uint64
	for i, m := range metas {
		state := filepath.Join(dir, "snapshots", m.ID, "state.bin")
		_, rc, err := snaps.Open(m.ID)
		if err == nil {
			_, err = io.Copy(io.Discard, rc)
			rc.Close()
		}
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrDamaged, state, err)
		}
		if i == 0 {
			snapIndex = m.Index
		}
	}
	first, err := logs.FirstIndex()
	if err != nil {
		return err
	}
	last, err := logs.LastIndex()
	if err != nil {
		return err
	}
	file := filepath.Join(dir, "raft.db")
	if last > snapIndex && first > snapIndex+1 {
		return fmt.Errorf("%w: %s: log starts at %d, after the newest snapshot's index %d",
			ErrDamaged, file, first, snapIndex)
	}
	if last == 0 {
		return nil
	}
	var l raft.Log
	for i := first; i <= last; i++ {
		if err := logs.GetLog(i, &l); err != nil {
			if errors.Is(err, raft.ErrLogNotFound) {
				return fmt.Errorf("%w: %s: log entry %d missing (log %d..%d)", ErrDamaged, file, i, first, last)
			}
			return err
		}
	}
	return nil
}
