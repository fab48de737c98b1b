package service

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/ownership-book/ownership/examples/replica"
)

// transferring is a Proposer whose leader is handing over its leadership
// for the first n calls (hashicorp/raft refuses them with
// ErrLeadershipTransferInProgress), then applies to m directly.
type transferring struct {
	m *Machine
	n atomic.Int64
}

func (p *transferring) Apply(_ context.Context, cmd []byte) ([]byte, error) {
	if p.n.Add(-1) >= 0 {
		return nil, fmt.Errorf("replica: voter v1: %w", replica.ErrLeadershipTransfer)
	}
	return p.m.Apply(cmd), nil
}

func (p *transferring) LeaderRead(context.Context) error {
	if p.n.Load() > 0 {
		return fmt.Errorf("replica: voter v1: %w", replica.ErrLeadershipTransfer)
	}
	return nil
}

// TestTransferAnswers503RetryAfter: a voter in the middle of a leadership
// transfer answers 503 Service Unavailable with Retry-After (nothing was
// proposed; a leader is moments away), not 421 naming itself as leader, and
// the client waits as asked and then succeeds. Reference: RFC 9110 section
// 15.6.4 (503) and 10.2.3 (Retry-After).
func TestTransferAnswers503RetryAfter(t *testing.T) {
	m := NewMachine()
	p := &transferring{m: m}
	e := startEnv(t, newAuthority(t), NewRaftRegistry(p, m))
	if _, err := e.server.Create(ctxT(t), "x", "A"); err != nil {
		t.Fatal(err)
	}
	p.n.Store(1)
	a := e.client("A")
	req, _ := http.NewRequest(http.MethodPost, "https://"+e.addr+PathAcquire, bytes.NewReader([]byte(`{"actor":"x","epoch":1}`)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("during a transfer: %s, Retry-After %q; want 503 with Retry-After", resp.Status, resp.Header.Get("Retry-After"))
	}
	p.n.Store(1)
	if _, err := a.Acquire(ctxT(t), "x", 1); err != nil {
		t.Fatalf("Acquire across a transfer: %v", err)
	}
}
