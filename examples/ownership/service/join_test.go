package service

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ownership-book/ownership/examples/ownership"
	"github.com/ownership-book/ownership/examples/replica"
)

// A voter that lost its log asks the running voters before it joins: while
// the group's configuration lists it, their Raft ports (trusting the
// latest configuration, as ownerd's do) answer its peer certificate and
// CheckNotVoter returns ErrStillVoter; once the leader has removed it, they
// refuse the certificate and it may join. A voter never in the group may
// join at once; with no voter to ask, the check fails rather than passes.
// Reference: Raft §5.4.1 (a voter's log is what elections count on);
// etcd's initial cluster state "existing".
func TestCheckNotVoter(t *testing.T) {
	auth := newAuthority(t)
	var peers []replica.Peer
	var ls []net.Listener
	for _, id := range []string{"v1", "v2", "v3"} {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		peers = append(peers, replica.Peer{ID: id, Address: l.Addr().String()})
	}
	groups := make([]*replica.Group, 3)
	for i, p := range peers {
		cert, err := auth.IssuePeer(ownership.NodeID(p.ID))
		if err != nil {
			t.Fatal(err)
		}
		var g atomic.Pointer[replica.Group]
		tr := NewRaftTransport(auth, cert, ls[i], func() []replica.Peer {
			if g := g.Load(); g != nil {
				if vs, err := g.Voters(); err == nil && len(vs) > 0 {
					return vs
				}
			}
			return peers
		})
		gr, err := replica.Open(replica.Config{
			ID: p.ID, Transport: tr, Voters: peers,
			HeartbeatTimeout: 300 * time.Millisecond, ElectionTimeout: 300 * time.Millisecond,
			LeaderLeaseTimeout: 300 * time.Millisecond,
		}, NewMachine())
		if err != nil {
			t.Fatal(err)
		}
		g.Store(gr)
		groups[i] = gr
		t.Cleanup(func() { gr.Close(); tr.Close() })
	}
	ctx := ctxT(t)
	for _, g := range groups {
		if _, err := g.WaitLeader(ctx); err != nil {
			t.Fatal(err)
		}
	}
	groups[2].Close() // v3 loses its disk
	v3, err := auth.IssuePeer("v3")
	if err != nil {
		t.Fatal(err)
	}
	check := func(d time.Duration) error {
		cctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		return CheckNotVoter(cctx, auth, v3, "v3", peers)
	}
	if err := check(5 * time.Second); !errors.Is(err, ErrStillVoter) {
		t.Fatalf("v3 asks while the group counts it: %v, want ErrStillVoter", err)
	} else {
		t.Logf("before the removal: %v", err)
	}
	for removed := false; !removed; time.Sleep(20 * time.Millisecond) {
		if ctx.Err() != nil {
			t.Fatal("v3 was not removed")
		}
		for _, g := range groups[:2] {
			if g.IsLeader() {
				removed = g.RemoveVoter(ctx, "v3") == nil
			}
		}
	}
	// Followers take the new configuration from the leader's next
	// heartbeat.
	deadline := time.Now().Add(5 * time.Second)
	for err = check(5 * time.Second); err != nil && time.Now().Before(deadline); err = check(5 * time.Second) {
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("v3 asks after its removal: %v, want nil", err)
	}
	v4, err := auth.IssuePeer("v4")
	if err != nil {
		t.Fatal(err)
	}
	with4 := append(peers[:2:2], replica.Peer{ID: "v4", Address: "127.0.0.1:1"})
	if err := CheckNotVoter(ctx, auth, v4, "v4", with4); err != nil {
		t.Fatalf("v4, never a voter: %v, want nil", err)
	}
	cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	gone := []replica.Peer{{ID: "v1", Address: ls[2].Addr().String()}, {ID: "v3", Address: "127.0.0.1:1"}}
	if err := CheckNotVoter(cctx, auth, v3, "v3", gone); err == nil || errors.Is(err, ErrStillVoter) {
		t.Fatalf("no voter to ask: %v, want an error that is not ErrStillVoter", err)
	}
}
