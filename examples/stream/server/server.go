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
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
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

// readBody reads at most MaxBody bytes; ok is false (and the answer written)
// when the body is larger.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if r.ContentLength > s.maxBody() {
		httpError(w, http.StatusRequestEntityTooLarge, "body of %d bytes is over the limit of %d", r.ContentLength, s.maxBody())
		return nil, false
	}
	bodyTimeout := s.BodyTimeout
	if bodyTimeout <= 0 {
		bodyTimeout = 30 * time.Second
	}
	// A ResponseWriter that cannot set deadlines (a test's recorder) reads
	// without one.
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(bodyTimeout))
	b, err := io.ReadAll(io.LimitReader(r.Body, s.maxBody()+1))
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		// The deadline stays, so that net/http gives up draining the
		// rest of the body and closes the connection.
		w.Header().Set("Connection", "close")
		httpError(w, http.StatusRequestTimeout, "reading body: not complete after %v", bodyTimeout)
		return nil, false
	}
	// Cleared at once: a deadline left behind would end the request's
	// context while the append is in the log.
	rc.SetReadDeadline(time.Time{})
	if err != nil {
		httpError(w, http.StatusBadRequest, "reading body: %v", err)
		return nil, false
	}
	if int64(len(b)) > s.maxBody() {
		httpError(w, http.StatusRequestEntityTooLarge, "body is over the limit of %d bytes", s.maxBody())
		return nil, false
	}
	return b, true
}

// jsonMessages splits a JSON body into messages, flattening one level of
// array (PROTOCOL.md 9.1.2). allowEmpty permits [] (a PUT).
// bodyMessages splits a create or append body into the stream's messages:
// with asJSON, one message per element of a JSON array (or the one JSON
// value), else the body as one message. Invalid JSON is answered 400 naming
// the stream, and ok is false.
func bodyMessages(w http.ResponseWriter, name string, body []byte, asJSON, allowEmpty bool) (msgs [][]byte, ok bool) {
	if !asJSON {
		return [][]byte{body}, true
	}
	msgs, err := jsonMessages(body, allowEmpty)
	if err != nil {
		httpError(w, http.StatusBadRequest, "stream %q: %v", name, err)
		return nil, false
	}
	return msgs, true
}

func jsonMessages(b []byte, allowEmpty bool) ([][]byte, error) {
	if !json.Valid(b) {
		return nil, errors.New("body is not valid JSON")
	}
	// One compacted copy of the body; the messages are slices of it, so a
	// body of many tiny values costs one buffer and one slice header per
	// message, not an allocation per message.
	var buf bytes.Buffer
	buf.Grow(len(b))
	if err := json.Compact(&buf, b); err != nil {
		return nil, err
	}
	c := buf.Bytes()
	if len(c) == 0 || c[0] != '[' {
		return [][]byte{c}, nil // not an array: one message
	}
	msgs := splitArray(c)
	if len(msgs) == 0 && !allowEmpty {
		return nil, errors.New("an append of an empty JSON array has no messages")
	}
	return msgs, nil
}

// splitArray returns the elements of a compacted, valid JSON array as
// slices of it.
func splitArray(c []byte) [][]byte {
	inner := c[1 : len(c)-1]
	if len(inner) == 0 {
		return [][]byte{}
	}
	n := 1
	depth, inStr, esc := 0, false, false
	for _, ch := range inner {
		switch {
		case esc:
			esc = false
		case inStr:
			esc, inStr = ch == '\\', ch != '"'
		case ch == '"':
			inStr = true
		case ch == '[' || ch == '{':
			depth++
		case ch == ']' || ch == '}':
			depth--
		case ch == ',' && depth == 0:
			n++
		}
	}
	msgs := make([][]byte, 0, n)
	start := 0
	depth, inStr, esc = 0, false, false
	for i, ch := range inner {
		switch {
		case esc:
			esc = false
		case inStr:
			esc, inStr = ch == '\\', ch != '"'
		case ch == '"':
			inStr = true
		case ch == '[' || ch == '{':
			depth++
		case ch == ']' || ch == '}':
			depth--
		case ch == ',' && depth == 0:
			msgs = append(msgs, inner[start:i:i])
			start = i + 1
		}
	}
	return append(msgs, inner[start:len(inner):len(inner)])
}

