package owner

import (
	"errors"
	"fmt"
)

// MaxClaimRounds is how many claims one Open makes before it gives up with
// ErrClaimRaces. Reference: chapter "Owning a database through its stream", section "The
// claim".
const MaxClaimRounds = 16

// ErrReset is matched (errors.Is) by every error of a database that has
// reset: after it was fenced, or after it lost its history. Every operation
// of a reset DB, reads included, fails with it; a Snapshot taken before the
// reset keeps working. Reference: chapter "Owning a database through its stream", section
// "How a replaced owner learns of it".
var ErrReset = errors.New("database reset")

// ErrFenced is matched, besides ErrReset, by the reset of a database whose
// append or Synced round trip was refused with 403 epoch-closed, or whose
// claim lost to a newer owner.
var ErrFenced = errors.New("fenced by a newer owner")

// ErrClaimRaces is matched by the error of an Open that lost MaxClaimRounds
// claim races in a row.
var ErrClaimRaces = errors.New("claim races")

// ErrDiscarded is returned by a Synced during which a recovery found that
// another owner had written, so that commits made before the call were
// discarded. Reference: chapter "Owning a database through its stream", section "Recovery
// after the claim".
var ErrDiscarded = errors.New("pending commits discarded: another owner wrote first")

// ErrInUse is matched by the error of an Open whose directory another open
// DB holds, in this process or another (an advisory flock on dir/lock, on
// Unix systems). Two DBs on one directory would append two histories to one
// local log.
var ErrInUse = errors.New("database directory in use by another open")

// ErrClosed is returned by operations of a DB after Close.
var ErrClosed = errors.New("database closed")

// Reset kinds.
const (
	// ResetFenced: a 403 epoch-closed, or a claim nobody asked for lost to a
	// newer owner, or an offline open found another writer when going live.
	ResetFenced = "fenced"
	// ResetNewHistory: after a 412, the stream's new history lacks a commit
	// acknowledged to this copy; the copy moved to Salvage.
	ResetNewHistory = "new-history"
)

// ResetError is the error of a reset database. It matches ErrReset, and
// ErrFenced when Kind is ResetFenced.
type ResetError struct {
	Stream string // the database's stream name
	Dir    string // the database's directory
	Kind   string // ResetFenced or ResetNewHistory
	// Epoch is the process's own epoch when it reset; Current the epoch that
	// fenced it, as the stream named it (0 if unknown).
	Epoch, Current uint64
	// Salvage is the folder the copy was moved to (ResetNewHistory only).
	Salvage string
	Detail  string
}

func (e *ResetError) Error() string {
	s := fmt.Sprintf("%s: %v (%s): own epoch %d", e.Stream, ErrReset, e.Kind, e.Epoch)
	if e.Current != 0 {
		s += fmt.Sprintf(", current epoch %d", e.Current)
	}
	if e.Salvage != "" {
		s += ", copy moved to " + e.Salvage
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Is reports whether target is ErrReset, or ErrFenced for a fenced reset.
func (e *ResetError) Is(target error) bool {
	return target == ErrReset || (target == ErrFenced && e.Kind == ResetFenced)
}

// ClaimRacesError is the error of an Open that lost MaxClaimRounds claims.
type ClaimRacesError struct {
	Stream    string
	Rounds    int
	LastEpoch uint64 // the epoch of the last claim it sent
}

func (e *ClaimRacesError) Error() string {
	return fmt.Sprintf("open %q: %v: lost %d claims, the last at epoch %d", e.Stream, ErrClaimRaces, e.Rounds, e.LastEpoch)
}

// Is reports whether target is ErrClaimRaces.
func (e *ClaimRacesError) Is(target error) bool { return target == ErrClaimRaces }
