package service

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

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
// parse; the message names the file and line.
var ErrCorruptFloor = errors.New("corrupt epoch floor file")

const floorHeader = "ownership epoch floor v1"

// ANCHOR: floor

// Floor is a durable, monotone record of the highest epoch ever burned for
// each actor. A registry reads it at start, so an actor it has forgotten
// starts above every epoch it ever issued, and it burns each new epoch here
// (Burn returns only after the file and its directory are fsynced) before
// any state carrying that epoch can be read.
//
// The file is text: a header line, then one "actor epoch" line per actor in
// sorted order. It is replaced whole on each burn (write a temporary file,
// fsync it, rename it over the old one, fsync the directory), so a crash
// leaves either the old floor or the new one, never a mix.
//
// A Floor is not safe for concurrent use; its registry serialises burns.
type Floor struct {
	path   string
	epochs map[ownership.ActorID]ownership.Epoch
	hook   Hook
}

// ANCHOR_END: floor

// OpenFloor reads the floor at path, or starts an empty one if the file does
// not exist (its directory must). hook may be nil.
//
// Errors: ErrCorruptFloor (wrapped, naming path and line) for a file that is
// not a floor; the *os.PathError of a failed read.
func OpenFloor(path string, hook Hook) (*Floor, error) {
	f := &Floor{path: path, epochs: map[ownership.ActorID]ownership.Epoch{}, hook: hook}
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
	sc := bufio.NewScanner(bytes.NewReader(data))
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if line == 1 {
			if text != floorHeader {
				return nil, bad(line, "header is %q, want %q", text, floorHeader)
			}
			continue
		}
		fields := strings.Fields(text)
		if len(fields) != 2 {
			return nil, bad(line, "want \"actor epoch\", got %q", text)
		}
		actor := ownership.ActorID(fields[0])
		if checkName(ownership.NodeID(actor)) != nil {
			return nil, bad(line, "actor name %q is not valid", fields[0])
		}
		e, err := strconv.ParseUint(fields[1], 10, 64)
		if err != nil {
			return nil, bad(line, "epoch %q is not a number", fields[1])
		}
		if _, dup := f.epochs[actor]; dup {
			return nil, bad(line, "actor %s appears twice", actor)
		}
		f.epochs[actor] = ownership.Epoch(e)
	}
	if line == 0 {
		return nil, bad(1, "empty file")
	}
	return f, nil
}

// Path returns the floor file's path.
func (f *Floor) Path() string { return f.path }

// Get returns the highest epoch burned for actor, or 0 if none was.
func (f *Floor) Get(actor ownership.ActorID) ownership.Epoch { return f.epochs[actor] }

// ANCHOR: burn

// Burn raises actor's floor to e and returns once the new floor is durable.
// It refuses (ErrFloorBackwards, wrapped with actor and epochs) an e that is
// not above the current floor, and changes nothing then. On an I/O error the
// file may or may not hold e, so e counts as burnt anyway: the floor in
// memory rises to e (it is never handed out by this process), and the
// caller reports the error without making any state visible.
func (f *Floor) Burn(actor ownership.ActorID, e ownership.Epoch) error {
	if old := f.epochs[actor]; e <= old {
		return fmt.Errorf("actor %s: burn epoch %d at floor %d: %w", actor, e, old, ErrFloorBackwards)
	}
	next := maps.Clone(f.epochs)
	next[actor] = e
	err := f.write(next)
	f.epochs = next
	if err != nil {
		return fmt.Errorf("actor %s: burn epoch %d: %w", actor, e, err)
	}
	return nil
}

func (f *Floor) write(epochs map[ownership.ActorID]ownership.Epoch) error {
	var buf bytes.Buffer
	buf.WriteString(floorHeader + "\n")
	for _, a := range slices.Sorted(maps.Keys(epochs)) {
		fmt.Fprintf(&buf, "%s %d\n", a, epochs[a])
	}
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
