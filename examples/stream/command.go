package stream

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
)

// Op names what a Command does.
type Op string

// The operations of the stream state machine. Each one is a single log entry:
// its checks and its effects happen together when the entry is applied.
const (
	// OpCreate creates a stream (PROTOCOL.md 5.1, PUT), possibly as a fork of
	// another stream (4.2), possibly closed and with initial data.
	OpCreate Op = "create"
	// OpAppend appends data and/or closes a stream (5.2, 5.3, POST), under
	// the producer rules of 5.2.1 when a producer is named.
	OpAppend Op = "append"
	// OpDelete deletes a stream (5.4, DELETE).
	OpDelete Op = "delete"
	// OpTouch records a read of a stream with a sliding TTL (5.1,
	// Stream-TTL: "each read or write resets the expiry countdown").
	OpTouch Op = "touch"
	// OpReincarnate gives a stream a new incarnation token: the bytes at an
	// offset already served may differ from now on (an accepted loss, a
	// restore from an older snapshot). Producers holding the old token are
	// refused with ErrStaleIncarnation until they take the new history.
	OpReincarnate Op = "reincarnate"
	// OpSweep reclaims, at the command's Now, every stream that has expired
	// (Stream-TTL, Stream-Expires-At) and, when ProducerTTL > 0, every
	// producer id with no accepted append for ProducerTTL (PROTOCOL.md
	// 5.2.1 recommends keeping producer state for 7 days). The leader
	// proposes it from time to time, so every voter forgets the same
	// streams and producers at the same index of the log, whether or not a
	// later command touches their names.
	OpSweep Op = "sweep"
)

// Producer names an idempotent producer's append: the Producer-Id,
// Producer-Epoch and Producer-Seq headers of PROTOCOL.md 5.2.1. Epoch and Seq
// are at most MaxProducerNumber.
type Producer struct {
	ID    string `json:"id"`
	Epoch uint64 `json:"epoch"`
	Seq   uint64 `json:"seq"`
}

// MaxProducerNumber is the largest epoch or sequence number accepted:
// 2^53-1, so that JavaScript clients can hold it exactly (PROTOCOL.md 5.2.1).
const MaxProducerNumber = 1<<53 - 1

// Command is one entry of the stream's log. The leader fills Now before it
// proposes the command; every voter applies it with that same Now.
type Command struct {
	Op     Op     `json:"op"`
	Stream string `json:"stream"`
	// Now is the leader's wall clock at proposal, Unix nanoseconds. Expiry
	// and sliding TTLs are judged against it, never against a local clock.
	Now int64 `json:"now"`

	// Create: content type ("" means application/octet-stream, or for a
	// fork the source's type), Stream-TTL in seconds when HasTTL, and
	// Stream-Expires-At in Unix nanoseconds (0: none).
	ContentType string `json:"contentType,omitempty"`
	HasTTL      bool   `json:"hasTTL,omitempty"`
	TTL         int64  `json:"ttl,omitempty"`
	ExpiresAt   int64  `json:"expiresAt,omitempty"`
	// Create as a fork: the source stream, the fork offset in bytes (-1: the
	// source's tail) and the sub-offset (bytes, or messages for JSON).
	ForkFrom      string `json:"forkFrom,omitempty"`
	ForkOffset    int64  `json:"forkOffset,omitempty"`
	ForkSubOffset int64  `json:"forkSubOffset,omitempty"`
	// Create: the fence mode asked for (the Stream-Fence header, this
	// book's extension of the protocol): FenceRequired or FenceNone; ""
	// asks for none, except on a fork, which then takes its source's mode.
	// Any other value is refused with BadRequest. The mode is fixed at
	// creation: see Stream.Fence.
	Fence string `json:"fence,omitempty"`

	// Create and append: the messages to append. A byte stream's append is
	// one message; a JSON stream's append is one message per element of the
	// (flattened) JSON array the client sent (PROTOCOL.md 9.1.2). In the
	// log they are one byte string and the messages' lengths (see Encode).
	Messages [][]byte `json:"-"`
	// Close closes the stream after the append (Stream-Closed: true).
	Close bool `json:"close,omitempty"`

	// Append: the optional idempotent producer, the optional Stream-Seq
	// (compared bytewise, per stream), and the optional incarnation token
	// the writer believes in ("" means none given).
	Producer    *Producer `json:"producer,omitempty"`
	StreamSeq   string    `json:"streamSeq,omitempty"`
	Incarnation string    `json:"incarnation,omitempty"`

	// Sweep: how long a producer id may go without an accepted append
	// before it is forgotten, in nanoseconds (0: producers are kept).
	ProducerTTL int64 `json:"producerTTL,omitempty"`
}

