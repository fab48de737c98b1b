package stream

import (
	"fmt"
	"sort"
	"strings"
)

// ProducerState is what a stream keeps per producer id: the producer's
// current epoch and the last sequence number applied in it.
type ProducerState struct {
	Epoch   uint64 `json:"epoch"`
	LastSeq uint64 `json:"lastSeq"`
	// LastWrite is the Now (Unix ns) of the producer's last accepted
	// append; OpSweep forgets the producer ProducerTTL after it. 0 (state
	// from before this field existed) counts from the first sweep.
	LastWrite int64 `json:"lastWrite,omitempty"`
}

// Chunk is one appended message and the offset (in bytes) at which it starts.
type Chunk struct {
	Offset int64  `json:"offset"`
	Data   []byte `json:"data"`
}

// Stream is one stream's state.
type Stream struct {
	Name        string `json:"name"`
	ContentType string `json:"contentType"`
	// TTL is the sliding time-to-live in seconds, -1 for none; LastAccess
	// (Unix ns) is the last write or recorded read.
	TTL        int64 `json:"ttl"`
	LastAccess int64 `json:"lastAccess"`
	// ExpiresAt is the absolute expiry in Unix ns, 0 for none.
	ExpiresAt int64 `json:"expiresAt"`

	Chunks []Chunk `json:"chunks"`
	Tail   int64   `json:"tail"`

	Closed bool `json:"closed"`
	// ClosedBy is the producer append that closed the stream, if any.
	ClosedBy *Producer `json:"closedBy,omitempty"`

	Producers map[string]*ProducerState `json:"producers"`
	StreamSeq string                    `json:"streamSeq,omitempty"`

	// Incarnation is the token of this stream's history (see OpReincarnate).
	Incarnation string `json:"incarnation"`

	// Fork: the source and where it diverged (PROTOCOL.md 4.2). The fork holds
	// a copy of the inherited bytes. Forks counts the live forks of this
	// stream; SoftDeleted marks a deleted stream that still has forks.
	ForkFrom      string `json:"forkFrom,omitempty"`
	ForkOffset    int64  `json:"forkOffset,omitempty"`
	ForkSubOffset int64  `json:"forkSubOffset,omitempty"`
	Forks         int    `json:"forks,omitempty"`
	SoftDeleted   bool   `json:"softDeleted,omitempty"`

	// Fence is the stream's fence mode, set when it is created and never
	// changed: FenceRequired, or "" (none). See FenceRequired.
	Fence string `json:"fence,omitempty"`
}

// Fence modes of a stream: the values of the Stream-Fence header of a
// create, this book's extension of the Durable Streams protocol. Section 9.1
// "Protocol Extensions" of PROTOCOL.md allows optional headers whose absence
// keeps the base protocol's behaviour; FenceNone is that behaviour, and a
// client that knows nothing of the header can still write to a
// fence-required stream with the producer headers of 5.2.1.
const (
	// FenceNone is the protocol's behaviour: an append without producer
	// headers is judged like any other (content type, closure, Stream-Seq)
	// and no fence applies to it.
	FenceNone = "none"
	// FenceRequired makes the producer fence cover every append: once the
	// stream holds the state of any producer, an append without producer
	// headers is refused with ProducerRequired (see State.decide).
	FenceRequired = "required"
)

// fenceMode returns the mode a create asks for: FenceRequired, "" (none),
// or ok false for an unknown mode. A fork that names none takes inherit.
func fenceMode(mode, inherit string) (string, bool) {
	switch mode {
	case FenceRequired:
		return FenceRequired, true
	case FenceNone:
		return "", true
	case "":
		return inherit, true
	}
	return "", false
}

// IsJSON reports whether the stream is in JSON mode (PROTOCOL.md 9.1).
func (s *Stream) IsJSON() bool { return IsJSONType(s.ContentType) }

// IsJSONType reports whether a content type is application/json (with any
// parameters), which selects JSON mode.
func IsJSONType(ct string) bool {
	return MediaType(ct) == "application/json"
}

// MediaType returns the content type without parameters, lower-cased.
func MediaType(ct string) string {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return strings.ToLower(strings.TrimSpace(ct))
}