// leaderRead makes the local machine current (a leader read) before a read
// that must see every acknowledged write; on a follower the request goes to
// the leader instead.
func (s *Server) leaderRead(w http.ResponseWriter, r *http.Request) bool {
	err := s.A.LeaderRead(r.Context())
	if err == nil {
		return true
	}
	s.notLeader(w, r, err, nil)
	return false
}

// HeaderForwarded counts how often a request was forwarded from a follower
// to the voter it believed leader; after maxHops the request is refused with
// 503 instead (leadership moving faster than requests).
const HeaderForwarded = "Stream-Forwarded-By-Follower"

const maxHops = 3

// notLeader answers a request that this voter could not serve because it is
// not the leader (or the outcome of its command is unknown): forwarded to
// the leader (Forward), redirected there with 307, or refused with 503.
func (s *Server) notLeader(w http.ResponseWriter, r *http.Request, err error, body []byte) {
	hops, _ := strconv.Atoi(r.Header.Get(HeaderForwarded))
	if s.Redirect != nil && hops < maxHops {
		if base, ok := s.Redirect(err); ok {
			base = strings.TrimSuffix(base, "/")
			if s.Forward {
				s.forward(w, r, base, body, hops+1)
			} else {
				http.Redirect(w, r, base+r.URL.RequestURI(), http.StatusTemporaryRedirect)
			}
			return
		}
	}
	w.Header().Set("Retry-After", "1")
	httpError(w, http.StatusServiceUnavailable, "%s %s: %v", r.Method, r.URL.Path, err)
}

var forwardClient = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// forward sends the request (with the body already read) to the leader and
// copies its answer back, flushing as it arrives (long-poll, SSE).
func (s *Server) forward(w http.ResponseWriter, r *http.Request, base string, body []byte, hops int) {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, base+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		httpError(w, http.StatusBadGateway, "forward to leader: %v", err)
		return
	}
	req.Header = r.Header.Clone()
	req.Header.Set(HeaderForwarded, strconv.Itoa(hops))
	req.Host = r.Host
	// gotConn records whether any connection to the leader was obtained:
	// net/http may resend a request on a new connection after an old one
	// broke, and then a dial error would hide that the first try reached
	// the leader.
	var gotConn atomic.Bool
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { gotConn.Store(true) },
	}))
	resp, err := forwardClient.Do(req)
	if err != nil && s.NewLeader != nil && hops < maxHops && !gotConn.Load() && dialFailed(err) {
		if nb, ok := s.NewLeader(r.Context(), base); ok {
			s.forward(w, r, strings.TrimSuffix(nb, "/"), body, hops+1)
			return
		}
	}
	if err != nil {
		w.Header().Set("Retry-After", "1")
		httpError(w, http.StatusBadGateway, "forward to leader %s: %v", base, err)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	flusher, _ := w.(http.Flusher)
	buf := make([]byte, 32<<10)
	defer s.writeDeadline(w)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			s.writeDeadline(w)
			w.Write(buf[:n])
			if flusher != nil {
				flusher.Flush()
			}
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			// The leader's answer broke off (it died, or the client left).
			// Ending ours normally would pass a cut-short body off as
			// whole, with headers (Stream-Next-Offset) that describe all
			// of it; aborting breaks the client's connection instead.
			panic(http.ErrAbortHandler)
		}
	}
}

