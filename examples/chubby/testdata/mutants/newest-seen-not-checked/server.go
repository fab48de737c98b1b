package chubby

import (
	"fmt"
	"time"
)

// ServerMode is how a resource server treats the sequencer on a write.
type ServerMode int

const (
	// Unchecked applies every write: the server knows nothing of locks.
	// Only lock-delay at the lock service protects it.
	Unchecked ServerMode = iota + 1
	// CheckAtCell asks the lock service, at arrival, whether the write's
	// sequencer is still valid (CheckSequencer) and refuses it if not.
	CheckAtCell
	// NewestSeen keeps the highest generation it has seen, in writes or in
	// fence notices (RaiseFence), and refuses any lower one: the check a
	// server makes "if the server does not wish to maintain a session with
	// Chubby" (Burrows 2006, section 2.4), and ValidFence over the newest
	// epoch seen in the ownership model.
	NewestSeen
	// CheckAtRecord asks the ownership record, at arrival, for its current
	// epoch and refuses a write below it (ownership.ValidFence against the
	// record): the ownership model's record-checking server. Made by
	// NewRecordServer.
	CheckAtRecord
)

func (m ServerMode) String() string {
	switch m {
	case Unchecked:
		return "unchecked server"
	case CheckAtCell:
		return "server checking at the cell"
	case NewestSeen:
		return "server keeping the newest sequencer"
	case CheckAtRecord:
		return "server checking at the record"
	}
	return fmt.Sprintf("ServerMode(%d)", int(m))
}

// Write is one request to the resource server: who sent it, the data (each
// write replaces the whole value, as Chubby's SetContents does), the
// sequencer it carries, and when it was sent and arrived.
type Write struct {
	From    string
	Data    string
	Seq     Sequencer
	Sent    time.Duration
	Arrived time.Duration
}

// Server is a resource server protected by one lock: it holds a single
// value and applies or refuses each write as its mode says. It is pure: the
// caller delivers writes in arrival order with Receive.
type Server struct {
	mode    ServerMode
	cell    *Cell
	current func() uint64 // CheckAtRecord: the record's current epoch
	newest  uint64
	applied []Write
	refused []Write
}

// NewServer returns a Server in mode m. CheckAtCell needs the Cell it asks;
// the other modes ignore cell. It fails with an *ArgumentError on an unknown
// mode or a CheckAtCell server without a Cell.
func NewServer(m ServerMode, cell *Cell) (*Server, error) {
	switch m {
	case Unchecked, NewestSeen:
	case CheckAtCell:
		if cell == nil {
			return nil, &ArgumentError{Msg: "NewServer: CheckAtCell needs a Cell"}
		}
	default:
		return nil, &ArgumentError{Msg: fmt.Sprintf("NewServer: unknown mode %v", m)}
	}
	return &Server{mode: m, cell: cell}, nil
}

// NewRecordServer returns a CheckAtRecord server that asks current for the
// ownership record's current epoch at each write's arrival.
func NewRecordServer(current func() uint64) *Server {
	return &Server{mode: CheckAtRecord, current: current}
}

// Mode returns the server's mode.
func (s *Server) Mode() ServerMode { return s.mode }

// ANCHOR: receive

// Receive applies w at time now (its arrival), or refuses it and returns a
// *RefusedError. A refused write changes nothing.
func (s *Server) Receive(w Write, now time.Duration) error {
	switch s.mode {
	case CheckAtCell:
		if err := s.cell.CheckSequencer(w.Seq, now); err != nil {
			s.refused = append(s.refused, w)
			return &RefusedError{Write: w, Mode: s.mode, Reason: err.Error()}
		}
	case CheckAtRecord:
		if cur := s.current(); w.Seq.Generation < cur {
			s.refused = append(s.refused, w)
			return &RefusedError{Write: w, Mode: s.mode, Reason: fmt.Sprintf("epoch %d is older than the record's %d", w.Seq.Generation, cur)}
		}
	case NewestSeen:
		s.newest = w.Seq.Generation
	}
	s.applied = append(s.applied, w)
	return nil
}

// ANCHOR_END: receive

// RaiseFence tells a NewestSeen server that generation g exists, so that it
// refuses anything older from now on; it never lowers the fence. The
// ownership model sends this notice when the epoch moves, before any new
// holder writes. Other modes ignore it.
func (s *Server) RaiseFence(g uint64) {
	if s.mode == NewestSeen {
		s.newest = max(s.newest, g)
	}
}

// Newest returns the highest generation a NewestSeen server has seen.
func (s *Server) Newest() uint64 { return s.newest }

// Applied returns the writes applied, in order.
func (s *Server) Applied() []Write { return append([]Write(nil), s.applied...) }

// Refused returns the writes refused, in order.
func (s *Server) Refused() []Write { return append([]Write(nil), s.refused...) }

// Value returns the last write applied, the server's current value.
func (s *Server) Value() (Write, bool) {
	if len(s.applied) == 0 {
		return Write{}, false
	}
	return s.applied[len(s.applied)-1], true
}

// Regression returns the first applied write whose generation is lower
// than that of a write applied before it, and that earlier write: the
// zombie writer's damage. ok is false when generations never went down.
func Regression(applied []Write) (stale, newer Write, ok bool) {
	var best Write
	for i, w := range applied {
		if i > 0 && w.Seq.Generation < best.Seq.Generation {
			return w, best, true
		}
		if i == 0 || w.Seq.Generation > best.Seq.Generation {
			best = w
		}
	}
	return Write{}, Write{}, false
}
