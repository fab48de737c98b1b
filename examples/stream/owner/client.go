package owner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Header and parameter names of the stream protocol. The producer headers are
// Durable Streams' (PROTOCOL.md, section 5.2.1 "Idempotent Producers"); the
// outcome, closed-epoch, incarnation and leader-read names are the
// epoch-fenced stream's extensions (package stream).
const (
	HeaderProducerID    = "Producer-Id"
	HeaderProducerEpoch = "Producer-Epoch"
	HeaderProducerSeq   = "Producer-Seq"
	HeaderExpectedSeq   = "Producer-Expected-Seq"
	HeaderOutcome       = "Producer-Outcome"
	HeaderClosedEpoch   = "Producer-Closed-Epoch"
	HeaderClosedSeq     = "Producer-Closed-Seq"
	HeaderIncarnation   = "Stream-Incarnation"
	HeaderNextOffset    = "Stream-Next-Offset"
	HeaderUpToDate      = "Stream-Up-To-Date"
	HeaderClosed        = "Stream-Closed"
	HeaderFence         = "Stream-Fence"

	// OutcomeEpochClosed is the Producer-Outcome of a 403 for an older epoch.
	OutcomeEpochClosed = "epoch-closed"

	// FenceRequired is the Stream-Fence mode the database's stream is
	// created with: once a producer has written, the stream refuses every
	// append without producer headers, so a writer that does not take part
	// in the claims cannot write past the owner. The database itself only
	// ever appends with producer headers.
	FenceRequired = "required"
	// FenceNone is the Stream-Fence mode of a stream without the fence
	// mode: the protocol's behaviour.
	FenceNone = "none"

	// streamContentType is the content type the database's stream is created
	// with; its bytes are newline-delimited JSON records.
	streamContentType = "application/octet-stream"

	// startOffset is the Durable Streams offset of a stream's beginning.
	startOffset = "-1"
)

// ErrUnreachable is wrapped by every error that means the stream could not be
// reached, or its answer was lost: the request may or may not have applied.
var ErrUnreachable = errors.New("stream unreachable")

// Client speaks the stream's HTTP protocol for one stream and one producer
// id. Base is the server's root URL (such as "http://127.0.0.1:8080"), Name
// the stream's name (the path is /v1/stream/<Name>). HTTP defaults to
// http.DefaultClient; tests put a RoundTripper in it that drops requests or
// answers.
type Client struct {
	Base       string
	Name       string
	ProducerID string
	HTTP       *http.Client
	// LeaderRead, if set, marks a read as a leader read (linearizable). It
	// defaults to adding the query parameter leader=1.
	LeaderRead func(*http.Request)
}

