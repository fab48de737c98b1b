package node

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestForwardWaitsOutElection kills the leader and at once sends an append
// and a read to a follower that still believes the dead voter leads. The
// follower's connection to it is refused, so the request certainly never
// reached it; the follower waits for the new leader (at most 5s) and
// forwards there, so both answers are 200 instead of 502 + Retry-After.
// Reference: Raft §5.2 (a follower learns of a new leader after an
// election); chapter "The epoch-fenced stream".
func TestForwardWaitsOutElection(t *testing.T) {
	c, err := Start(Options{Voters: 3}) // hashicorp/raft's timing: 1s heartbeat timeout
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	leader, err := c.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var f *Node
	for _, nd := range c.Nodes {
		if nd != leader {
			f = nd
			break
		}
	}
	if r := mustDo(t, "PUT", f.URL+"/v1/stream/db", map[string]string{"Content-Type": "text/plain"}, ""); r.StatusCode != 201 {
		t.Fatalf("PUT via follower: %s", r.Status)
	}
	if r := post(t, f.URL, 1, 0, "a"); r.StatusCode != 200 {
		t.Fatalf("append via follower: %s", r.Status)
	}
	leader.http.Close()
	leader.Group.Close()
	if id, _ := f.Group.Leader(); id != leader.ID {
		t.Logf("follower %s already knows leader %q (not the dead %s): the test shows less", f.ID, id, leader.ID)
	}
	start := time.Now()
	if r := post(t, f.URL, 1, 1, "b"); r.StatusCode != 200 {
		t.Errorf("append via follower right after the leader died: %s (Retry-After %q), want 200", r.Status, r.Header.Get("Retry-After"))
	}
	resp, err := http.Get(f.URL + "/v1/stream/db?offset=-1")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "ab" {
		t.Errorf("read via follower after the election: %s %q, want 200 \"ab\"", resp.Status, strings.TrimSpace(string(b)))
	}
	t.Logf("answered after %v (the election)", time.Since(start).Round(100*time.Millisecond))
}
