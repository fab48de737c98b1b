package service

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ownership-book/ownership/examples/ownership"
)

// Client calls the ownership service as the node its certificate names. It
// knows the addresses ("host:port") of every voter and sends each request to
// the first that answers as leader. It retries a transition only when it is
// sure the request did not take effect: a refused connection, a write the
// kernel refused because the voter had already closed or reset the
// connection (a pooled connection to a voter that was killed), or a voter
// that answered "not the leader". Any other failure of a transition is
// returned, because it may have happened even though its reply was lost;
// read the state before trying again. Reads (State, Validate) change
// nothing, so they are also retried on the next voter after any transport
// failure of the connection itself (one a killed voter left in the pool:
// "broken pipe", "connection reset", EOF).
//
// Retries stop when the context ends or, for a context without a deadline,
// after MaxRetryWait; the error then matches ErrUnavailable, and nothing was
// proposed.
type Client struct {
	addrs []string
	http  *http.Client
	next  atomic.Int64 // index of the voter to try first
}

// MaxRetryWait bounds how long a Client keeps retrying a request that no
// voter has accepted (refused connections, "not the leader" answers) when
// the caller's context has no deadline. It is several election timeouts,
// so a leader change does not exhaust it, while a service that is down
// makes a call fail within seconds instead of hanging.
const MaxRetryWait = 5 * time.Second

// NewClient returns a client that presents cert (issued by a) and trusts
// only servers certified by a.
func NewClient(a *Authority, cert tls.Certificate, addrs ...string) *Client {
	// The transport dials through package net, as on a host; in a browser
	// page (js/wasm) a transport without a dialer would send requests
	// through the browser's fetch, not to the page's own servers.
	tr := &http.Transport{DialContext: (&net.Dialer{}).DialContext, TLSClientConfig: ClientTLS(a, cert), ForceAttemptHTTP2: true}
	return &Client{addrs: addrs, http: &http.Client{Transport: tr, Timeout: 10 * time.Second}}
}

// Close releases the client's idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// ANCHOR: client_begin

// BeginTransfer asks to hand actor to the node to, as the owner at epoch.
// It returns the new state, Transferring(me, to, epoch, epoch+1), or an
// *Error naming the broken rule.
func (c *Client) BeginTransfer(ctx context.Context, actor ownership.ActorID, epoch ownership.Epoch, to ownership.NodeID) (ownership.State, error) {
	var resp StateResponse
	if err := c.call(ctx, PathBeginTransfer, BeginTransferRequest{Actor: actor, Epoch: epoch, To: to}, &resp); err != nil {
		return nil, err
	}
	return resp.State.State()
}

// ANCHOR_END: client_begin

// CompleteRelease confirms, as the outgoing owner that owned actor at epoch,
// that it has stopped acting. It returns the new state, Unowned(epoch+1, to).
func (c *Client) CompleteRelease(ctx context.Context, actor ownership.ActorID, epoch ownership.Epoch) (ownership.State, error) {
	var resp StateResponse
	if err := c.call(ctx, PathCompleteRelease, CompleteReleaseRequest{Actor: actor, Epoch: epoch}, &resp); err != nil {
		return nil, err
	}
	return resp.State.State()
}

// Acquire takes actor at the free epoch, as its intended owner, and returns
// the new owner's token.
func (c *Client) Acquire(ctx context.Context, actor ownership.ActorID, epoch ownership.Epoch) (ownership.Token, error) {
	var resp AcquireResponse
	if err := c.call(ctx, PathAcquire, AcquireRequest{Actor: actor, Epoch: epoch}, &resp); err != nil {
		return ownership.Token{}, err
	}
	return resp.Token, nil
}

// State returns actor's current state, read through the leader.
func (c *Client) State(ctx context.Context, actor ownership.ActorID) (ownership.State, error) {
	var resp StateResponse
	if err := c.call(ctx, PathState, StateRequest{Actor: actor}, &resp); err != nil {
		return nil, err
	}
	return resp.State.State()
}

// Validate asks whether t passes its actor's fence check. It implements
// FenceChecker.
func (c *Client) Validate(ctx context.Context, t ownership.Token) (Validity, error) {
	var v Validity
	err := c.call(ctx, PathValidate, ValidateRequest{Token: t}, &v)
	return v, err
}