// AppendResult is the stream's answer to one append.
type AppendResult struct {
	Status int // 200 applied, 204 duplicate, 403, 409, 412, 413, ...
	// Outcome is the Producer-Outcome header ("epoch-closed" on a fence).
	Outcome string
	// Epoch is the producer's current epoch as the answer names it
	// (Producer-Epoch), 0 if absent.
	Epoch uint64
	// ExpectedSeq is Producer-Expected-Seq of a 409, -1 if absent.
	ExpectedSeq int64
	// ClosedEpoch and ClosedSeq are, for an applied claim, the epoch the claim
	// closed and the last sequence number applied in it (-1 if not named).
	ClosedEpoch, ClosedSeq int64
	// NextOffset is Stream-Next-Offset after the append, "" if absent.
	NextOffset string
	// Incarnation is the stream's current incarnation token, "" if absent.
	Incarnation string
	// Closed is Stream-Closed: true, the stream takes no more appends
	// (PROTOCOL.md 4.1); on a 409 it is the refusal's reason.
	Closed bool
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

func (c *Client) url() string {
	return strings.TrimRight(c.Base, "/") + "/v1/stream/" + url.PathEscape(c.Name)
}

// Create creates the stream if it does not exist (PUT, 201 or 200), with
// Stream-Fence: required. A stream that exists without that mode (created
// by an earlier version of this package, or by hand) answers such a PUT
// with 409; Create then asks again with Stream-Fence: none (not without the
// header, which a server started with -fence-default required would take
// as required) and, on a 200, uses the stream as it is, without the mode,
// since the mode of an existing stream cannot change. It returns an error
// wrapping ErrUnreachable on a transport failure, and an error naming the
// status for any other answer, such as a 409 to both PUTs (a stream of
// another content type).
func (c *Client) Create(ctx context.Context) error {
	err := c.create(ctx, FenceRequired)
	if errors.Is(err, errCreateConflict) {
		err = c.create(ctx, FenceNone)
	}
	return err
}

// errCreateConflict is wrapped by create's error for a 409.
var errCreateConflict = errors.New("stream exists with another configuration")

func (c *Client) create(ctx context.Context, fence string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, c.url(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", streamContentType)
	if fence != "" {
		req.Header.Set(HeaderFence, fence)
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return fmt.Errorf("create stream %q: %w: %v", c.Name, ErrUnreachable, err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode >= 500 {
		return fmt.Errorf("create stream %q: %w: status %d", c.Name, ErrUnreachable, resp.StatusCode)
	}
	if resp.StatusCode == http.StatusConflict {
		return fmt.Errorf("create stream %q: %w: status %d", c.Name, errCreateConflict, resp.StatusCode)
	}
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return fmt.Errorf("create stream %q: status %d", c.Name, resp.StatusCode)
	}
	return nil
}

// Append appends body under (epoch, seq) with the incarnation token (none if
// empty). A 2xx, 3xx or 4xx status is a result, not an error; the error
// wraps ErrUnreachable when no answer arrived or the answer was a 5xx, whose
// outcome is unknown.
func (c *Client) Append(ctx context.Context, epoch, seq uint64, incarnation string, body []byte) (AppendResult, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url(), bytes.NewReader(body))
	if err != nil {
		return AppendResult{}, err
	}
	req.Header.Set("Content-Type", streamContentType)
	req.Header.Set(HeaderProducerID, c.ProducerID)
	req.Header.Set(HeaderProducerEpoch, strconv.FormatUint(epoch, 10))
	req.Header.Set(HeaderProducerSeq, strconv.FormatUint(seq, 10))
	if incarnation != "" {
		req.Header.Set(HeaderIncarnation, incarnation)
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return AppendResult{}, fmt.Errorf("append epoch %d seq %d to %q: %w: %v", epoch, seq, c.Name, ErrUnreachable, err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode >= 500 {
		// The stream could not say what became of the append (no leader,
		// an outcome the Raft group does not know): as good as no answer.
		return AppendResult{}, fmt.Errorf("append epoch %d seq %d to %q: %w: status %d", epoch, seq, c.Name, ErrUnreachable, resp.StatusCode)
	}
	h := resp.Header
	return AppendResult{
		Status:      resp.StatusCode,
		Outcome:     h.Get(HeaderOutcome),
		Epoch:       parseUint(h.Get(HeaderProducerEpoch)),
		ExpectedSeq: parseInt(h.Get(HeaderExpectedSeq)),
		ClosedEpoch: parseInt(h.Get(HeaderClosedEpoch)),
		ClosedSeq:   parseInt(h.Get(HeaderClosedSeq)),
		NextOffset:  h.Get(HeaderNextOffset),
		Incarnation: h.Get(HeaderIncarnation),
		Closed:      h.Get(HeaderClosed) == "true",
	}, nil
}

// ReadResult is one chunk of the stream, as one catch-up GET returns it
// (PROTOCOL.md section 5.6 "Read Stream - Catch-up").
type ReadResult struct {
	Data       []byte // the bytes after the offset read, possibly not all
	NextOffset string // Stream-Next-Offset: where the next read starts
	// UpToDate is true when the chunk reaches the stream's tail
	// (Stream-Up-To-Date, or an empty answer).
	UpToDate    bool
	Incarnation string // Stream-Incarnation, "" if absent
}

// Read returns the stream's bytes after offset, an opaque token from an
// earlier answer's Stream-Next-Offset ("-1" for the stream's beginning).
// A leader read is answered by the stream's leader after it confirmed its
// leadership, so it sees every append acknowledged before it started.
func (c *Client) Read(ctx context.Context, offset string, leader bool) (ReadResult, error) {
	u := c.url() + "?offset=" + url.QueryEscape(offset)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return ReadResult{}, err
	}
	if leader {
		if c.LeaderRead != nil {
			c.LeaderRead(req)
		} else {
			q := req.URL.Query()
			q.Set("leader", "1")
			req.URL.RawQuery = q.Encode()
		}
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return ReadResult{}, fmt.Errorf("read %q at %s: %w: %v", c.Name, offset, ErrUnreachable, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return ReadResult{}, fmt.Errorf("read %q at %s: %w: %v", c.Name, offset, ErrUnreachable, err)
	}
	if resp.StatusCode >= 500 {
		return ReadResult{}, fmt.Errorf("read %q at %s: %w: status %d", c.Name, offset, ErrUnreachable, resp.StatusCode)
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNoContent {
		return ReadResult{}, fmt.Errorf("read %q at %s: status %d", c.Name, offset, resp.StatusCode)
	}
	next := resp.Header.Get(HeaderNextOffset)
	if next == "" {
		next = offset
	}
	_, upToDate := resp.Header[http.CanonicalHeaderKey(HeaderUpToDate)]
	return ReadResult{Data: data, NextOffset: next, UpToDate: upToDate || len(data) == 0,
		Incarnation: resp.Header.Get(HeaderIncarnation)}, nil
}

// readAll reads from offset until the stream says it is up to date.
func (c *Client) readAll(ctx context.Context, offset string, leader bool) ([]byte, string, string, error) {
	var all []byte
	inc := ""
	for i := 0; ; i++ {
		r, err := c.Read(ctx, offset, leader)
		if err != nil {
			return nil, "", "", err
		}
		all = append(all, r.Data...)
		if r.Incarnation != "" {
			inc = r.Incarnation
		}
		if r.UpToDate || r.NextOffset == offset || i > 1<<16 {
			return all, r.NextOffset, inc, nil
		}
		offset = r.NextOffset
	}
}

func parseUint(s string) uint64 {
	v, _ := strconv.ParseUint(s, 10, 64)
	return v
}

func parseInt(s string) int64 {
	if s == "" {
		return -1
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return -1
	}
	return v
}
