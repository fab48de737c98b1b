package service

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ownership-book/ownership/examples/ownership"
)

// CrashPoint names a moment inside a burn, for tests that kill a process
// there. The points are in the order a burn passes them.
type CrashPoint string

// The crash points of one burn-then-publish, in order. A crash after
// PointRenamed and before the reply leaves an epoch on disk that no caller
// has seen; the next life skips it (chapter "The ownership service",
// section "Burn before visible").
const (
	PointBeforeBurn  CrashPoint = "before-burn"  // next state computed, nothing written
	PointTempWritten CrashPoint = "temp-written" // new floor in the temporary file, not yet synced
	PointTempSynced  CrashPoint = "temp-synced"  // temporary file fsynced, not yet renamed
	PointRenamed     CrashPoint = "renamed"      // renamed over the floor, directory not yet fsynced
	PointBurned      CrashPoint = "burned"       // directory fsynced: the burn is durable; state not yet visible
	PointPublished   CrashPoint = "published"    // state visible in memory; the caller not yet answered
)

// CrashPoints lists every CrashPoint in the order a burn passes them.
var CrashPoints = []CrashPoint{PointBeforeBurn, PointTempWritten, PointTempSynced, PointRenamed, PointBurned, PointPublished}

// Hook is called at each CrashPoint of a burn. Production code passes nil;
// the SIGKILL test passes a hook that stops the process at a chosen point.
type Hook func(CrashPoint)

// ErrFloorBackwards is returned by Floor.Burn for an epoch that is not above
// the actor's floor: a floor only rises.
var ErrFloorBackwards = errors.New("epoch floor may only rise")

// ErrCorruptFloor is wrapped by OpenFloor's error for a floor file it cannot
// parse or whose end line does not match its content; the message names the
// file and line.
var ErrCorruptFloor = errors.New("corrupt epoch floor file")

const floorHeader = "ownership epoch floor v2"

// crcTable is CRC-32C (Castagnoli), the checksum of a floor file's end line.
var crcTable = crc32.MakeTable(crc32.Castagnoli)

// ANCHOR: floor

// Floor is a durable, monotone record of the highest epoch ever burned for
// each actor. A registry reads it at start, so an actor it has forgotten
// starts above every epoch it ever issued, and it burns each new epoch here
// (Burn returns only after the file and its directory are fsynced) before
// any state carrying that epoch can be read.
//
// The file is text: a header line, one "actor epoch" line per actor in
// sorted order, and an end line "end <count> crc32c <hex>" that gives the
// number of actor lines and the CRC-32C of every byte before it. It is
// replaced whole on each burn (write a temporary file, fsync it, rename it
// over the old one, fsync the directory), so a crash leaves either the old
// floor or the new one, never a mix; the end line catches a file damaged
// afterwards (cut short, a digit changed), which would otherwise read as a
// lower floor.
//
// A Floor is safe for concurrent use; burns are serialised.
type Floor struct {
	path string
	hook Hook

	mu sync.Mutex
	// durable: on disk, as far as this process knows.
	durable map[ownership.ActorID]ownership.Epoch
	// reserved: burns that failed; maybe on disk, never reused.
	reserved map[ownership.ActorID]ownership.Epoch
}

// ANCHOR_END: floor

