package chubby

import (
	"fmt"
	"strconv"
	"strings"
)

// Mode is the mode a lock is held in: one session in Exclusive (writer)
// mode, or any number in Shared (reader) mode (Burrows 2006, section 2.4).
type Mode int

const (
	Exclusive Mode = iota + 1
	Shared
)

func (m Mode) String() string {
	switch m {
	case Exclusive:
		return "exclusive"
	case Shared:
		return "shared"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ANCHOR: sequencer

// Sequencer describes a lock as it was just after one acquisition: the
// lock's name, the mode it was acquired in and its generation number, which
// grows each time the lock goes from free to held. A holder attaches it to
// the requests the lock protects; a resource server checks it (Burrows 2006,
// section 2.4, "Locks and sequencers").
type Sequencer struct {
	Lock       string
	Mode       Mode
	Generation uint64
}

// ANCHOR_END: sequencer

// String encodes s as "lock:mode:generation", e.g.
// "/ls/cell/doc:exclusive:33". Chubby's sequencer is an opaque byte string;
// this is the model's encoding, and ParseSequencer reads it back.
func (s Sequencer) String() string {
	return fmt.Sprintf("%s:%s:%d", s.Lock, s.Mode, s.Generation)
}

// ParseSequencer decodes the String form. It returns an *ArgumentError
// (matching ErrBadArgument) naming the input when the text has no lock name,
// an unknown mode or a generation that is not a decimal uint64. The lock name
// may itself contain colons: the mode and generation are the last two fields.
func ParseSequencer(text string) (Sequencer, error) {
	gi := strings.LastIndexByte(text, ':')
	if gi < 0 {
		return Sequencer{}, &ArgumentError{Msg: fmt.Sprintf("sequencer %q: want lock:mode:generation", text)}
	}
	mi := strings.LastIndexByte(text[:gi], ':')
	if mi <= 0 {
		return Sequencer{}, &ArgumentError{Msg: fmt.Sprintf("sequencer %q: want lock:mode:generation", text)}
	}
	var m Mode
	switch text[mi+1 : gi] {
	case "exclusive":
		m = Exclusive
	case "shared":
		m = Shared
	default:
		return Sequencer{}, &ArgumentError{Msg: fmt.Sprintf("sequencer %q: unknown mode %q", text, text[mi+1:gi])}
	}
	g, err := strconv.ParseUint(text[gi+1:], 10, 64)
	if err != nil {
		return Sequencer{}, &ArgumentError{Msg: fmt.Sprintf("sequencer %q: generation %q is not a number", text, text[gi+1:])}
	}
	return Sequencer{Lock: text[:mi], Mode: m, Generation: g}, nil
}
