package node

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"
)

// TestRemoveLeader removes the voter that leads, through its own
// membership endpoint, as an operator would: DELETE
// /v1/cluster/voters/<leader>. The leader hands its leadership to another
// voter first and the change is forwarded there, so the answer is 200 with
// a configuration without it; another voter leads at once; the removed
// voter answers 410 Gone instead of serving the stream it no longer hears
// of; and every acknowledged append is still read from the two that are
// left, which keep taking appends. Reference: hashicorp/raft RemoveServer
// and LeadershipTransfer; Ongaro's dissertation, §3.10 and §4.2.2 (removing
// the current leader).
func TestRemoveLeader(t *testing.T) {
	c, err := Start(Options{Voters: 3, HeartbeatTimeout: 200 * time.Millisecond, ElectionTimeout: 200 * time.Millisecond,
		LeaderLeaseTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	old, err := c.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	createOK(t, old.URL)
	for seq, data := range []string{"a", "b", "c"} {
		appendOK(t, old.URL, 1, seq, data)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, old.URL+AdminPrefix+"/voters/"+old.ID, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var v ClusterView
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &v) != nil {
		t.Fatalf("DELETE the leader %s on itself: %s %s, want 200 with the new configuration", old.ID, resp.Status, b)
	}
	for _, p := range v.Voters {
		if p.ID == old.ID {
			t.Fatalf("DELETE the leader %s: the configuration still lists it: %s", old.ID, b)
		}
	}
	if len(v.Voters) != 2 || v.Leader == "" || v.Leader == old.ID {
		t.Fatalf("DELETE the leader %s: %s, want two voters and another leader", old.ID, b)
	}
	var now *Node
	for _, nd := range c.Nodes {
		if nd.ID == v.Leader {
			now = nd
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for !old.Group.Removed() {
		if time.Now().After(deadline) {
			t.Fatalf("voter %s, removed, does not report Removed after 5s (%+v)", old.ID, old.Group.Status())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r := post(t, old.URL, 1, 3, "x"); r.StatusCode != http.StatusGone {
		t.Fatalf("append on the removed voter %s: %s, want 410 Gone", old.ID, r.Status)
	}
	appendOK(t, now.URL, 1, 3, "d")
	for _, nd := range c.Nodes {
		if nd == old {
			continue
		}
		resp, err := http.Get(nd.URL + "/v1/stream/db?offset=-1")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(b) != "abcd" {
			t.Errorf("read via %s after the leader's removal: %s %q, want 200 \"abcd\"", nd.ID, resp.Status, b)
		}
	}
	t.Logf("%s removed itself; %s leads", old.ID, now.ID)
}