// OpenFloor reads the floor at path, or starts an empty one if the file does
// not exist (its directory must). hook may be nil.
//
// Errors: ErrCorruptFloor (wrapped, naming path and line) for a file that is
// not a whole floor; the *os.PathError of a failed read.
func OpenFloor(path string, hook Hook) (*Floor, error) {
	f := &Floor{path: path, hook: hook, durable: map[ownership.ActorID]ownership.Epoch{}, reserved: map[ownership.ActorID]ownership.Epoch{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, err
	}
	bad := func(line int, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s: %w", path, line, fmt.Sprintf(format, args...), ErrCorruptFloor)
	}
	if len(data) == 0 {
		return nil, bad(1, "empty file")
	}
	lines := strings.Split(string(data), "\n")
	last := len(lines) - 1 // the text after the final newline: must be empty
	if lines[last] != "" {
		return nil, bad(last+1, "no newline at the end of the file (cut short?)")
	}
	lines = lines[:last]
	if lines[0] != floorHeader {
		return nil, bad(1, "header is %q, want %q", lines[0], floorHeader)
	}
	n := len(lines)
	end := strings.Fields(lines[n-1])
	if n < 2 || len(end) == 0 || end[0] != "end" {
		return nil, bad(n+1, "no end line \"end <count> crc32c <hex>\" (cut short?)")
	}
	for i, text := range lines[1 : n-1] {
		line := i + 2
		fields := strings.Fields(text)
		if len(fields) != 2 {
			return nil, bad(line, "want \"actor epoch\", got %.80q", text)
		}
		actor := ownership.ActorID(fields[0])
		if checkName(ownership.NodeID(actor)) != nil {
			return nil, bad(line, "actor name %.80q is not valid", fields[0])
		}
		e, err := strconv.ParseUint(fields[1], 10, 64)
		if err != nil {
			return nil, bad(line, "epoch %.80q is not a number", fields[1])
		}
		if _, dup := f.durable[actor]; dup {
			return nil, bad(line, "actor %s appears twice", actor)
		}
		f.durable[actor] = ownership.Epoch(e)
	}
	body := len(data) - len(lines[n-1]) - 1 // the bytes before the end line
	want := fmt.Sprintf("end %d crc32c %08x", n-2, crc32.Checksum(data[:body], crcTable))
	if lines[n-1] != want {
		return nil, bad(n, "end line %.80q does not match the content (want %q)", lines[n-1], want)
	}
	return f, nil
}

// Path returns the floor file's path.
func (f *Floor) Path() string { return f.path }

// Get returns the highest epoch burned for actor, or 0 if none was: an
// epoch at or below it is never handed out as new. It counts a burn that
// failed, since its epoch may have reached the disk.
func (f *Floor) Get(actor ownership.ActorID) ownership.Epoch {
	f.mu.Lock()
	defer f.mu.Unlock()
	return max(f.durable[actor], f.reserved[actor])
}

// Durable returns the highest epoch known to be durable for actor: the
// floor that the file holds since the last Burn that succeeded. A state
// whose epoch is above it may not be made visible before a Burn succeeds.
func (f *Floor) Durable(actor ownership.ActorID) ownership.Epoch {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.durable[actor]
}

// ANCHOR: burn

// Burn raises actor's floor to at least e and returns once the new floor is
// durable. It refuses (ErrFloorBackwards, wrapped with actor and epochs) an
// e that is not above the durable floor, and (ErrMalformed, wrapped) an
// actor name the file could not hold, and changes nothing then. On an
// I/O error the file may or may not hold the new floor, so its epoch counts
// as burnt (Get reports it and this process never hands it out again) but
// not as durable: the caller makes no state visible, and a later Burn of
// the same epoch writes it again.
func (f *Floor) Burn(actor ownership.ActorID, e ownership.Epoch) error {
	if checkName(ownership.NodeID(actor)) != nil {
		return fmt.Errorf("burn epoch %d: actor %q: "+
			"must be 1 to 64 of A-Z a-z 0-9 . _ -: %w", e, string(actor), ErrMalformed)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if old := f.durable[actor]; e <= old {
		return fmt.Errorf("actor %s: burn epoch %d at floor %d: %w",
			actor, e, old, ErrFloorBackwards)
	}
	next := maps.Clone(f.durable)
	for a, r := range f.reserved {
		next[a] = max(next[a], r)
	}
	next[actor] = max(e, next[actor])
	if err := f.write(next); err != nil {
		f.reserved[actor] = next[actor]
		return fmt.Errorf("actor %s: burn epoch %d: %w", actor, e, err)
	}
	f.durable, f.reserved = next, map[ownership.ActorID]ownership.Epoch{}
	return nil
}

func (f *Floor) write(epochs map[ownership.ActorID]ownership.Epoch) error {
	var buf bytes.Buffer
	buf.WriteString(floorHeader + "\n")
	for _, a := range slices.Sorted(maps.Keys(epochs)) {
		fmt.Fprintf(&buf, "%s %d\n", a, epochs[a])
	}
	sum := crc32.Checksum(buf.Bytes(), crcTable)
	fmt.Fprintf(&buf, "end %d crc32c %08x\n", len(epochs), sum)
	tmp := f.path + ".tmp"
	file, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := file.Write(buf.Bytes()); err != nil {
		file.Close()
		return err
	}
	f.at(PointTempWritten)
	if err := file.Sync(); err != nil {
		file.Close()
		return err
	}
	f.at(PointTempSynced)
	if err := file.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, f.path); err != nil {
		return err
	}
	f.at(PointRenamed)
	dir, err := os.Open(filepath.Dir(f.path))
	if err != nil {
		return err
	}
	defer dir.Close()
	return dir.Sync()
}

// ANCHOR_END: burn

func (f *Floor) at(p CrashPoint) {
	if f.hook != nil {
		f.hook(p)
	}
}
