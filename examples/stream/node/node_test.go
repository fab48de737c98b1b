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
	req, _ := http.NewRequest("POST", base+"/v1/stream/db", strings.NewReader(data))
	req.Header.Set("Content-Type", "text/plain")
	req.Header.Set("Producer-Id", "p")
	req.Header.Set("Producer-Epoch", fmt.Sprint(epoch))
	req.Header.Set("Producer-Seq", fmt.Sprint(seq))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
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
	req, _ := http.NewRequest("PUT", url(1)+"/v1/stream/db", nil)
	req.Header.Set("Content-Type", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("PUT via B: %v %v", resp, err)
	}
	for seq := 0; seq < 6; seq++ {
		if r := post(t, url(seq), 7, seq, fmt.Sprintf("a%d ", seq)); r.StatusCode != 200 {
			t.Fatalf("A seq %d via voter %d: %s", seq, seq%3, r.Status)
		}
	}
	r := post(t, url(2), 8, 0, "b0 ")
	if r.StatusCode != 200 || r.Header.Get("Producer-Closed-Epoch") != "7" || r.Header.Get("Producer-Closed-Seq") != "5" {
		t.Fatalf("claim: %s closed %s/%s", r.Status, r.Header.Get("Producer-Closed-Epoch"), r.Header.Get("Producer-Closed-Seq"))
	}
	for i := range 3 {
		if r := post(t, url(i), 7, 6, "late "); r.StatusCode != 403 || r.Header.Get("Producer-Outcome") != "epoch-closed" {
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
	resp, err = http.Get(url(1) + "/v1/stream/db?offset=-1")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if got := string(b); got != "a0 a1 a2 a3 a4 a5 b0 " {
		t.Errorf("read via B: %q", got)
	}
}
