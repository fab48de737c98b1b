package stream

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Outcome names what applying a command did, or why it was refused. A refused
// command changes no state.
type Outcome string

// Outcomes of applying a command. The HTTP status each one maps to is given
// in brackets (PROTOCOL.md section named after it).
const (
	Created      Outcome = "created"      // [201] 5.1
	Exists       Outcome = "exists"       // [200] 5.1: same configuration
	Appended     Outcome = "appended"     // [200 with producer, else 204] 5.2
	Duplicate    Outcome = "duplicate"    // [204] 5.2.1: acknowledged, not appended
	ClosedNow    Outcome = "closed"       // [204] 5.3: close-only, or already closed
	Deleted      Outcome = "deleted"      // [204] 5.4
	Touched      Outcome = "touched"      // no answer to a client
	Reincarnated Outcome = "reincarnated" // no answer to a client
	Swept        Outcome = "swept"        // no answer to a client

	NotFound            Outcome = "not-found"             // [404]
	Gone                Outcome = "gone"                  // [410] 4.2 soft-deleted
	ConfigConflict      Outcome = "config-conflict"       // [409] 5.1
	StreamClosed        Outcome = "stream-closed"         // [409] 5.2
	ContentTypeMismatch Outcome = "content-type-mismatch" // [409] 5.2
	StreamSeqRegression Outcome = "stream-seq-regression" // [409] 5.2 Stream-Seq
	EpochFenced         Outcome = "epoch-closed"          // [403] 5.2.1 stale epoch
	ClaimNotAtZero      Outcome = "claim-not-at-zero"     // [400] 5.2.1 new epoch, seq != 0
	SequenceGap         Outcome = "sequence-gap"          // [409] 5.2.1
	StaleIncarnation    Outcome = "stale-incarnation"     // [412] this book's addition
	ProducerRequired    Outcome = "producer-required"     // [403] this book's: Stream-Fence: required
	BadRequest          Outcome = "bad-request"           // [400] input the machine refuses
)

// Text returns the outcome in words, for the messages of refusals: NotFound
// and Gone say what the client can do about them; the others are their names
// with spaces.
func (o Outcome) Text() string {
	switch o {
	case NotFound:
		return "not found (never created, deleted, or expired)"
	case Gone:
		return "deleted; its name stays taken while forks of it remain"
	}
	return strings.ReplaceAll(string(o), "-", " ")
}

// Result is the answer to one applied command, encoded in the bytes that
// Machine.Apply returns.
type Result struct {
	Outcome Outcome `json:"outcome"`
	// Message explains a refusal, naming the stream, producer and numbers.
	Message string `json:"message,omitempty"`

	// The stream's state after the command (or at the refusal).
	NextOffset  int64  `json:"nextOffset"`
	Closed      bool   `json:"closed,omitempty"`
	ContentType string `json:"contentType,omitempty"`
	Incarnation string `json:"incarnation,omitempty"`
	// Fence is the stream's fence mode (FenceRequired, or "" for none).
	Fence string `json:"fence,omitempty"`

	// Producer answers (PROTOCOL.md 5.2.1): on success Epoch echoes the
	// request's epoch and Seq is the highest sequence number accepted in it;
	// on EpochFenced, Epoch is the producer's current epoch; on SequenceGap,
	// ExpectedSeq and ReceivedSeq.
	Epoch       uint64 `json:"epoch,omitempty"`
	Seq         uint64 `json:"seq,omitempty"`
	HasProducer bool   `json:"hasProducer,omitempty"`
	ExpectedSeq uint64 `json:"expectedSeq,omitempty"`
	ReceivedSeq uint64 `json:"receivedSeq,omitempty"`
	// Claim is set when the append opened a newer epoch of a known producer
	// (see Claim).
	Claim *Claim `json:"claim,omitempty"`
}

// Claim is the answer to an append that opened a newer epoch (sequence
// number 0): ClosedEpoch is the producer's previous epoch, now closed, and
// LastSeq the highest sequence number that epoch had applied. The new owner
// learns from it exactly where the old owner's writes stopped (headers
// Producer-Closed-Epoch and Producer-Closed-Seq; chapter "The epoch-fenced
// stream", section "The claim and its answer").
type Claim struct {
	ClosedEpoch uint64 `json:"closedEpoch"`
	LastSeq     uint64 `json:"lastSeq"`
}

// Sentinel errors for refused commands, matched with errors.Is against
// Result.Err.
var (
	ErrNotFound            = errors.New("stream not found")
	ErrGone                = errors.New("stream gone")
	ErrConfigConflict      = errors.New("stream exists with a different configuration")
	ErrStreamClosed        = errors.New("stream closed")
	ErrContentTypeMismatch = errors.New("content type mismatch")
	ErrStreamSeqRegression = errors.New("Stream-Seq regression")
	ErrEpochFenced         = errors.New("producer epoch closed")
	ErrClaimNotAtZero      = errors.New("new producer epoch must start at sequence number 0")
	ErrSequenceGap         = errors.New("producer sequence gap")
	ErrStaleIncarnation    = errors.New("stale incarnation")
	ErrProducerRequired    = errors.New("producer headers required")
	ErrBadRequest          = errors.New("bad request")
)

var outcomeErrs = map[Outcome]error{
	NotFound:            ErrNotFound,
	Gone:                ErrGone,
	ConfigConflict:      ErrConfigConflict,
	StreamClosed:        ErrStreamClosed,
	ContentTypeMismatch: ErrContentTypeMismatch,
	StreamSeqRegression: ErrStreamSeqRegression,
	EpochFenced:         ErrEpochFenced,
	ClaimNotAtZero:      ErrClaimNotAtZero,
	SequenceGap:         ErrSequenceGap,
	StaleIncarnation:    ErrStaleIncarnation,
	ProducerRequired:    ErrProducerRequired,
	BadRequest:          ErrBadRequest,
}

// Err is nil for an accepted command and otherwise wraps the sentinel error
// of the refusal with the message.
func (r Result) Err() error {
	if e, ok := outcomeErrs[r.Outcome]; ok {
		return fmt.Errorf("%w: %s", e, r.Message)
	}
	return nil
}

// Encode returns the result as bytes.
func (r Result) Encode() []byte {
	b, err := json.Marshal(r)
	if err != nil {
		panic(err)
	}
	return b
}

// DecodeResult parses bytes made by Result.Encode.
func DecodeResult(b []byte) (Result, error) {
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return Result{}, fmt.Errorf("stream: malformed result: %v", err)
	}
	return r, nil
}
