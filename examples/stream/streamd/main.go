// Command streamd serves epoch-fenced streams over HTTP with the Durable
// Streams protocol on /v1/stream/<name>, replicated by a Raft group: one
// voter or three in this process (on loopback), or one voter per process,
// on as many hosts as there are voters.
//
//	go run ./examples/stream/streamd                       # one voter on 127.0.0.1:4437
//	go run ./examples/stream/streamd -cluster 3            # voters A, B, C on :4437, :4438, :4439
//	go run ./examples/stream/streamd -data /var/lib/streamd -raft-addr 127.0.0.1:7437
//
// One voter per process (here three on one host; on three hosts use each
// host's address):
//
//	streamd -id A -addr 127.0.0.1:4437 -raft-addr 127.0.0.1:7437 -data a \
//	        -peers A=127.0.0.1:7437,B=127.0.0.1:7438,C=127.0.0.1:7439 -bootstrap
//	streamd -id B -addr 127.0.0.1:4438 -raft-addr 127.0.0.1:7438 -data b -peers …same list… -bootstrap
//	streamd -id C -addr 127.0.0.1:4439 -raft-addr 127.0.0.1:7439 -data c -peers …same list… -bootstrap
//
// -peers names the group's voters (every voter gets the same list).
// -bootstrap, on the group's first start only, bootstraps it from that
// list; every later start leaves it out. A voter whose -data holds no Raft
// state and that is not told -bootstrap refuses to start: its group
// exists, and a voter that lost its log must not vote as if it had one (it
// is removed and joins again). A voter started with
// -join URL and no -peers asks the group, through the voter at URL, to add
// it (hashicorp/raft AddVoter on the leader). If it has no Raft state, it
// first reads the group's configuration at URL and refuses to start while
// the group still counts it: a voter the group counts whose log is lost
// must not vote with an empty one. DELETE /v1/cluster/voters/<id>
// on any voter removes one (RemoveServer). GET /v1/cluster shows the
// configuration. See node.AdminPrefix.
//
// Any voter may be asked. A follower forwards the request, body included,
// to the leader and copies the leader's answer back; a leader records its
// HTTP URL in the Raft log, so followers in other processes know where to
// forward. Every read (catch-up, long-poll, SSE, HEAD) is a leader read: the
// leader confirms with a quorum that it still leads and applies everything
// committed before answering (chapter "The epoch-fenced stream", section
// "Which reads are leader reads"). Stop it with Ctrl-C.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ownership-book/ownership/examples/replica"
	"github.com/ownership-book/ownership/examples/stream/node"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:4437", "HTTP address (with -cluster 3: of voter A; B and C take the next ports; port 0: free ports)")
	raftAddr := flag.String("raft-addr", "127.0.0.1:0", "Raft transport address (with -cluster 3: of voter A, B and C take the next ports; port 0: free ports); with -data and no -id, the addresses of the first start are kept in DIR/raft-peers and reused on restart; with -id, a fixed port")
	data := flag.String("data", "", "data directory: Raft log, stable store and snapshots (per voter in DIR/<id> unless -id) (\"\": in memory)")
	cluster := flag.Int("cluster", 1, "number of voters in this process: 1 or 3 (not with -id)")
	id := flag.String("id", "", "run one voter of a group spanning processes: this voter's ID (e.g. A)")
	peers := flag.String("peers", "", "with -id: the initial voters as ID=host:port,… (Raft addresses, this voter included, the same list on every voter); the group is bootstrapped from it on its first start, with -bootstrap")
	bootstrap := flag.Bool("bootstrap", false, "with -id and -peers: the group's first start: bootstrap it from -peers (the data directory must hold no Raft state); without it, a data directory with no Raft state is refused, since the group already exists (a voter that lost its data is removed and started again with -join)")
	join := flag.String("join", "", "with -id and no -peers: base URL of a running voter (e.g. http://10.0.0.1:4437) to ask to add this voter; with no Raft state in -data, streamd first reads the group's configuration there and refuses to start if the group still counts this voter (its log is lost: remove it first)")
	advertise := flag.String("raft-advertise", "", "with -id: the Raft address peers dial, if not -raft-addr (a wildcard bind, a proxy)")
	url := flag.String("url", "", "with -id: the HTTP base URL other voters forward to (default http://<-addr>)")
	longPoll := flag.Duration("long-poll", 20*time.Second, "how long a long-poll read waits for data")
	maxBody := flag.Int64("max-body", 1<<20, "largest request body in bytes (larger: 413)")
	maxProducerID := flag.Int("max-producer-id", 256, "longest Producer-Id in bytes (longer: 400)")
	fenceDefault := flag.String("fence-default", "none", "fence mode of a stream created without a Stream-Fence header (a fork: its source's): required (once a producer has written, an append without producer headers is refused with 403) or none (the protocol's behaviour)")
	producerTTL := flag.Duration("producer-ttl", 0, "without -data: forget a producer id after this long without an accepted append (0: 7 days, PROTOCOL.md 5.2.1's figure for in-memory stores; negative: never); with -data producer state is kept as long as the stream's data, unless -forget-producers")
	forgetProducers := flag.Bool("forget-producers", false, "with -data: forget idle producers after -producer-ttl all the same; risk: a forgotten producer has no fence and no duplicate detection, so a writer that re-claims without reading the stream can share an epoch with the one that fenced it, and a late retry is appended twice")
	sweepInterval := flag.Duration("sweep-interval", time.Minute, "how often the leader reclaims expired streams and idle producers through the log")
	heartbeat := flag.Duration("raft-heartbeat", 0, "Raft heartbeat timeout: a follower that hears no leader this long starts an election (0: hashicorp/raft's 1s)")
	election := flag.Duration("raft-election", 0, "Raft election timeout (0: hashicorp/raft's 1s)")
	lease := flag.Duration("raft-lease", 0, "Raft leader lease: a leader that reaches no quorum this long steps down (0: hashicorp/raft's 500ms)")
	snapThreshold := flag.Uint64("snapshot-threshold", 0, "log entries after which a snapshot compacts the log (0: hashicorp/raft's 8192)")
	trailing := flag.Uint64("trailing-logs", 0, "log entries kept after a snapshot, for slow followers (0: hashicorp/raft's 10240)")
	snapInterval := flag.Duration("snapshot-interval", 0, "how often the snapshot threshold is checked (0: hashicorp/raft's 120s)")
	flag.Parse()
	if *fenceDefault != "none" && *fenceDefault != "required" {
		log.Fatalf("streamd: -fence-default %q: want required or none", *fenceDefault)
	}

	opts := node.Options{Voters: *cluster, Dir: *data, HTTPAddr: *addr, RaftAddr: *raftAddr,
		LongPoll: *longPoll, MaxBody: *maxBody, MaxProducerID: *maxProducerID, FenceDefault: *fenceDefault, ProducerTTL: *producerTTL, ForgetProducers: *forgetProducers, SweepInterval: *sweepInterval, HeartbeatTimeout: *heartbeat, ElectionTimeout: *election,
		LeaderLeaseTimeout: *lease, SnapshotThreshold: *snapThreshold, TrailingLogs: *trailing, SnapshotInterval: *snapInterval}
	if *id != "" {
		if *cluster != 1 {
			log.Fatalf("streamd: -id runs one voter per process; -cluster %d runs voters in this process: give one of them", *cluster)
		}
		ps, err := parsePeers(*peers)
		if err != nil {
			log.Fatalf("streamd: -peers: %v", err)
		}
		if len(ps) > 0 && *join != "" {
			log.Fatalf("streamd: give -peers (bootstrap a new group) or -join (join a running one), not both")
		}
		if *bootstrap && len(ps) == 0 {
			log.Fatalf("streamd: -bootstrap needs -peers (the group's voters)")
		}
		opts.ID, opts.Peers, opts.RaftAdvertise, opts.URL, opts.Bootstrap, opts.Join = *id, ps, *advertise, *url, *bootstrap, *join
	} else if *peers != "" || *join != "" || *advertise != "" || *url != "" {
		log.Fatalf("streamd: -peers, -join, -raft-advertise and -url need -id")
	}
	c, err := node.Start(opts)
	switch {
	case errors.Is(err, replica.ErrNoState):
		log.Fatalf("streamd: %v\nstreamd: to bring voter %s back: on a running voter DELETE /v1/cluster/voters/%s, then start this one with -join URL and no -peers; to create a new group, give -bootstrap", err, *id, *id)
	case errors.Is(err, node.ErrStillVoter):
		log.Fatalf("streamd: %v\nstreamd: to bring voter %s back: on a running voter DELETE /v1/cluster/voters/%s, then start this one again with -join", err, *id, *id)
	case errors.Is(err, replica.ErrBootstrapped):
		log.Fatalf("streamd: %v; leave out -bootstrap", err)
	case err != nil:
		log.Fatalf("streamd: %v", err)
	}
	for _, nd := range c.Nodes {
		fmt.Fprintf(os.Stderr, "streamd: voter %s serving on %s/v1/stream/\n", nd.ID, nd.URL)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if *join != "" {
		raft := *advertise
		if raft == "" {
			raft = *raftAddr
		}
		go func() {
			if err := node.Join(ctx, *join, *id, raft); err != nil && ctx.Err() == nil {
				fmt.Fprintf(os.Stderr, "streamd: %v\n", err)
				return
			}
			if ctx.Err() == nil {
				fmt.Fprintf(os.Stderr, "streamd: voter %s joined through %s\n", *id, *join)
			}
		}()
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	removed := make(chan struct{})
	if *id != "" {
		// A voter removed from the group (DELETE /v1/cluster/voters/<id>)
		// stops: it hears of no more appends.
		go func() {
			for ctx.Err() == nil {
				time.Sleep(200 * time.Millisecond)
				if c.Nodes[0].Group.Removed() {
					close(removed)
					return
				}
			}
		}()
	}
	select {
	case <-sig:
	case <-removed:
		fmt.Fprintf(os.Stderr, "streamd: voter %s has been removed from the group; stopping\n", *id)
	}
	cancel()
	if err := c.Close(); err != nil {
		log.Fatalf("streamd: close: %v", err)
	}
}

// parsePeers parses "A=host:port,B=host:port" ("" gives none).
func parsePeers(s string) ([]replica.Peer, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []replica.Peer
	for _, f := range strings.Split(s, ",") {
		id, addr, ok := strings.Cut(strings.TrimSpace(f), "=")
		if !ok || id == "" || addr == "" {
			return nil, fmt.Errorf("%q: want ID=host:port", f)
		}
		out = append(out, replica.Peer{ID: id, Address: addr})
	}
	return out, nil
}
