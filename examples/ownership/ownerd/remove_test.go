package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ownership-book/ownership/examples/ownership"
	"github.com/ownership-book/ownership/examples/ownership/service"
)

// TestRemoveLeader: DELETE /v1/cluster/voters/<leader> on the leader's own
// admin address hands its leadership to another voter and answers 421
// naming it (a change runs on the leader); the same DELETE there removes
// the old leader, now a follower, which then reports Removed (serveVoter
// stops on it). The owner record acknowledged before (x held by A) is
// served by the two voters left, which keep taking transitions.
// Reference: hashicorp/raft RemoveServer and LeadershipTransfer; Ongaro's
// dissertation, §3.10 and §4.2.2.
func TestRemoveLeader(t *testing.T) {
	c, err := startCluster(3, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := c.waitLeader(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.coordinate(ctx, func(s *service.Server) (ownership.State, error) { return s.Create(ctx, "x", "A") }); err != nil {
		t.Fatal(err)
	}
	a, err := c.client("A")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.Acquire(ctx, "x", 1); err != nil {
		t.Fatal(err)
	}
	admin := map[string]*httptest.Server{}
	var old *voter
	for _, v := range c.voters {
		admin[v.id] = httptest.NewServer(adminHandler(v.group))
		defer admin[v.id].Close()
		if v.group.IsLeader() {
			old = v
		}
	}
	if old == nil {
		t.Fatal("no voter leads")
	}
	del := func(on string) (int, string) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, admin[on].URL+"/v1/cluster/voters/"+old.id, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		n, _ := resp.Body.Read(buf)
		b.Write(buf[:n])
		return resp.StatusCode, b.String()
	}
	code, body := del(old.id)
	now, _ := old.group.Leader()
	if code != http.StatusMisdirectedRequest || now == "" || now == old.id || !strings.Contains(body, now) {
		t.Fatalf("DELETE %s on its own admin address: %d %s (leader now %q), want 421 naming another leader", old.id, code, body, now)
	}
	if code, body := del(now); code != http.StatusOK || strings.Contains(body, `"`+old.id+`"`) {
		t.Fatalf("DELETE %s on the new leader %s: %d %s", old.id, now, code, body)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !old.group.Removed() {
		if time.Now().After(deadline) {
			t.Fatalf("voter %s, removed, does not report Removed after 5s (%+v)", old.id, old.group.Status())
		}
		time.Sleep(20 * time.Millisecond)
	}
	s, err := a.State(ctx, "x")
	if err != nil || !strings.Contains(s.String(), "A") {
		t.Fatalf("State(x) after %s's removal: %v %v, want held by A", old.id, s, err)
	}
	if _, err := a.BeginTransfer(ctx, "x", 1, "B"); err != nil {
		t.Fatalf("a transition after %s's removal: %v", old.id, err)
	}
	t.Logf("%s handed over to %s and was removed; x is %v", old.id, now, s)
}