// Expired reports whether the stream has expired at now (Unix ns).
func (s *Stream) Expired(now int64) bool {
	if s.ExpiresAt != 0 && now >= s.ExpiresAt {
		return true
	}
	if s.TTL >= 0 && now >= s.LastAccess+s.TTL*1e9 {
		return true
	}
	return false
}

// State is the whole state machine: every stream by name, and the counter
// from which incarnation tokens are made. Its zero value is not ready; use
// NewState.
type State struct {
	Streams         map[string]*Stream `json:"streams"`
	NextIncarnation uint64             `json:"nextIncarnation"`
}

// NewState returns an empty state.
func NewState() *State {
	return &State{Streams: map[string]*Stream{}, NextIncarnation: 1}
}

// newIncarnation returns a fresh token. It mixes the command's time with a
// counter so that a state restored from an older snapshot (whose counter went
// back) still mints tokens never used before.
func (st *State) newIncarnation(now int64) string {
	n := st.NextIncarnation
	st.NextIncarnation++
	return fmt.Sprintf("%x-%d", now, n)
}

// live returns the stream by name if it exists, is not expired at now, and
// (unless allowSoft) is not soft-deleted. An expired stream is removed: the
// removal is part of applying this command, at this command's Now, so every
// voter removes it at the same point of the log.
func (st *State) live(name string, now int64) (*Stream, Outcome) {
	s := st.Streams[name]
	if s == nil {
		return nil, NotFound
	}
	if s.SoftDeleted {
		return s, Gone
	}
	if s.Expired(now) {
		st.remove(s)
		return nil, NotFound
	}
	return s, ""
}

// remove deletes a stream, or soft-deletes it while forks remain; a removal
// that drops a soft-deleted source's last fork removes the source too.
func (st *State) remove(s *Stream) {
	if s.Forks > 0 {
		s.SoftDeleted = true
		return
	}
	delete(st.Streams, s.Name)
	for src := s.ForkFrom; src != ""; {
		p := st.Streams[src]
		if p == nil {
			break
		}
		p.Forks--
		if p.Forks > 0 || !p.SoftDeleted {
			break
		}
		delete(st.Streams, p.Name)
		src = p.ForkFrom
	}
}

// Apply applies one command and returns its result. It is deterministic: the
// same commands in the same order give the same states and results on every
// voter. A refused command changes nothing (except that it may remove a
// stream found expired at the command's Now, which every voter does alike).
func (st *State) Apply(c Command) Result {
	switch c.Op {
	case OpCreate:
		return st.create(c)
	case OpAppend:
		return st.append(c)
	case OpDelete:
		s, o := st.live(c.Stream, c.Now)
		if o != "" {
			return refuse(o, "stream %q: %s", c.Stream, o.Text())
		}
		st.remove(s)
		return Result{Outcome: Deleted}
	case OpTouch:
		s, o := st.live(c.Stream, c.Now)
		if o != "" {
			return refuse(o, "stream %q: %s", c.Stream, o.Text())
		}
		if c.Now > s.LastAccess {
			s.LastAccess = c.Now
		}
		return s.result(Touched)
	case OpReincarnate:
		if c.Stream == "" {
			for _, name := range st.names() {
				st.Streams[name].Incarnation = st.newIncarnation(c.Now)
			}
			return Result{Outcome: Reincarnated}
		}
		s, o := st.live(c.Stream, c.Now)
		if o != "" {
			return refuse(o, "stream %q: %s", c.Stream, o.Text())
		}
		s.Incarnation = st.newIncarnation(c.Now)
		return s.result(Reincarnated)
	case OpSweep:
		return st.sweep(c.Now, c.ProducerTTL)
	}
	return refuse(BadRequest, "unknown op %q", c.Op)
}