// dialFailed reports whether a forward failed while dialing the leader
// (connection refused, no route, dial timeout). With no connection ever
// obtained (see forward), no byte of the request left this voter. Any later
// failure (a broken connection, a lost answer) may come after the leader
// received the request, and is not retried.
func dialFailed(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

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

// cursorEpoch and cursorInterval define the Stream-Cursor (PROTOCOL.md 10.1):
// the number of 20-second intervals since 2024-10-09T00:00:00Z.
var cursorEpoch = time.Date(2024, 10, 9, 0, 0, 0, 0, time.UTC)

const cursorInterval = 20 * time.Second

func (s *Server) cursor(client string) string {
	cur := int64(s.now().Sub(cursorEpoch) / cursorInterval)
	if c, err := strconv.ParseInt(client, 10, 64); err == nil && c >= cur {
		cur = c + 1 + rand.Int64N(180)
	}
	return strconv.FormatInt(cur, 10)
}

func (s *Server) read(w http.ResponseWriter, r *http.Request, name string) {
	q := r.URL.Query()
	offsets, hasOffset := q["offset"]
	live := q.Get("live")
	if len(offsets) > 1 {
		httpError(w, http.StatusBadRequest, "stream %q: give one offset, not %d", name, len(offsets))
		return
	}
	if live != "" && live != "long-poll" && live != "sse" {
		httpError(w, http.StatusBadRequest, "stream %q: live=%q: want long-poll or sse", name, live)
		return
	}
	if live != "" && !hasOffset {
		httpError(w, http.StatusBadRequest, "stream %q: live=%s needs an offset", name, live)
		return
	}
	// Malformed input is refused before anything reaches the log.
	var parsed int64
	if v := q.Get("offset"); hasOffset && v != "-1" && v != "now" {
		n, err := ParseOffset(v)
		if err != nil {
			httpError(w, http.StatusBadRequest, "stream %q: %v", name, err)
			return
		}
		parsed = n
	}
	// Every read is a leader read. For a stream with a sliding TTL the read
	// must also be recorded in the log (PROTOCOL.md 5.1: a read resets the
	// countdown); that write, applied here, is itself the leader read, since
	// the leader applies it after everything committed before it.
	if pre, o := s.M.Stat(name, s.now().UnixNano()); o == "" && pre.TTL >= 0 {
		// A read that is going to be refused must not restart the
		// countdown, so an explicit offset is first checked against the
		// current state (after a leader read of its own).
		if hasOffset && q.Get("offset") != "-1" && q.Get("offset") != "now" {
			if !s.leaderRead(w, r) {
				return
			}
			if _, ok := s.readAt(w, name, parsed, 1); !ok {
				return
			}
		}
		res, ok := s.apply(r.Context(), w, r, stream.Command{Op: stream.OpTouch, Stream: name}, nil)
		if !ok {
			return
		}
		if res.Outcome != stream.Touched {
			writeRefusal(w, res)
			return
		}
	} else if !s.leaderRead(w, r) {
		return
	}
	info, o := s.M.Stat(name, s.now().UnixNano())
	if o != "" {
		httpError(w, statusOf(o), "stream %q: %s", name, o.Text())
		return
	}
	var off int64
	atNow := false
	switch v := q.Get("offset"); {
	case !hasOffset || v == "-1":
		off = 0
	case v == "now":
		off, atNow = info.Tail, true
	default:
		off = parsed
	}
	switch live {
	case "sse":
		s.sse(w, r, name, off)
	case "long-poll":
		s.longPoll(w, r, name, off, atNow)
	default:
		s.catchUp(w, r, name, off, atNow)
	}
}

func (s *Server) maxRead() int {
	if s.MaxRead > 0 {
		return s.MaxRead
	}
	return 1 << 20
}

func body(rr stream.ReadResult) []byte {
	if rr.Info.ContentType != "" && stream.IsJSONType(rr.Info.ContentType) {
		var b []byte
		b = append(b, '[')
		for i, m := range rr.Messages {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, m...)
		}
		return append(b, ']')
	}
	var b []byte
	for _, m := range rr.Messages {
		b = append(b, m...)
	}
	return b
}

// readAt reads at most about maxBytes from off, or answers the refusal
// (404, 410, or 400 naming the offset) and returns false.
func (s *Server) readAt(w http.ResponseWriter, name string, off int64, maxBytes int) (stream.ReadResult, bool) {
	rr, o := s.M.Read(name, off, maxBytes, s.now().UnixNano())
	switch {
	case o == stream.BadRequest && off > rr.Tail:
		httpError(w, statusOf(o), "stream %q: offset %s is past the tail %s", name, FormatOffset(off), FormatOffset(rr.Tail))
		return rr, false
	case o == stream.BadRequest:
		httpError(w, statusOf(o), "stream %q: offset %s falls inside a JSON message; read from a message boundary", name, FormatOffset(off))
		return rr, false
	case o != "":
		httpError(w, statusOf(o), "stream %q: %s", name, o.Text())
		return rr, false
	}
	return rr, true
}

