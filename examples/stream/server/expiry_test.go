package server

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ownership-book/ownership/examples/stream"
)

// TestWaitingReadersSeeExpiry puts a long-poll reader and an SSE reader on
// a stream that expires (Stream-Expires-At, then a sliding Stream-TTL)
// while they wait. Expiry is a matter of the clock, not of a command, so
// nothing wakes them; they must still learn of it when it happens: the
// long-poll answers 404 and the SSE response ends, well before their own
// timeouts (long-poll 10s, SSE 60s). Afterwards the machine keeps no
// waiter entry for the stream.
// Reference: PROTOCOL.md 5.1 (an expired stream is treated as deleted).
func TestWaitingReadersSeeExpiry(t *testing.T) {
	m := stream.NewMachine()
	s := &Server{M: m, A: Local{M: m}, LongPoll: 10 * time.Second}
	hs := httptest.NewServer(s)
	defer hs.Close()
	for _, expiry := range []struct{ name, header, value string }{
		{"at", HeaderExpiresAt, time.Now().Add(1500 * time.Millisecond).UTC().Format(time.RFC3339Nano)},
		{"ttl", HeaderTTL, "1"},
	} {
		t.Run(expiry.name, func(t *testing.T) {
			url := hs.URL + Prefix + expiry.name
			req, _ := http.NewRequest("PUT", url, nil)
			req.Header.Set("Content-Type", "text/plain")
			req.Header.Set(expiry.header, expiry.value)
			resp, err := http.DefaultClient.Do(req)
			if err != nil || resp.StatusCode != 201 {
				t.Fatalf("PUT: %v %v", resp, err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
			defer cancel()
			type answer struct {
				what   string
				status int
				body   string
			}
			answers := make(chan answer, 2)
			for _, q := range []string{"offset=now&live=long-poll", "offset=-1&live=sse"} {
				go func() {
					req, _ := http.NewRequestWithContext(ctx, "GET", url+"?"+q, nil)
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						answers <- answer{q, 0, err.Error()}
						return
					}
					b, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if err != nil {
						answers <- answer{q, resp.StatusCode, err.Error()}
						return
					}
					answers <- answer{q, resp.StatusCode, string(b)}
				}()
			}
			for range 2 {
				a := <-answers
				if ctx.Err() != nil {
					t.Fatalf("%s: still waiting 8s after the stream was due to expire", a.what)
				}
				if strings.Contains(a.what, "long-poll") && a.status != 404 {
					t.Errorf("%s: %d %q, want 404 once the stream expired", a.what, a.status, a.body)
				}
				if strings.Contains(a.what, "sse") && a.status != 200 {
					t.Errorf("%s: %d %q, want 200 and an end", a.what, a.status, a.body)
				}
			}
			// Both readers have left and the stream is gone: no waiter
			// entry may stay behind for it (no later command removes it).
			// (Polled briefly: a handler finishes just after its answer.)
			for i := 0; m.Waiting() != 0 && i < 100; i++ {
				time.Sleep(10 * time.Millisecond)
			}
			if n := m.Waiting(); n != 0 {
				t.Errorf("%d streams still have waiters after their readers left", n)
			}
		})
	}
}
