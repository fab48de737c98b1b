package main

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// The Raft port is a way into the owner record that bypasses the wire
// methods: whoever can speak Raft to a voter can depose its leader with a
// higher term, or send log entries that carry any caller. So voters speak
// Raft to each other only over mutual TLS with voter certificates. Here a
// stranger with a plain Raft transport sends AppendEntries with a term far
// ahead: the voter must not answer, and its term must not move. Before the
// fix the transport was plain TCP, the voter adopted the stranger's term
// and its leader stepped down.
// Reference: chapter "The ownership service", section "The owner record in
// Raft".
func TestRaftPortRefusesAStranger(t *testing.T) {
	c, err := startCluster(1, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.waitLeader(ctx); err != nil {
		t.Fatal(err)
	}
	v := c.voters[0]
	before := v.group.Status().Term
	stranger, err := raft.NewTCPTransport("127.0.0.1:0", nil, 1, 2*time.Second, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer stranger.Close()
	req := &raft.AppendEntriesRequest{
		RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("mallory"), Addr: []byte(stranger.LocalAddr())},
		Term:      before + 100,
	}
	var resp raft.AppendEntriesResponse
	err = stranger.AppendEntries(raft.ServerID(v.id), raft.ServerAddress(v.raftAddr), req, &resp)
	if err == nil {
		t.Errorf("the voter answered a stranger's AppendEntries (its term is now %d)", resp.Term)
	}
	if after := v.group.Status().Term; after >= req.Term {
		t.Fatalf("a stranger moved the voter's term from %d to %d", before, after)
	}
}
