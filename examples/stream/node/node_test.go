package node

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func post(t *testing.T, base string, epoch, seq int, data string) *http.Response {
	t.Helper()
	resp, _ := send(t, appendRequest(base, epoch, seq, data))
	return resp
}

func appendRequest(base string, epoch, seq int, data string) func() *http.Request {
	return func() *http.Request {
		req, _ := http.NewRequest("POST", base+"/v1/stream/db", strings.NewReader(data))
		req.Header.Set("Content-Type", "text/plain")
		req.Header.Set("Producer-Id", "p")
		req.Header.Set("Producer-Epoch", fmt.Sprint(epoch))
		req.Header.Set("Producer-Seq", fmt.Sprint(seq))
		return req
	}
}

// send sends the request mk builds once and returns the answer, its body
// read and closed.
func send(t *testing.T, mk func() *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(mk())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, b
}

// retryFor bounds how long retrying resends a request.
const retryFor = 30 * time.Second

// retrying sends the request mk builds until the answer is not "try
// again" (a 5xx with Retry-After: the voter lost its leadership, or has
// not yet learned who leads, as happens on a busy machine with the tests'
// short Raft timeouts) and returns it with its body and how many times
// the request was resent. It waits for that condition, not for a fixed
// time: 20 ms between tries, for at most retryFor. Only for requests that
// are safe to resend: a create, a read, or an append with a producer id
// and sequence number (a resent append that was applied is answered 204,
// a duplicate; PROTOCOL.md 5.2.1).
func retrying(t *testing.T, mk func() *http.Request) (*http.Response, []byte, int) {
	t.Helper()
	deadline := time.Now().Add(retryFor)
	for resent := 0; ; resent++ {
		resp, b := send(t, mk)
		if resp.StatusCode < 500 || resp.Header.Get("Retry-After") == "" || time.Now().After(deadline) {
			return resp, b, resent
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// appendOK appends through base, resending while the cluster asks to try
// again, and fails the test unless the append was applied once: 200, or
// 204 (duplicate) for a resend of an append whose first answer was lost.
func appendOK(t *testing.T, base string, epoch, seq int, data string) *http.Response {
	t.Helper()
	resp, _, resent := retrying(t, appendRequest(base, epoch, seq, data))
	if resp.StatusCode != 200 && (resent == 0 || resp.StatusCode != 204) {
		t.Fatalf("append epoch %d seq %d via %s: %s after %d resends", epoch, seq, base, resp.Status, resent)
	}
	return resp
}

// createOK creates stream db through base (resending while the cluster
// asks to try again: a create with the same configuration is idempotent).
func createOK(t *testing.T, base string) {
	t.Helper()
	resp, _, resent := retrying(t, func() *http.Request {
		req, _ := http.NewRequest("PUT", base+"/v1/stream/db", nil)
		req.Header.Set("Content-Type", "text/plain")
		return req
	})
	if resp.StatusCode != 201 && (resent == 0 || resp.StatusCode != 200) {
		t.Fatalf("PUT via %s: %s after %d resends", base, resp.Status, resent)
	}
}

// readAll reads stream db from the start through base, resending while
// the cluster asks to try again.
func readAll(t *testing.T, base string) (*http.Response, string) {
	t.Helper()
	resp, b, _ := retrying(t, func() *http.Request {
		req, _ := http.NewRequest("GET", base+"/v1/stream/db?offset=-1", nil)
		return req
	})
	return resp, string(b)
}

// TestThreeVoters sends every request to a different voter: followers
// forward to the leader, so the fence holds whichever voter a producer
// reaches, and every voter's machine ends with the same state.
// Reference: Diego Ongaro and John Ousterhout, "In Search of an
// Understandable Consensus Algorithm", 2014, §5.3 (every voter applies the
// log in order); chapter "The epoch-fenced stream", section "Where the fence
// is checked".
func TestThreeVoters(t *testing.T) {
	c, err := Start(Options{Voters: 3, HeartbeatTimeout: 100 * time.Millisecond,
		ElectionTimeout: 100 * time.Millisecond, LeaderLeaseTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	url := func(i int) string { return c.Nodes[i%3].URL }
	createOK(t, url(1))
	for seq := 0; seq < 6; seq++ {
		appendOK(t, url(seq), 7, seq, fmt.Sprintf("a%d ", seq))
	}
	r := appendOK(t, url(2), 8, 0, "b0 ")
	if r.StatusCode == 200 && (r.Header.Get("Producer-Closed-Epoch") != "7" || r.Header.Get("Producer-Closed-Seq") != "5") {
		t.Fatalf("claim: %s closed %s/%s", r.Status, r.Header.Get("Producer-Closed-Epoch"), r.Header.Get("Producer-Closed-Seq"))
	}
	for i := range 3 {
		if r, _, _ := retrying(t, appendRequest(url(i), 7, 6, "late ")); r.StatusCode != 403 || r.Header.Get("Producer-Outcome") != "epoch-closed" {
			t.Errorf("stale append via voter %d: %s %q", i, r.Status, r.Header.Get("Producer-Outcome"))
		}
	}
	// Every voter converges on the same state.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		s0, _ := c.Nodes[0].Machine.Snapshot()
		s1, _ := c.Nodes[1].Machine.Snapshot()
		s2, _ := c.Nodes[2].Machine.Snapshot()
		if bytes.Equal(s0, s1) && bytes.Equal(s1, s2) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("voters did not converge in 10s")
		case <-time.After(10 * time.Millisecond):
		}
	}
	// A read via a follower is a leader read: it sees the claim.
	if _, got := readAll(t, url(1)); got != "a0 a1 a2 a3 a4 a5 b0 " {
		t.Errorf("read via B: %q", got)
	}
}
