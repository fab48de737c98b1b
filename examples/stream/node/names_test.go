package node

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestRefusedNameThroughFollowerChangesNothing: a name with a NUL, sent to
// a follower, is refused with 400 by the follower itself, and no voter
// holds a stream afterwards. Before the check, the leader created the
// stream and then failed to write a Location header holding the NUL, so
// the client saw 502 from the follower while the state had changed.
func TestRefusedNameThroughFollowerChangesNothing(t *testing.T) {
	c, err := Start(Options{Voters: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	leader, err := c.Leader(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var f *Node
	for _, nd := range c.Nodes {
		if nd != leader {
			f = nd
		}
	}
	for _, path := range []string{"a%00b", "%ff", "x%7F"} {
		req, _ := http.NewRequest(http.MethodPut, f.URL+"/v1/stream/"+path, nil)
		req.Header.Set("Content-Type", "text/plain")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("PUT /v1/stream/%s through follower %s: %s, want 400", path, f.ID, resp.Status)
		}
	}
	// A write that commits after the refused ones: once every voter has
	// applied it, none holds a stream but this one.
	req, _ := http.NewRequest(http.MethodPut, f.URL+"/v1/stream/ok", nil)
	req.Header.Set("Content-Type", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("PUT /v1/stream/ok: %s", resp.Status)
	}
	if loc := resp.Header.Get("Location"); !strings.HasPrefix(loc, "http://127.0.0.1:") || !strings.HasSuffix(loc, "/v1/stream/ok") {
		t.Errorf("Location %q: want a voter's URL and the path", loc)
	}
	for _, nd := range c.Nodes {
		waitApplied(t, nd, leader.Group.Status().Applied)
		for _, name := range []string{"a\x00b", "\xff", "\uFFFD", "x\x7f"} {
			if _, o := nd.Machine.Stat(name, time.Now().UnixNano()); o == "" {
				t.Errorf("voter %s holds a stream %q after the refused requests", nd.ID, name)
			}
		}
		if _, o := nd.Machine.Stat("ok", time.Now().UnixNano()); o != "" {
			t.Errorf("voter %s: stream ok: %s", nd.ID, o)
		}
	}
}

// waitApplied waits up to 5s until nd has applied index i.
func waitApplied(t *testing.T, nd *Node, i uint64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for nd.Group.Status().Applied < i {
		if time.Now().After(deadline) {
			t.Fatalf("voter %s has not applied index %d after 5s", nd.ID, i)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
