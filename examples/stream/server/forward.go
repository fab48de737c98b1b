package server

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync/atomic"
)

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
