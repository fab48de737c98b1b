package node

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ownership-book/ownership/examples/replica"
	"github.com/ownership-book/ownership/internal/freeport"
)

// TestJoinRefusesLostVoter: voter C of a group of three, each voter its own
// Cluster with a data directory as streamd -id runs them, loses its data
// directory and is started again with Join (streamd -join) while the group
// still counts it. Start must fail, wrapping ErrStillVoter, before Raft
// starts: a voter with an empty log that the group counts grants its vote
// to any candidate, so with one more fault a candidate missing acknowledged
// appends could win. Once C is removed from the group, the same Start
// succeeds, Join adds it, and it reaches the stream the group holds. A
// voter with state that is started with Join is not checked.
// Reference: Diego Ongaro and John Ousterhout, 2014, §5.4.1 (the election
// restriction counts on every voter keeping its log); etcd's initial
// cluster state ("new" against "existing").
func TestJoinRefusesLostVoter(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a group of three")
	}
	ids := []string{"A", "B", "C"}
	dir := t.TempDir()
	var peers []replica.Peer
	for _, id := range ids {
		addr, err := freeport.Pick("127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		peers = append(peers, replica.Peer{ID: id, Address: addr})
	}
	opts := func(i int) Options {
		return Options{ID: ids[i], Dir: filepath.Join(dir, ids[i]), RaftAddr: peers[i].Address, HTTPAddr: "127.0.0.1:0",
			HeartbeatTimeout: 200 * time.Millisecond, ElectionTimeout: 200 * time.Millisecond, LeaderLeaseTimeout: 100 * time.Millisecond}
	}
	voters := make([]*Cluster, 3)
	for i := range voters {
		o := opts(i)
		o.Peers, o.Bootstrap = peers, true
		c, err := Start(o)
		if err != nil {
			t.Fatal(err)
		}
		voters[i] = c
		defer func() { voters[i].Close() }()
	}
	base := voters[0].Nodes[0].URL
	createOK(t, base)
	for seq, data := range []string{"a ", "b "} {
		appendOK(t, base, 1, seq, data)
	}
	// A follower, the victim, has the appends; then it stops and its disk
	// is lost.
	all := &Cluster{}
	for _, c := range voters {
		all.Nodes = append(all.Nodes, c.Nodes...)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	leader, err := all.Leader(ctx) // waits on the three voters' views
	if err != nil {
		t.Fatal(err)
	}
	v := 2
	if leader.ID == ids[v] {
		v = 1
	}
	waitApplied(t, voters[v].Nodes[0], leader.Group.Status().Applied)
	if err := voters[v].Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(opts(v).Dir); err != nil {
		t.Fatal(err)
	}
	lost := opts(v)
	lost.Join = leader.URL
	c, err := Start(lost)
	if err == nil {
		voters[v] = c
		t.Fatalf("voter %s started empty with Join while the group counts it as a voter", ids[v])
	}
	if !errors.Is(err, ErrStillVoter) || !strings.Contains(err.Error(), "voter "+ids[v]) {
		t.Fatalf("Start: %v; want an error wrapping ErrStillVoter naming voter %s", err, ids[v])
	}
	voters[v] = &Cluster{}

	resp, _, _ := retrying(t, func() *http.Request {
		req, _ := http.NewRequest(http.MethodDelete, leader.URL+AdminPrefix+"/voters/"+ids[v], nil)
		return req
	})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE voter %s: %s", ids[v], resp.Status)
	}
	if c, err = Start(lost); err != nil {
		t.Fatalf("Start after %s was removed: %v", ids[v], err)
	}
	voters[v] = c
	if err := Join(t.Context(), leader.URL, ids[v], peers[v].Address); err != nil {
		t.Fatal(err)
	}
	appendOK(t, leader.URL, 1, 2, "c ")
	waitApplied(t, c.Nodes[0], leader.Group.Status().Applied)
	rr, o := c.Nodes[0].Machine.Read("db", 0, 1<<20, time.Now().UnixNano())
	var got string
	for _, m := range rr.Messages {
		got += string(m)
	}
	if o != "" || got != "a b c " {
		t.Errorf("%s after joining holds %q (%s), want %q", ids[v], got, o, "a b c ")
	}

	// Restarted with its state and the same Join, the voter is not
	// checked (the group counts it, and it keeps its log).
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if c, err = Start(lost); err != nil {
		t.Fatalf("restart of %s with its state and Join: %v", ids[v], err)
	}
	voters[v] = c
}