// Post sends body as is to path and returns the HTTP status and the decoded
// *Error, if the server refused. It exists to send malformed requests in
// tests and demonstrations; use the typed methods otherwise.
func (c *Client) Post(ctx context.Context, path string, body []byte) (int, error) {
	if len(c.addrs) == 0 {
		return 0, errNoAddrs(path)
	}
	status, _, data, err := c.roundTrip(ctx, c.addrs[int(c.next.Load())%len(c.addrs)], path, body)
	if err != nil {
		return 0, err
	}
	if status == http.StatusOK {
		return status, nil
	}
	return status, decodeError(status, data)
}

// brokenConn reports whether err is a connection the peer closed or reset
// (a voter killed or restarted), not a refusal such as a certificate error.
func brokenConn(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// readOnly lists the paths whose requests change no state.
var readOnly = map[string]bool{PathState: true, PathValidate: true}

func (c *Client) call(ctx context.Context, path string, req, resp any) error {
	if len(c.addrs) == 0 {
		return errNoAddrs(path)
	}
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	var last error
	_, bounded := ctx.Deadline()
	giveUp := time.Now().Add(MaxRetryWait)
	for attempt := 0; ; attempt++ {
		if attempt > 0 && attempt%len(c.addrs) == 0 {
			if !bounded && time.Now().After(giveUp) {
				return &Error{Code: CodeUnavailable, Rule: "a request goes to the Raft leader, and nothing is proposed until one accepts it",
					Detail: fmt.Sprintf("%s: no voter of %v accepted the request within %v (last: %v)", path, c.addrs, MaxRetryWait, last)}
			}
			select { // every voter refused or pointed elsewhere: wait for an election
			case <-ctx.Done():
				return fmt.Errorf("%s: %w (last: %w)", path, ctx.Err(), last)
			case <-time.After(50 * time.Millisecond):
			}
		}
		i := (int(c.next.Load()) + attempt) % len(c.addrs)
		status, retryAfter, data, err := c.roundTrip(ctx, c.addrs[i], path, body)
		if err != nil {
			var op *net.OpError
			if errors.As(err, &op) && (op.Op == "dial" || op.Op == "write" && brokenConn(err)) && ctx.Err() == nil {
				last = err
				continue // never sent (no connection, or the peer had closed it before the request's write): safe to try another voter
			}
			if readOnly[path] && brokenConn(err) && ctx.Err() == nil {
				last = err
				continue // a read changes nothing: safe to send again
			}
			return fmt.Errorf("%s: %w", path, err)
		}
		if status != http.StatusOK {
			e := decodeError(status, data)
			if errors.Is(e, ErrNotLeader) && ctx.Err() == nil {
				last = e
				continue // refused before it was proposed: safe to retry
			}
			if status == http.StatusServiceUnavailable && retryAfter != "" && ctx.Err() == nil {
				// A 503 with Retry-After proposed nothing (a leadership
				// transfer): wait as asked (at most 5 s) and retry.
				last = e
				wait := time.Second
				if n, err := strconv.Atoi(retryAfter); err == nil && n >= 0 {
					wait = time.Duration(min(n, 5)) * time.Second
				}
				select {
				case <-ctx.Done():
					return fmt.Errorf("%s: %w (last: %w)", path, ctx.Err(), last)
				case <-time.After(wait):
				}
				continue
			}
			return e
		}
		c.next.Store(int64(i))
		if err := json.Unmarshal(data, resp); err != nil {
			return fmt.Errorf("%s: decoding response: %w", path, err)
		}
		return nil
	}
}

func errNoAddrs(path string) error {
	return fmt.Errorf("%s: the client has no voter addresses (NewClient was given none)", path)
}

// roundTrip posts body to addr's path and returns the status, the
// Retry-After header ("" when absent) and the body.
func (c *Client) roundTrip(ctx context.Context, addr, path string, body []byte) (int, string, []byte, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+addr+path, bytes.NewReader(body))
	if err != nil {
		return 0, "", nil, err
	}
	r.Header.Set("Content-Type", "application/json")
	res, err := c.http.Do(r)
	if err != nil {
		return 0, "", nil, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	return res.StatusCode, res.Header.Get("Retry-After"), data, err
}

func decodeError(status int, data []byte) error {
	var e struct {
		Error *Error `json:"error"`
	}
	if err := json.Unmarshal(data, &e); err != nil || e.Error == nil {
		return fmt.Errorf("HTTP %d: %q", status, bytes.TrimSpace(data))
	}
	return e.Error
}