// ErrBadCommand is returned (wrapped) by DecodeCommand for bytes that are not
// a command.
var ErrBadCommand = errors.New("stream: malformed command")

// wireCommand is a Command as the log holds it: the messages are Data (all
// of them, end to end) and Sizes (each one's length), so that a command of
// many tiny messages decodes into one buffer and one slice per message, not
// one allocation per message. Messages is the older form (one base64
// string per message), still read.
type wireCommand struct {
	cmdFields
	Data []byte `json:"data,omitempty"`
	// Sizes is each message's length as a uvarint, end to end.
	Sizes    []byte   `json:"sizes,omitempty"`
	Messages [][]byte `json:"messages,omitempty"`
}

// cmdFields is Command without its methods, so that wireCommand's JSON does
// not recurse into Command's.
type cmdFields Command

// MarshalJSON encodes the command as the log holds it.
func (c Command) MarshalJSON() ([]byte, error) {
	w := wireCommand{cmdFields: cmdFields(c)}
	if len(c.Messages) > 0 {
		n := 0
		for _, m := range c.Messages {
			n += len(m)
		}
		w.Data = make([]byte, 0, n)
		w.Sizes = make([]byte, 0, len(c.Messages))
		for _, m := range c.Messages {
			w.Data = append(w.Data, m...)
			w.Sizes = binary.AppendUvarint(w.Sizes, uint64(len(m)))
		}
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes either form; the messages are slices of one buffer.
func (c *Command) UnmarshalJSON(b []byte) error {
	var w wireCommand
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*c = Command(w.cmdFields)
	c.Messages = w.Messages
	if len(w.Sizes) > 0 || len(w.Data) > 0 {
		count := 0
		for _, b := range w.Sizes {
			if b < 0x80 {
				count++
			}
		}
		c.Messages = make([][]byte, 0, count)
		off, sizes := 0, w.Sizes
		for len(sizes) > 0 {
			n, k := binary.Uvarint(sizes)
			if k <= 0 || n > uint64(len(w.Data)-off) {
				return fmt.Errorf("message %d: a malformed size or one running past the %d bytes of data", len(c.Messages), len(w.Data))
			}
			sizes = sizes[k:]
			c.Messages = append(c.Messages, w.Data[off:off+int(n):off+int(n)])
			off += int(n)
		}
		if off != len(w.Data) {
			return fmt.Errorf("%d bytes of data, but the messages' sizes add up to %d", len(w.Data), off)
		}
	}
	return nil
}

// Encode returns the command as bytes for the log.
func (c Command) Encode() []byte {
	b, err := json.Marshal(c)
	if err != nil {
		// A Command holds only strings, integers and byte slices.
		panic(err)
	}
	return b
}

// DecodeCommand parses bytes made by Command.Encode.
func DecodeCommand(b []byte) (Command, error) {
	var c Command
	if err := json.Unmarshal(b, &c); err != nil {
		return Command{}, fmt.Errorf("%w: %v", ErrBadCommand, err)
	}
	switch c.Op {
	case OpCreate, OpAppend, OpDelete, OpTouch, OpReincarnate, OpSweep:
	default:
		return Command{}, fmt.Errorf("%w: unknown op %q", ErrBadCommand, c.Op)
	}
	return c, nil
}