// sweep removes, in name order, every stream expired at now (a source with
// live forks is soft-deleted, as a DELETE would) and, when producerTTL > 0,
// every producer whose last accepted append is producerTTL or more before
// now. Its answer's Message counts both.
func (st *State) sweep(now, producerTTL int64) Result {
	streams, producers := 0, 0
	for _, name := range st.names() {
		s := st.Streams[name]
		if s == nil || s.SoftDeleted {
			continue // removed with a fork earlier in this sweep, or waiting for its forks
		}
		if s.Expired(now) {
			st.remove(s)
			streams++
			continue
		}
		if producerTTL <= 0 {
			continue
		}
		for id, p := range s.Producers {
			switch {
			case p.LastWrite == 0:
				p.LastWrite = now
			case now-p.LastWrite >= producerTTL:
				delete(s.Producers, id)
				producers++
			}
		}
	}
	return Result{Outcome: Swept, Message: fmt.Sprintf("removed %d expired streams and %d idle producers", streams, producers)}
}

// NeedsSweep reports whether an OpSweep at now with producerTTL would
// remove anything (or date a producer that has no LastWrite yet), so that a
// leader proposes one only when it does something. It reads the whole state
// (streams and producers), under the read lock.
func (st *State) NeedsSweep(now, producerTTL int64) bool {
	for _, s := range st.Streams {
		if s.SoftDeleted {
			continue
		}
		if s.Expired(now) {
			return true
		}
		if producerTTL <= 0 {
			continue
		}
		for _, p := range s.Producers {
			if p.LastWrite == 0 || now-p.LastWrite >= producerTTL {
				return true
			}
		}
	}
	return false
}

