package chubby

import (
	"errors"
	"fmt"
	"time"
)

// Sentinel errors, for errors.Is. Each typed error below matches one of them.
var (
	// ErrSessionExpired: the session's lease ran out (or it never existed).
	ErrSessionExpired = errors.New("session expired")
	// ErrLockHeld: the lock is held in a conflicting mode by another session.
	ErrLockHeld = errors.New("lock held")
	// ErrLockDelay: the lock is free but inside its lock-delay.
	ErrLockDelay = errors.New("lock-delay in force")
	// ErrNotHeld: the session does not hold the lock it names.
	ErrNotHeld = errors.New("lock not held by this session")
	// ErrStaleSequencer: a sequencer that no longer describes the lock.
	ErrStaleSequencer = errors.New("stale sequencer")
	// ErrTimeWentBack: a call gave an earlier time than a previous call.
	ErrTimeWentBack = errors.New("time went backwards")
	// ErrBadArgument: an argument is out of range (a lock-delay above the
	// bound, an empty name, an unknown mode).
	ErrBadArgument = errors.New("bad argument")
	// ErrRefused: a resource server refused a write.
	ErrRefused = errors.New("write refused")
)

// SessionError reports a call on a session that is not live at At.
type SessionError struct {
	Session SessionID
	At      time.Duration
}

func (e *SessionError) Error() string {
	return fmt.Sprintf("session %d: expired or unknown at %v", e.Session, e.At)
}

// Is makes errors.Is(err, ErrSessionExpired) true.
func (e *SessionError) Is(target error) bool { return target == ErrSessionExpired }

// LockHeldError reports an Acquire refused because another session holds
// the lock in a conflicting mode.
type LockHeldError struct {
	Lock       string
	Mode       Mode // the mode the lock is held in
	Generation uint64
}

func (e *LockHeldError) Error() string {
	return fmt.Sprintf("acquire %s: held in %s mode at generation %d", e.Lock, e.Mode, e.Generation)
}

// Is makes errors.Is(err, ErrLockHeld) true.
func (e *LockHeldError) Is(target error) bool { return target == ErrLockHeld }

// LockDelayError reports an Acquire refused because the lock's previous
// holder's session expired and its lock-delay runs until Until.
type LockDelayError struct {
	Lock  string
	Until time.Duration
}

func (e *LockDelayError) Error() string {
	return fmt.Sprintf("acquire %s: lock-delay until %v", e.Lock, e.Until)
}

// Is makes errors.Is(err, ErrLockDelay) true.
func (e *LockDelayError) Is(target error) bool { return target == ErrLockDelay }

// NotHeldError reports a Release or GetSequencer by a session that does not
// hold the lock.
type NotHeldError struct {
	Session SessionID
	Lock    string
}

func (e *NotHeldError) Error() string {
	return fmt.Sprintf("session %d does not hold %s", e.Session, e.Lock)
}

// Is makes errors.Is(err, ErrNotHeld) true.
func (e *NotHeldError) Is(target error) bool { return target == ErrNotHeld }

// StaleSequencerError reports a sequencer that CheckSequencer rejects:
// Current is the lock's generation now and Held whether anyone holds it.
type StaleSequencerError struct {
	Sequencer Sequencer
	Current   uint64
	Held      bool
	HeldMode  Mode
}

func (e *StaleSequencerError) Error() string {
	switch {
	case !e.Held:
		return fmt.Sprintf("sequencer %v: lock is free (generation %d)", e.Sequencer, e.Current)
	case e.Current != e.Sequencer.Generation:
		return fmt.Sprintf("sequencer %v: lock is at generation %d", e.Sequencer, e.Current)
	default:
		return fmt.Sprintf("sequencer %v: lock is held in %s mode", e.Sequencer, e.HeldMode)
	}
}

// Is makes errors.Is(err, ErrStaleSequencer) true.
func (e *StaleSequencerError) Is(target error) bool { return target == ErrStaleSequencer }

// TimeError reports a call whose time Now is earlier than the Last time the
// Cell was given.
type TimeError struct{ Now, Last time.Duration }

func (e *TimeError) Error() string {
	return fmt.Sprintf("time %v is before %v, the time of an earlier call", e.Now, e.Last)
}

// Is makes errors.Is(err, ErrTimeWentBack) true.
func (e *TimeError) Is(target error) bool { return target == ErrTimeWentBack }

// ArgumentError reports an argument out of range.
type ArgumentError struct{ Msg string }

func (e *ArgumentError) Error() string { return e.Msg }

// Is makes errors.Is(err, ErrBadArgument) true.
func (e *ArgumentError) Is(target error) bool { return target == ErrBadArgument }

// RefusedError reports a write a Server refused: the write, the server's
// mode and why.
type RefusedError struct {
	Write  Write
	Mode   ServerMode
	Reason string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s refused write %q from %s (generation %d): %s", e.Mode, e.Write.Data, e.Write.From, e.Write.Seq.Generation, e.Reason)
}

// Is makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }
