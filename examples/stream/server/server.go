// Package server serves the epoch-fenced stream over HTTP with the Durable
// Streams protocol (PROTOCOL.md of github.com/durable-streams/durable-streams)
// on /v1/stream/<name>, plus this book's additions:
//
//   - A 403 for an older producer epoch carries Producer-Outcome: epoch-closed
//     next to the protocol's Producer-Epoch (the current epoch).
//   - The answer to a claim (an append that opens a newer epoch at sequence
//     number 0) carries Producer-Closed-Epoch and Producer-Closed-Seq: the
//     closed epoch and that epoch's last applied sequence number.
//   - Every successful answer about a stream (create, append, HEAD, GET)
//     carries Stream-Incarnation, the token of its history; an append may
//     send it back in the same header, and a stale one is refused with 412
//     Precondition Failed.
//   - A create may send Stream-Fence: required (or none). On a stream
//     created with required, while it holds the state of any producer (from
//     the first append with producer headers on), an append or close
//     without producer headers is refused with 403 and Producer-Outcome:
//     producer-required, and changes nothing. The answers
//     to create, HEAD and GET echo Stream-Fence: required for such a stream.
//     A create without the header gets Server.FenceDefault (a fork: its
//     source's mode). The Durable Streams protocol allows such optional
//     headers (PROTOCOL.md 9.1, "Protocol Extensions"); a client that does
//     not know this one still appends to such a stream with the producer
//     headers of 5.2.1.
//
// Writes become commands of the stream state machine (package stream) and go
// through an Applier (a Raft group, or a local machine). Reads are served
// from the local Machine, but only after Applier.LeaderRead has confirmed
// that this voter leads and has applied every committed entry.
package server

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ownership-book/ownership/examples/stream"
)

// Header names: the protocol's (PROTOCOL.md 13.2 and 5.2.1) and this book's.
const (
	HeaderNextOffset    = "Stream-Next-Offset"
	HeaderUpToDate      = "Stream-Up-To-Date"
	HeaderClosed        = "Stream-Closed"
	HeaderCursor        = "Stream-Cursor"
	HeaderTTL           = "Stream-TTL"
	HeaderExpiresAt     = "Stream-Expires-At"
	HeaderSeq           = "Stream-Seq"
	HeaderForkedFrom    = "Stream-Forked-From"
	HeaderForkOffset    = "Stream-Fork-Offset"
	HeaderForkSubOffset = "Stream-Fork-Sub-Offset"
	HeaderSSEEncoding   = "Stream-Sse-Data-Encoding"

	HeaderProducerID          = "Producer-Id"
	HeaderProducerEpoch       = "Producer-Epoch"
	HeaderProducerSeq         = "Producer-Seq"
	HeaderProducerExpectedSeq = "Producer-Expected-Seq"
	HeaderProducerReceivedSeq = "Producer-Received-Seq"

	// HeaderProducerOutcome is this book's: on a 403, OutcomeEpochClosed
	// for an older epoch, OutcomeProducerRequired for an append without
	// producer headers to a fence-required stream.
	HeaderProducerOutcome = "Producer-Outcome"
	// HeaderProducerClosedEpoch and HeaderProducerClosedSeq answer a claim:
	// the closed epoch and that epoch's last applied sequence number.
	HeaderProducerClosedEpoch = "Producer-Closed-Epoch"
	HeaderProducerClosedSeq   = "Producer-Closed-Seq"
	// HeaderIncarnation carries the stream's incarnation token, in answers
	// and (optionally) in appends.
	HeaderIncarnation = "Stream-Incarnation"
	// HeaderFence is this book's: a create's fence mode ("required" or
	// "none"), echoed as "required" by the answers about a fence-required
	// stream.
	HeaderFence = "Stream-Fence"
)

// Producer-Outcome values of this book's refusals (HeaderProducerOutcome).
const (
	// OutcomeEpochClosed: the append's epoch is older than the producer's
	// current one (403).
	OutcomeEpochClosed = "epoch-closed"
	// OutcomeProducerRequired: the stream is fence-required, a producer has
	// written to it, and the append has no producer headers (403).
	OutcomeProducerRequired = "producer-required"
)

// Applier puts an encoded command through the log and returns the encoded
// result of applying it. LeaderRead returns once this node's machine has
// applied everything committed before the call (a leader read); a follower
// returns an error.
type Applier interface {
	Apply(ctx context.Context, cmd []byte) ([]byte, error)
	LeaderRead(ctx context.Context) error
}

// Local is an Applier for one machine with no log: Apply applies at once.
type Local struct{ M *stream.Machine }

// Apply applies cmd to the machine.
func (l Local) Apply(_ context.Context, cmd []byte) ([]byte, error) { return l.M.Apply(cmd), nil }

// LeaderRead returns nil: a lone machine is always current.
func (l Local) LeaderRead(context.Context) error { return nil }

// Server is the HTTP handler. Fill M and A; zero values of the rest are
// replaced by defaults in ServeHTTP.
type Server struct {
	M *stream.Machine
	A Applier
	// LongPoll is how long a long-poll read waits for data (default 20s).
	LongPoll time.Duration
	// SSELifetime is how long an SSE response stays open (default 60s).
	SSELifetime time.Duration
	// MaxBody is the largest request body in bytes (default 1 MiB); a
	// larger one gets 413. One append is one Raft log entry, and a voter
	// busy storing a very large entry can miss heartbeats long enough to
	// lose its leadership, so the default is modest.
	MaxBody int64
	// BodyTimeout bounds the time a client may take to send a request
	// body (default 30s); a slower one gets 408 and its connection is
	// closed, so a client trickling a body cannot hold a handler for ever.
	BodyTimeout time.Duration
	// WriteTimeout bounds each write of an answer (default 30s): a client
	// that stops reading its socket cannot hold an SSE or catch-up handler
	// for ever once the kernel's buffers are full.
	WriteTimeout time.Duration
	// MaxRead is about the most bytes one catch-up read returns (default
	// 1 MiB).
	MaxRead int
	// Now is the clock stamped into commands (default time.Now).
	Now func() time.Time
	// Redirect maps an error from A (a follower's "not the leader") to the
	// leader's base URL. The request is then forwarded there (Forward) or
	// answered 307 Temporary Redirect to it.
	Redirect func(err error) (base string, ok bool)
	// Forward makes a follower forward requests to the leader instead of
	// redirecting the client: clients that cannot resend a body on a 307
	// (fetch with a byte-array body) then work against any voter.
	Forward bool
	// NewLeader, if set, waits until this voter knows a leader other than
	// the one at base and returns the new leader's base URL (ok false when
	// none is known by the time ctx ends or its own bound passes). Forward
	// uses it when the connection to the leader was refused or could not
	// be dialed: the request certainly never reached that leader (it has
	// died, an election is under way), so sending it to the new leader
	// cannot apply it twice. nil: answer 502 with Retry-After at once.
	NewLeader func(ctx context.Context, base string) (newBase string, ok bool)
	// BaseURL, e.g. "http://10.0.0.1:4437", is this server's address as
	// clients should use it: a 201's Location is BaseURL followed by the
	// stream's path. "": Location is the path alone (a relative reference,
	// RFC 9110 10.2.2). Never taken from the request's Host header, which
	// the client chooses.
	BaseURL string
	// MaxProducerID is the longest Producer-Id accepted, in bytes (default
	// stream.DefaultMaxProducerIDBytes); a longer one gets 400.
	MaxProducerID int
	// FenceDefault is the fence mode of a stream created without a
	// Stream-Fence header: stream.FenceRequired, or "" or stream.FenceNone
	// for the protocol's behaviour. A fork created without the header takes
	// its source's mode instead. A create repeated without the header asks
	// for this mode too, so it is 409 on a stream created with another.
	FenceDefault string
}

// Prefix is the path under which streams live.
const Prefix = "/v1/stream/"

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Server) maxBody() int64 {
	if s.MaxBody > 0 {
		return s.MaxBody
	}
	return 1 << 20
}

var exposed = strings.Join([]string{HeaderNextOffset, HeaderUpToDate, HeaderClosed, HeaderCursor, HeaderTTL,
	HeaderExpiresAt, HeaderSeq, HeaderSSEEncoding, HeaderProducerEpoch, HeaderProducerSeq,
	HeaderProducerExpectedSeq, HeaderProducerReceivedSeq, HeaderProducerOutcome,
	HeaderProducerClosedEpoch, HeaderProducerClosedSeq, HeaderIncarnation, HeaderFence,
	"ETag", "Location", "Content-Type"}, ", ")

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	// Browser security headers (PROTOCOL.md 12.7) and CORS.
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cross-Origin-Resource-Policy", "cross-origin")
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Expose-Headers", exposed)
	if r.Method == http.MethodOptions {
		h.Set("Access-Control-Allow-Methods", "GET, HEAD, POST, PUT, DELETE, OPTIONS")
		if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
			h.Set("Access-Control-Allow-Headers", req)
		} else {
			h.Set("Access-Control-Allow-Headers", "*")
		}
		h.Set("Access-Control-Max-Age", "86400")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if !strings.HasPrefix(r.URL.Path, Prefix) || len(r.URL.Path) == len(Prefix) {
		httpError(w, http.StatusNotFound, "no stream at %q: streams live under %s<name>", r.URL.Path, Prefix)
		return
	}
	name := r.URL.Path[len(Prefix):]
	if err := stream.CheckName("stream name", name, stream.MaxNameBytes); err != nil {
		httpError(w, http.StatusBadRequest, "%v", err)
		return
	}
	switch r.Method {
	case http.MethodPut:
		s.create(w, r, name)
	case http.MethodPost:
		s.append(w, r, name)
	case http.MethodGet:
		s.read(w, r, name)
	case http.MethodHead:
		s.head(w, r, name)
	case http.MethodDelete:
		s.delete(w, r, name)
	default:
		h.Set("Allow", "GET, HEAD, POST, PUT, DELETE, OPTIONS")
		httpError(w, http.StatusMethodNotAllowed, "method %s is not allowed on a stream", r.Method)
	}
}

func httpError(w http.ResponseWriter, code int, format string, args ...any) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	fmt.Fprintf(w, format+"\n", args...)
}

// FormatOffset renders a byte position as an offset token: two fields of 16
// decimal digits, the first reserved (always 0) and the second the position
// in bytes, so that tokens sort like positions (PROTOCOL.md 8) and have the
// shape of the reference server's (0000000000000000_0000000000000000 is the
// start of every stream).
func FormatOffset(n int64) string { return fmt.Sprintf("%016d_%016d", 0, n) }

var offsetRE = regexp.MustCompile(`^0{16}_[0-9]{16}$`)

// ParseOffset parses a token made by FormatOffset.
func ParseOffset(s string) (int64, error) {
	if !offsetRE.MatchString(s) {
		return 0, fmt.Errorf("malformed offset %q: want 0000000000000000_<16 digits>, -1 or now", s)
	}
	n, err := strconv.ParseInt(s[17:], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("malformed offset %q: %v", s, err)
	}
	return n, nil
}

var uintRE = regexp.MustCompile(`^(0|[1-9][0-9]*)$`)

// parseUint parses a non-negative decimal integer without sign, leading
// zeros or exponent, at most max.
func parseUint(header, v string, max uint64) (uint64, error) {
	if !uintRE.MatchString(v) {
		return 0, fmt.Errorf("%s %q is not a non-negative decimal integer", header, v)
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || n > max {
		return 0, fmt.Errorf("%s %q is larger than %d", header, v, max)
	}
	return n, nil
}

func isTrue(v string) bool { return strings.EqualFold(strings.TrimSpace(v), "true") }

func (s *Server) apply(ctx context.Context, w http.ResponseWriter, r *http.Request, c stream.Command, body []byte) (stream.Result, bool) {
	c.Now = s.now().UnixNano()
	out, err := s.A.Apply(ctx, c.Encode())
	if err != nil {
		s.notLeader(w, r, err, body)
		return stream.Result{}, false
	}
	res, err := stream.DecodeResult(out)
	if err != nil {
		httpError(w, http.StatusInternalServerError, "%v", err)
		return stream.Result{}, false
	}
	return res, true
}

func (s *Server) create(w http.ResponseWriter, r *http.Request, name string) {
	c := stream.Command{Op: stream.OpCreate, Stream: name, ContentType: r.Header.Get("Content-Type")}
	ttl, hasTTL := r.Header.Get(HeaderTTL), len(r.Header.Values(HeaderTTL)) > 0
	exp, hasExp := r.Header.Get(HeaderExpiresAt), len(r.Header.Values(HeaderExpiresAt)) > 0
	if hasTTL && hasExp {
		httpError(w, http.StatusBadRequest, "stream %q: give %s or %s, not both", name, HeaderTTL, HeaderExpiresAt)
		return
	}
	if hasTTL {
		n, err := parseUint(HeaderTTL, ttl, 1<<40)
		if err != nil {
			httpError(w, http.StatusBadRequest, "stream %q: %v", name, err)
			return
		}
		c.HasTTL, c.TTL = true, int64(n)
	}
	if hasExp {
		t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(exp))
		if err != nil {
			httpError(w, http.StatusBadRequest, "stream %q: %s %q is not an RFC 3339 time", name, HeaderExpiresAt, exp)
			return
		}
		c.ExpiresAt = t.UnixNano()
		if c.ExpiresAt == 0 {
			c.ExpiresAt = 1
		}
	}
	c.Close = isTrue(r.Header.Get(HeaderClosed))
	fence, err := fenceHeader(r.Header)
	if err != nil {
		httpError(w, http.StatusBadRequest, "stream %q: %v", name, err)
		return
	}
	c.Fence = fence
	if from := r.Header.Get(HeaderForkedFrom); from != "" {
		if u, err := url.Parse(from); err == nil && u.Path != "" {
			from = u.Path
		}
		c.ForkFrom = strings.TrimPrefix(from, Prefix)
		c.ForkFrom = strings.TrimPrefix(c.ForkFrom, "/")
		if err := stream.CheckName(HeaderForkedFrom, c.ForkFrom, stream.MaxNameBytes); err != nil {
			httpError(w, http.StatusBadRequest, "stream %q: %v", name, err)
			return
		}
		c.ForkOffset = -1
		if v := r.Header.Get(HeaderForkOffset); v != "" {
			n, err := ParseOffset(v)
			if err != nil {
				httpError(w, http.StatusBadRequest, "stream %q: %s: %v", name, HeaderForkOffset, err)
				return
			}
			c.ForkOffset = n
		}
		if v := r.Header.Get(HeaderForkSubOffset); v != "" {
			if r.Header.Get(HeaderForkOffset) == "" && v != "0" {
				httpError(w, http.StatusBadRequest, "stream %q: %s needs %s", name, HeaderForkSubOffset, HeaderForkOffset)
				return
			}
			n, err := parseUint(HeaderForkSubOffset, v, 1<<53-1)
			if err != nil {
				httpError(w, http.StatusBadRequest, "stream %q: %v", name, err)
				return
			}
			c.ForkSubOffset = int64(n)
		}
	} else if r.Header.Get(HeaderForkOffset) != "" || r.Header.Get(HeaderForkSubOffset) != "" {
		httpError(w, http.StatusBadRequest, "stream %q: %s or %s needs %s", name, HeaderForkOffset, HeaderForkSubOffset, HeaderForkedFrom)
		return
	} else if c.Fence == "" {
		c.Fence = s.FenceDefault
	}
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	if len(body) > 0 {
		ct := c.ContentType
		if ct == "" && c.ForkFrom != "" {
			if info, o := s.M.Stat(c.ForkFrom, s.now().UnixNano()); o == "" {
				ct = info.ContentType
			}
		}
		if c.Messages, ok = bodyMessages(w, name, body, stream.IsJSONType(ct), true); !ok {
			return
		}
	}
	res, ok := s.apply(r.Context(), w, r, c, body)
	if !ok {
		return
	}
	switch res.Outcome {
	case stream.Created, stream.Exists:
		h := w.Header()
		h.Set("Content-Type", res.ContentType)
		h.Set(HeaderNextOffset, FormatOffset(res.NextOffset))
		h.Set(HeaderIncarnation, res.Incarnation)
		if res.Closed {
			h.Set(HeaderClosed, "true")
		}
		setFence(h, res.Fence)
		if res.Outcome == stream.Created {
			h.Set("Location", strings.TrimSuffix(s.BaseURL, "/")+r.URL.EscapedPath())
			w.WriteHeader(http.StatusCreated)
		} else {
			w.WriteHeader(http.StatusOK)
		}
	default:
		writeRefusal(w, res)
	}
}

// statusOf maps a refusal to its HTTP status.
func statusOf(o stream.Outcome) int {
	switch o {
	case stream.NotFound:
		return http.StatusNotFound
	case stream.Gone:
		return http.StatusGone
	case stream.EpochFenced, stream.ProducerRequired:
		return http.StatusForbidden
	case stream.ClaimNotAtZero, stream.BadRequest:
		return http.StatusBadRequest
	case stream.StaleIncarnation:
		return http.StatusPreconditionFailed
	case stream.ConfigConflict, stream.StreamClosed, stream.ContentTypeMismatch,
		stream.StreamSeqRegression, stream.SequenceGap:
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}

func writeRefusal(w http.ResponseWriter, res stream.Result) {
	h := w.Header()
	switch res.Outcome {
	case stream.StreamClosed:
		h.Set(HeaderClosed, "true")
		h.Set(HeaderNextOffset, FormatOffset(res.NextOffset))
	case stream.EpochFenced:
		h.Set(HeaderProducerEpoch, strconv.FormatUint(res.Epoch, 10))
		h.Set(HeaderProducerOutcome, OutcomeEpochClosed)
	case stream.ProducerRequired:
		h.Set(HeaderProducerOutcome, OutcomeProducerRequired)
	case stream.SequenceGap:
		h.Set(HeaderProducerExpectedSeq, strconv.FormatUint(res.ExpectedSeq, 10))
		h.Set(HeaderProducerReceivedSeq, strconv.FormatUint(res.ReceivedSeq, 10))
	case stream.StaleIncarnation:
		h.Set(HeaderIncarnation, res.Incarnation)
	}
	msg := res.Message
	if msg == "" {
		msg = string(res.Outcome)
	}
	httpError(w, statusOf(res.Outcome), "%s", msg)
}

func (s *Server) append(w http.ResponseWriter, r *http.Request, name string) {
	c := stream.Command{Op: stream.OpAppend, Stream: name, ContentType: r.Header.Get("Content-Type"),
		Close: isTrue(r.Header.Get(HeaderClosed)), StreamSeq: r.Header.Get(HeaderSeq),
		Incarnation: r.Header.Get(HeaderIncarnation)}
	for _, k := range []string{HeaderSeq, HeaderIncarnation} {
		if err := once(r.Header, k); err != nil {
			httpError(w, http.StatusBadRequest, "stream %q: %v", name, err)
			return
		}
	}
	p, err := producerHeaders(r.Header, s.MaxProducerID)
	if err != nil {
		httpError(w, http.StatusBadRequest, "stream %q: %v", name, err)
		return
	}
	c.Producer = p
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	if len(body) == 0 && !c.Close {
		httpError(w, http.StatusBadRequest, "stream %q: an append needs a body (or %s: true)", name, HeaderClosed)
		return
	}
	if len(body) > 0 {
		if c.ContentType == "" {
			httpError(w, http.StatusBadRequest, "stream %q: an append with a body needs a Content-Type", name)
			return
		}
		info, o := s.M.Stat(name, s.now().UnixNano())
		asJSON := o == "" && stream.IsJSONType(c.ContentType) && stream.IsJSONType(info.ContentType) && !info.Closed
		var ok bool
		if c.Messages, ok = bodyMessages(w, name, body, asJSON, false); !ok {
			return
		}
	}
	res, ok := s.apply(r.Context(), w, r, c, body)
	if !ok {
		return
	}
	h := w.Header()
	switch res.Outcome {
	case stream.Appended, stream.Duplicate, stream.ClosedNow:
		// Producer-Epoch and Producer-Seq belong to success answers only
		// (PROTOCOL.md 5.2.1 "Response Headers"); refusals carry their own.
		if res.HasProducer {
			h.Set(HeaderProducerEpoch, strconv.FormatUint(res.Epoch, 10))
			h.Set(HeaderProducerSeq, strconv.FormatUint(res.Seq, 10))
		}
		h.Set(HeaderNextOffset, FormatOffset(res.NextOffset))
		h.Set(HeaderIncarnation, res.Incarnation)
		if res.Closed {
			h.Set(HeaderClosed, "true")
		}
		if res.Claim != nil {
			h.Set(HeaderProducerClosedEpoch, strconv.FormatUint(res.Claim.ClosedEpoch, 10))
			h.Set(HeaderProducerClosedSeq, strconv.FormatUint(res.Claim.LastSeq, 10))
		}
		if res.Outcome == stream.Appended && res.HasProducer {
			w.WriteHeader(http.StatusOK)
		} else {
			w.WriteHeader(http.StatusNoContent)
		}
	default:
		writeRefusal(w, res)
	}
}

// once returns an error naming header k when the request repeats it. The
// headers that order or fence an append (Stream-Seq, Stream-Incarnation and
// the producer headers) are refused when repeated rather than judged on one
// of their values: the server would have to guess which one the writer meant.
func once(h http.Header, k string) error {
	if vs := h.Values(k); len(vs) > 1 {
		return fmt.Errorf("%s is given %d times (%q); give it once", k, len(vs), vs)
	}
	return nil
}

// fenceHeader parses a create's Stream-Fence: "" when absent, else
// stream.FenceRequired or stream.FenceNone (in any case), given once.
func fenceHeader(h http.Header) (string, error) {
	if err := once(h, HeaderFence); err != nil {
		return "", err
	}
	vs := h.Values(HeaderFence)
	if len(vs) == 0 {
		return "", nil
	}
	switch v := strings.ToLower(strings.TrimSpace(vs[0])); v {
	case stream.FenceRequired, stream.FenceNone:
		return v, nil
	}
	return "", fmt.Errorf("%s %q: want %q (appends without producer headers are refused once a producer has written) or %q",
		HeaderFence, vs[0], stream.FenceRequired, stream.FenceNone)
}

// setFence echoes a fence-required stream's mode; a stream without one
// gets no header, as from a server that knows no fence modes.
func setFence(h http.Header, fence string) {
	if fence == stream.FenceRequired {
		h.Set(HeaderFence, stream.FenceRequired)
	}
}

// producerHeaders parses Producer-Id, Producer-Epoch and Producer-Seq: all
// three or none (PROTOCOL.md 5.2.1 "Request Headers"), each given once.
//
// The id must pass stream.CheckName with at most maxID bytes (0: the
// default, stream.DefaultMaxProducerIDBytes).
func producerHeaders(h http.Header, maxID int) (*stream.Producer, error) {
	n := 0
	for _, k := range []string{HeaderProducerID, HeaderProducerEpoch, HeaderProducerSeq} {
		if err := once(h, k); err != nil {
			return nil, err
		}
		if len(h.Values(k)) == 1 {
			n++
		}
	}
	if n == 0 {
		return nil, nil
	}
	if n < 3 {
		return nil, fmt.Errorf("give all of %s, %s and %s, or none", HeaderProducerID, HeaderProducerEpoch, HeaderProducerSeq)
	}
	id := h.Get(HeaderProducerID)
	if strings.TrimSpace(id) == "" {
		return nil, fmt.Errorf("%s is empty", HeaderProducerID)
	}
	if maxID <= 0 {
		maxID = stream.DefaultMaxProducerIDBytes
	}
	if err := stream.CheckName(HeaderProducerID, id, maxID); err != nil {
		return nil, err
	}
	epoch, err := parseUint(HeaderProducerEpoch, h.Get(HeaderProducerEpoch), stream.MaxProducerNumber)
	if err != nil {
		return nil, err
	}
	seq, err := parseUint(HeaderProducerSeq, h.Get(HeaderProducerSeq), stream.MaxProducerNumber)
	if err != nil {
		return nil, err
	}
	return &stream.Producer{ID: id, Epoch: epoch, Seq: seq}, nil
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request, name string) {
	res, ok := s.apply(r.Context(), w, r, stream.Command{Op: stream.OpDelete, Stream: name}, nil)
	if !ok {
		return
	}
	if res.Outcome == stream.Deleted {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeRefusal(w, res)
}

func setMeta(h http.Header, info stream.Info) {
	h.Set("Content-Type", info.ContentType)
	h.Set(HeaderNextOffset, FormatOffset(info.Tail))
	h.Set(HeaderIncarnation, info.Incarnation)
	if info.Closed {
		h.Set(HeaderClosed, "true")
	}
	setFence(h, info.Fence)
}

func (s *Server) head(w http.ResponseWriter, r *http.Request, name string) {
	if !s.leaderRead(w, r) {
		return
	}
	info, o := s.M.Stat(name, s.now().UnixNano())
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	if o != "" {
		w.WriteHeader(statusOf(o))
		return
	}
	setMeta(h, info)
	if info.TTL >= 0 {
		h.Set(HeaderTTL, strconv.FormatInt(info.TTL, 10))
	}
	if info.ExpiresAt != 0 {
		h.Set(HeaderExpiresAt, time.Unix(0, info.ExpiresAt).UTC().Format(time.RFC3339Nano))
	}
	w.WriteHeader(http.StatusOK)
}