func (st *State) names() []string {
	names := make([]string, 0, len(st.Streams))
	for n := range st.Streams {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func refuse(o Outcome, format string, args ...any) Result {
	return Result{Outcome: o, Message: fmt.Sprintf(format, args...)}
}

// result returns an answer carrying the stream's current state.
func (s *Stream) result(o Outcome) Result {
	return Result{Outcome: o, NextOffset: s.Tail, Closed: s.Closed,
		ContentType: s.ContentType, Incarnation: s.Incarnation, Fence: s.Fence}
}

func (s *Stream) appendMessages(msgs [][]byte) {
	// Grow once, at least doubling: append's own growth (1.25× for large
	// slices) would copy the chunk headers of a many-message append many
	// times over.
	if need := len(s.Chunks) + len(msgs); need > cap(s.Chunks) {
		grown := make([]Chunk, len(s.Chunks), max(need, 2*cap(s.Chunks)))
		copy(grown, s.Chunks)
		s.Chunks = grown
	}
	for _, m := range msgs {
		if len(m) == 0 {
			continue
		}
		s.Chunks = append(s.Chunks, Chunk{Offset: s.Tail, Data: m})
		s.Tail += int64(len(m))
	}
}

func (st *State) create(c Command) Result {
	if c.ContentType == "" && c.ForkFrom == "" {
		c.ContentType = "application/octet-stream"
	}
	ttl := int64(-1)
	if c.HasTTL {
		ttl = c.TTL
	}
	inherit := ""
	if c.ForkFrom != "" {
		if src := st.Streams[c.ForkFrom]; src != nil {
			inherit = src.Fence
		}
	}
	fence, ok := fenceMode(c.Fence, inherit)
	if !ok {
		return refuse(BadRequest, "stream %q: fence mode %q: want %q or %q", c.Stream, c.Fence, FenceRequired, FenceNone)
	}
	if old, o := st.live(c.Stream, c.Now); o == Gone {
		return refuse(ConfigConflict, "stream %q was deleted and still has forks; its name cannot be reused yet", c.Stream)
	} else if old != nil {
		return st.recreate(old, c, ttl, fence)
	}
	s := &Stream{Name: c.Stream, ContentType: c.ContentType, TTL: ttl,
		ExpiresAt: c.ExpiresAt, LastAccess: c.Now, Producers: map[string]*ProducerState{}, Fence: fence}
	if c.ForkFrom != "" {
		src, o := st.live(c.ForkFrom, c.Now)
		switch o {
		case NotFound:
			return refuse(NotFound, "fork source %q not found", c.ForkFrom)
		case Gone:
			return refuse(ConfigConflict, "fork source %q was deleted", c.ForkFrom)
		}
		if c.ForkFrom == c.Stream {
			return refuse(ConfigConflict, "stream %q cannot fork itself", c.Stream)
		}
		if c.ContentType != "" && MediaType(c.ContentType) != MediaType(src.ContentType) {
			return refuse(ContentTypeMismatch, "fork %q: content type %q differs from source %q's %q",
				c.Stream, c.ContentType, src.Name, src.ContentType)
		}
		s.ContentType = src.ContentType
		chunks, tail, res := src.prefix(c.ForkOffset, c.ForkSubOffset)
		if res.Outcome != "" {
			return res
		}
		s.Chunks, s.Tail = chunks, tail
		s.ForkFrom, s.ForkOffset, s.ForkSubOffset = src.Name, c.ForkOffset, c.ForkSubOffset
		if !c.HasTTL && c.ExpiresAt == 0 {
			s.TTL, s.ExpiresAt = src.TTL, src.ExpiresAt
		}
		src.Forks++
	}
	s.appendMessages(c.Messages)
	s.Closed = c.Close
	s.Incarnation = st.newIncarnation(c.Now)
	st.Streams[s.Name] = s
	return s.result(Created)
}

// recreate answers a create for a name that exists: 200 when the
// configuration matches (PROTOCOL.md 5.1), 409 otherwise. The fence mode is
// part of the configuration: fence is the mode the create asks for (for a
// fork that names none, its source's).
func (st *State) recreate(s *Stream, c Command, ttl int64, fence string) Result {
	same := (c.ContentType == "" || MediaType(s.ContentType) == MediaType(c.ContentType)) &&
		s.TTL == ttl && s.ExpiresAt == c.ExpiresAt && s.Closed == c.Close &&
		s.ForkFrom == c.ForkFrom && s.Fence == fence
	if same && c.ForkFrom != "" && c.ForkOffset >= 0 {
		same = s.ForkOffset == c.ForkOffset && s.ForkSubOffset == c.ForkSubOffset
	}
	if !same {
		return refuse(ConfigConflict, "stream %q exists with a different configuration", c.Stream)
	}
	return s.result(Exists)
}

// prefix returns a copy of the stream's chunks up to offset (-1: the tail)
// plus sub more bytes (or messages, in JSON mode).
func (s *Stream) prefix(offset, sub int64) ([]Chunk, int64, Result) {
	if offset < 0 {
		offset = s.Tail
	}
	if offset > s.Tail {
		return nil, 0, refuse(BadRequest, "fork offset %d is beyond stream %q's tail %d", offset, s.Name, s.Tail)
	}
	var out []Chunk
	i := 0
	for ; i < len(s.Chunks) && s.Chunks[i].Offset+int64(len(s.Chunks[i].Data)) <= offset; i++ {
		out = append(out, s.Chunks[i])
	}
	tail := offset
	if i < len(s.Chunks) && s.Chunks[i].Offset < offset {
		// The offset falls inside a chunk: only byte streams may split one.
		if s.IsJSON() {
			return nil, 0, refuse(BadRequest, "fork offset %d is not a message boundary of stream %q", offset, s.Name)
		}
		ch := s.Chunks[i]
		out = append(out, Chunk{Offset: ch.Offset, Data: ch.Data[:offset-ch.Offset]})
	}
	if sub < 0 {
		return nil, 0, refuse(BadRequest, "fork sub-offset %d is negative", sub)
	}
	if sub > 0 {
		if i >= len(s.Chunks) {
			return nil, 0, refuse(BadRequest, "fork sub-offset %d is past stream %q's tail", sub, s.Name)
		}
		if s.IsJSON() {
			if i+int(sub) > len(s.Chunks) {
				return nil, 0, refuse(BadRequest, "fork sub-offset %d names more messages than stream %q has", sub, s.Name)
			}
			for _, ch := range s.Chunks[i : i+int(sub)] {
				out = append(out, ch)
				tail = ch.Offset + int64(len(ch.Data))
			}
		} else {
			ch := s.Chunks[i]
			start := offset - ch.Offset
			if start+sub > int64(len(ch.Data)) {
				return nil, 0, refuse(BadRequest, "fork sub-offset %d is past the next data boundary of stream %q", sub, s.Name)
			}
			if start > 0 {
				out = out[:len(out)-1]
			}
			out = append(out, Chunk{Offset: ch.Offset, Data: ch.Data[:start+sub]})
			tail = offset + sub
		}
	}
	return out, tail, Result{}
}

func (st *State) append(c Command) Result {
	s, o := st.live(c.Stream, c.Now)
	if o != "" {
		return refuse(o, "stream %q: %s", c.Stream, o.Text())
	}
	empty := true
	for _, m := range c.Messages {
		if len(m) > 0 {
			empty = false
		}
	}
	if empty && !c.Close {
		return refuse(BadRequest, "stream %q: an append without Stream-Closed must carry data", c.Stream)
	}
	r := st.decide(s, c, empty)
	if r.Outcome != Appended && r.Outcome != ClosedNow {
		return r
	}
	// Accepted: the data and the producer state change together, in this one
	// log entry.
	s.appendMessages(c.Messages)
	if c.Producer != nil {
		p := s.Producers[c.Producer.ID]
		if p == nil {
			p = &ProducerState{}
			s.Producers[c.Producer.ID] = p
		}
		p.Epoch, p.LastSeq = c.Producer.Epoch, c.Producer.Seq
		if c.Now > p.LastWrite {
			p.LastWrite = c.Now
		}
	}
	if c.StreamSeq != "" {
		s.StreamSeq = c.StreamSeq
	}
	if c.Close && !s.Closed {
		s.Closed = true
		if c.Producer != nil {
			cp := *c.Producer
			s.ClosedBy = &cp
		}
	}
	if c.Now > s.LastAccess {
		s.LastAccess = c.Now
	}
	out := s.result(r.Outcome)
	out.Epoch, out.Seq, out.HasProducer, out.Claim = r.Epoch, r.Seq, r.HasProducer, r.Claim
	return out
}

// decide runs the checks of an append in the order the protocol gives and
// returns the refusal, or Appended/ClosedNow with the producer answer. It
// changes nothing. The order is PROTOCOL.md's: a closed stream first (5.2
// "Error Precedence"), where only a repeat of the very append that closed it
// is a duplicate (5.2.1 "Stream Closure with Idempotent Producers"); then the
// content type; then the producer rule, whose fence and duplicate come before
// this book's incarnation check, so that a fenced writer learns it was
// replaced and a retry of an applied append is acknowledged; then gaps and
// Stream-Seq.
//
// On a stream created with FenceRequired, an append without a producer
// takes the producer rule's place and is refused with ProducerRequired as
// soon as the stream holds the state of any producer: from then on the
// producer fence decides who writes, and a writer that sends no producer
// headers would pass beside it. A close without producer headers (an empty
// append with Stream-Closed) is refused the same way. Before the first
// producer append (and again once every producer has been forgotten, by
// OpSweep) there is no epoch to bypass, and such appends are judged as on
// any stream: refusing them too would not make the fence hold any better,
// since a writer that sends producer headers under a fresh id is accepted
// all the same, and it would forbid filling a stream before its first
// owner claims it. On a closed stream the closed stream's answers come first,
// as they do for a fenced epoch.
func (st *State) decide(s *Stream, c Command, empty bool) Result {
	if s.Closed {
		if c.Producer != nil && s.ClosedBy != nil && *c.Producer == *s.ClosedBy {
			return withState(s, Result{Outcome: Duplicate, Epoch: c.Producer.Epoch,
				Seq: c.Producer.Seq, HasProducer: true})
		}
		if empty && c.Producer == nil {
			return s.result(ClosedNow) // closing a closed stream is idempotent
		}
		return refuse2(s, StreamClosed, "stream %q is closed", s.Name)
	}
	if !empty && MediaType(c.ContentType) != MediaType(s.ContentType) {
		return refuse2(s, ContentTypeMismatch, "stream %q has content type %q, the append has %q",
			s.Name, s.ContentType, c.ContentType)
	}
	if c.Producer == nil && s.Fence == FenceRequired && len(s.Producers) > 0 {
		return refuse2(s, ProducerRequired, "stream %q is fence-required (Stream-Fence: %s) and a producer has written to it: "+
			"an append must carry Producer-Id, Producer-Epoch and Producer-Seq", s.Name, FenceRequired)
	}
	var pr Result
	if c.Producer != nil {
		pr = ProducerRule(s.Producers[c.Producer.ID], *c.Producer)
		pr.HasProducer = true
		switch pr.Outcome {
		case EpochFenced:
			pr.Message = fmt.Sprintf("stream %q, producer %q: epoch %d is closed; the current epoch is %d",
				s.Name, c.Producer.ID, c.Producer.Epoch, pr.Epoch)
			return withState(s, pr)
		case Duplicate:
			return withState(s, pr)
		}
	}
	if c.Incarnation != "" && c.Incarnation != s.Incarnation {
		return refuse2(s, StaleIncarnation, "stream %q: incarnation %q is stale; the current one is %q",
			s.Name, c.Incarnation, s.Incarnation)
	}
	if c.Producer != nil && pr.Outcome != Appended {
		switch pr.Outcome {
		case ClaimNotAtZero:
			pr.Message = fmt.Sprintf("stream %q, producer %q: a new epoch %d must start at sequence number 0, got %d",
				s.Name, c.Producer.ID, c.Producer.Epoch, c.Producer.Seq)
		case SequenceGap:
			pr.Message = fmt.Sprintf("stream %q, producer %q, epoch %d: expected sequence number %d, got %d",
				s.Name, c.Producer.ID, c.Producer.Epoch, pr.ExpectedSeq, pr.ReceivedSeq)
		}
		return withState(s, pr)
	}
	if c.StreamSeq != "" && s.StreamSeq != "" && c.StreamSeq <= s.StreamSeq {
		return refuse2(s, StreamSeqRegression, "stream %q: Stream-Seq %q is not above %q", s.Name, c.StreamSeq, s.StreamSeq)
	}
	if empty {
		pr.Outcome = ClosedNow
	} else {
		pr.Outcome = Appended
	}
	return pr
}

func withState(s *Stream, r Result) Result {
	out := s.result(r.Outcome)
	out.Message, out.Epoch, out.Seq, out.HasProducer = r.Message, r.Epoch, r.Seq, r.HasProducer
	out.ExpectedSeq, out.ReceivedSeq, out.Claim = r.ExpectedSeq, r.ReceivedSeq, r.Claim
	return out
}

func refuse2(s *Stream, o Outcome, format string, args ...any) Result {
	r := s.result(o)
	r.Message = fmt.Sprintf(format, args...)
	return r
}

// ANCHOR: producer-rule

// ProducerRule decides an idempotent producer's append against the state
// kept for its producer id (nil: never seen), in the order of PROTOCOL.md
// 5.2.1 "Validation Logic". It returns Appended (apply it, then the state is
// {p.Epoch, p.Seq}), Duplicate, EpochFenced, ClaimNotAtZero or SequenceGap,
// with the numbers each answer reports. It changes nothing.
func ProducerRule(cur *ProducerState, p Producer) Result {
	switch {
	case cur == nil && p.Seq != 0:
		// Unknown producer: only sequence number 0 can start it.
		return Result{Outcome: SequenceGap, ExpectedSeq: 0, ReceivedSeq: p.Seq}
	case cur == nil:
		return Result{Outcome: Appended, Epoch: p.Epoch, Seq: 0}
	case p.Epoch < cur.Epoch:
		// The fence: an older epoch is refused, naming the current one.
		return Result{Outcome: EpochFenced, Epoch: cur.Epoch}
	case p.Epoch > cur.Epoch && p.Seq != 0:
		return Result{Outcome: ClaimNotAtZero, Epoch: cur.Epoch}
	case p.Epoch > cur.Epoch:
		// A claim: the newer epoch starts, and closes the current one at
		// the last sequence number applied in it.
		return Result{Outcome: Appended, Epoch: p.Epoch, Seq: 0,
			Claim: &Claim{ClosedEpoch: cur.Epoch, LastSeq: cur.LastSeq}}
	case p.Seq <= cur.LastSeq:
		// Acknowledged again, appended once; report the highest accepted.
		return Result{Outcome: Appended, Epoch: p.Epoch, Seq: p.Seq}
	case p.Seq == cur.LastSeq+1:
		return Result{Outcome: Appended, Epoch: p.Epoch, Seq: p.Seq}
	default:
		return Result{Outcome: SequenceGap, Epoch: p.Epoch,
			ExpectedSeq: cur.LastSeq + 1, ReceivedSeq: p.Seq}
	}
}

// ANCHOR_END: producer-rule