// writeDeadline gives the writes that follow WriteTimeout to complete. A
// ResponseWriter that cannot set deadlines (a test's recorder) has none.
func (s *Server) writeDeadline(w http.ResponseWriter) {
	d := s.WriteTimeout
	if d <= 0 {
		d = 30 * time.Second
	}
	http.NewResponseController(w).SetWriteDeadline(time.Now().Add(d))
}

func (s *Server) writeRead(w http.ResponseWriter, r *http.Request, rr stream.ReadResult, atNow bool, cursor bool) {
	s.writeDeadline(w)
	h := w.Header()
	h.Set("Content-Type", rr.ContentType)
	h.Set(HeaderNextOffset, FormatOffset(rr.Next))
	h.Set(HeaderIncarnation, rr.Incarnation)
	setFence(h, rr.Fence)
	if rr.UpToDate {
		h.Set(HeaderUpToDate, "true")
	}
	closedAtEnd := rr.Closed && rr.Next == rr.Tail
	if closedAtEnd {
		h.Set(HeaderClosed, "true")
	} else if cursor {
		h.Set(HeaderCursor, s.cursor(r.URL.Query().Get("cursor")))
	}
	if atNow {
		h.Set("Cache-Control", "no-store")
	} else {
		etag := fmt.Sprintf(`"%s:%s:%s`, rr.Incarnation, FormatOffset(rr.Start), FormatOffset(rr.Next))
		if closedAtEnd {
			etag += ":c"
		}
		etag += `"`
		h.Set("ETag", etag)
		h.Set("Cache-Control", "public, max-age=60, stale-while-revalidate=300")
		if inm := r.Header.Get("If-None-Match"); inm != "" && (inm == etag || inm == "*") {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	w.WriteHeader(http.StatusOK)
	w.Write(body(rr))
}

func (s *Server) catchUp(w http.ResponseWriter, r *http.Request, name string, off int64, atNow bool) {
	rr, ok := s.readAt(w, name, off, s.maxRead())
	if !ok {
		return
	}
	s.writeRead(w, r, rr, atNow, false)
}

func (s *Server) longPollTimeout() time.Duration {
	if s.LongPoll > 0 {
		return s.LongPoll
	}
	return 20 * time.Second
}

func (s *Server) longPoll(w http.ResponseWriter, r *http.Request, name string, off int64, atNow bool) {
	deadline := time.NewTimer(s.longPollTimeout())
	defer deadline.Stop()
	// Each round's Changed channel is released when the next round takes
	// one and when the reader leaves, so no waiter entry outlives it.
	release := func() {}
	defer func() { release() }()
	for {
		release()
		var changed <-chan struct{}
		changed, release = s.M.Changed(name)
		rr, ok := s.readAt(w, name, off, s.maxRead())
		if !ok {
			return
		}
		if len(rr.Messages) > 0 {
			s.writeRead(w, r, rr, false, true)
			return
		}
		if rr.Closed {
			h := w.Header()
			h.Set(HeaderNextOffset, FormatOffset(rr.Tail))
			h.Set(HeaderUpToDate, "true")
			h.Set(HeaderIncarnation, rr.Incarnation)
			h.Set(HeaderClosed, "true")
			h.Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		expiry, stop := s.expiry(rr.Info)
		select {
		case <-changed:
		case <-expiry:
		case <-deadline.C:
			stop()
			h := w.Header()
			h.Set(HeaderNextOffset, FormatOffset(rr.Tail))
			h.Set(HeaderUpToDate, "true")
			h.Set(HeaderIncarnation, rr.Incarnation)
			h.Set(HeaderCursor, s.cursor(r.URL.Query().Get("cursor")))
			h.Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusNoContent)
			return
		case <-r.Context().Done():
			stop()
			return
		}
		stop()
	}
}

// expiry returns a channel that fires when the stream of info expires (nil
// for one that never does) and a func that stops its timer. A waiting
// reader selects on it because expiry, unlike a delete, is no command and
// closes no Changed channel.
func (s *Server) expiry(info stream.Info) (<-chan time.Time, func()) {
	if info.ExpiresBy == 0 {
		return nil, func() {}
	}
	t := time.NewTimer(time.Duration(info.ExpiresBy-s.now().UnixNano()) + time.Millisecond)
	return t.C, func() { t.Stop() }
}

func (s *Server) sse(w http.ResponseWriter, r *http.Request, name string, off int64) {
	lifetime := s.SSELifetime
	if lifetime <= 0 {
		lifetime = 60 * time.Second
	}
	end := time.NewTimer(lifetime)
	defer end.Stop()
	flusher, _ := w.(http.Flusher)
	started, sentControl := false, false
	var binary bool
	// Every round of writes gets a fresh deadline, and so does the final
	// flush net/http makes after the handler returns.
	defer s.writeDeadline(w)
	// Each round's Changed channel is released when the next round takes
	// one and when the reader leaves, so no waiter entry outlives it.
	release := func() {}
	defer func() { release() }()
	for {
		release()
		var changed <-chan struct{}
		changed, release = s.M.Changed(name)
		rr, o := s.M.Read(name, off, s.maxRead(), s.now().UnixNano())
		s.writeDeadline(w)
		if o != "" {
			if !started {
				httpError(w, statusOf(o), "stream %q: %s", name, o.Text())
			}
			return
		}
		if !started {
			started = true
			h := w.Header()
			h.Set("Content-Type", "text/event-stream")
			h.Set(HeaderIncarnation, rr.Incarnation)
			h.Set("Cache-Control", "no-cache")
			ct := stream.MediaType(rr.ContentType)
			binary = !(strings.HasPrefix(ct, "text/") || ct == "application/json")
			if binary {
				h.Set(HeaderSSEEncoding, "base64")
			}
			w.WriteHeader(http.StatusOK)
		}
		if len(rr.Messages) > 0 {
			writeSSEData(w, rr, binary)
		}
		closedAtEnd := rr.Closed && rr.Next == rr.Tail
		ctl := map[string]any{"streamNextOffset": FormatOffset(rr.Next)}
		if rr.UpToDate {
			ctl["upToDate"] = true
		}
		if closedAtEnd {
			ctl["streamClosed"] = true
		} else {
			ctl["streamCursor"] = s.cursor(r.URL.Query().Get("cursor"))
		}
		// A control event follows every data event; with no data, only the
		// first one (where the reader stands) and the closing one are sent,
		// so a change that added nothing here (a TTL touch) stays silent.
		if len(rr.Messages) > 0 || !sentControl || closedAtEnd {
			cb, _ := json.Marshal(ctl)
			fmt.Fprintf(w, "event: control\ndata:%s\n\n", cb)
			sentControl = true
		}
		if flusher != nil {
			flusher.Flush()
		}
		if closedAtEnd {
			return
		}
		off = rr.Next
		if !rr.UpToDate {
			continue
		}
		expiry, stop := s.expiry(rr.Info)
		select {
		case <-changed:
		case <-expiry:
		case <-end.C:
			stop()
			return
		case <-r.Context().Done():
			stop()
			return
		}
		stop()
	}
}

func writeSSEData(w io.Writer, rr stream.ReadResult, binary bool) {
	var text string
	if binary {
		text = base64.StdEncoding.EncodeToString(body(rr))
	} else {
		text = string(body(rr))
	}
	var b strings.Builder
	b.WriteString("event: data\n")
	// Every line of the payload gets its own data: field, so that no byte
	// of the payload can end the event (CR, LF and CRLF all end an SSE line).
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	for _, line := range strings.Split(text, "\n") {
		b.WriteString("data:")
		if strings.HasPrefix(line, " ") {
			b.WriteString(" ") // the reader strips one leading space
		}
		b.WriteString(line)
		b.WriteString("\n")
	}
	b.WriteString("\n")
	io.WriteString(w, b.String())
}
