// Command streamd serves epoch-fenced streams over HTTP with the Durable
// Streams protocol on /v1/stream/<name>, replicated by a Raft group of one
// voter or three (all in this process, on loopback).
//
//	go run ./examples/stream/streamd                       # one voter on 127.0.0.1:4437
//	go run ./examples/stream/streamd -cluster 3            # voters A, B, C on :4437, :4438, :4439
//	go run ./examples/stream/streamd -data /var/lib/streamd -raft-addr 127.0.0.1:7437
//
// Any voter may be asked. A follower forwards the request, body included,
// to the leader and copies the leader's answer back. Every read (catch-up,
// long-poll, SSE, HEAD) is a leader read: the leader confirms with a quorum
// that it still leads and applies everything committed before answering
// (chapter "The epoch-fenced stream", section "Which reads are leader reads").
// Stop it with Ctrl-C.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ownership-book/ownership/examples/stream/node"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:4437", "HTTP address of voter A (B and C take the next ports; port 0: free ports)")
	raftAddr := flag.String("raft-addr", "127.0.0.1:0", "Raft transport address of voter A (B and C take the next ports; port 0: free ports); with -data, the addresses of the first start are kept in DIR/raft-peers and reused on restart")
	data := flag.String("data", "", "data directory: Raft log, stable store and snapshots per voter, and the voters' Raft addresses (raft-peers) (\"\": in memory)")
	cluster := flag.Int("cluster", 1, "number of voters: 1 or 3")
	longPoll := flag.Duration("long-poll", 20*time.Second, "how long a long-poll read waits for data")
	maxBody := flag.Int64("max-body", 1<<20, "largest request body in bytes (larger: 413)")
	flag.Parse()

	c, err := node.Start(node.Options{Voters: *cluster, Dir: *data, HTTPAddr: *addr, RaftAddr: *raftAddr,
		LongPoll: *longPoll, MaxBody: *maxBody})
	if err != nil {
		log.Fatalf("streamd: %v", err)
	}
	for _, nd := range c.Nodes {
		fmt.Fprintf(os.Stderr, "streamd: voter %s serving on %s/v1/stream/\n", nd.ID, nd.URL)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	if err := c.Close(); err != nil {
		log.Fatalf("streamd: close: %v", err)
	}
}
