// Package node runs the epoch-fenced stream as a Raft group: each voter is a
// stream.Machine replicated by a replica.Group and served over HTTP by a
// server.Server. Either one voter or three run in one process, on loopback
// (Options.Voters), or this process is one voter of a group whose other
// voters run elsewhere (Options.ID, Options.Peers): see Start.
package node

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ownership-book/ownership/examples/replica"
	"github.com/ownership-book/ownership/examples/stream"
	"github.com/ownership-book/ownership/examples/stream/server"
)

// Options configures a cluster. Zero values select the defaults noted.
type Options struct {
	// Voters is 1 (default) or 3, all in this process. With ID set it must
	// be 0 or 1.
	Voters int
	// ID, when set, makes this process one voter of a group that spans
	// processes (or hosts): the voter ID (e.g. "A"), listening for Raft on
	// RaftAddr (a fixed port) and for HTTP on HTTPAddr, with its Raft log,
	// stable store and snapshots in Dir itself.
	ID string
	// Peers is the group's initial configuration when ID is set: every
	// voter's ID and Raft address (the one its peers dial), this voter
	// included, the same list on every voter. It is used only to bootstrap
	// a new group, when Dir holds no Raft state yet; a voter with state
	// ignores it. Empty: this voter bootstraps nothing and waits until a
	// leader adds it (POST /v1/cluster/voters, see AdminPrefix; Join).
	Peers []replica.Peer
	// Bootstrap, with ID and Peers, says this is the group's first start:
	// the voter bootstraps the group from Peers, and Start fails (wrapping
	// replica.ErrBootstrapped) if Dir already holds Raft state. Without it,
	// Peers name a group that exists, and a Dir with no Raft state makes
	// Start fail (wrapping replica.ErrNoState) instead of bootstrapping a
	// second group next to it: a voter that lost its disk must be removed
	// and added again with Join (see replica.BootstrapMode). Only with ID.
	Bootstrap bool
	// Join, with ID and no Peers, is the base URL of a running voter of the
	// group this voter joins (streamd -join). When the voter has no Raft
	// state (an empty Dir, or Dir "" in memory), Start first asks that
	// voter for the group's configuration (GET AdminPrefix, for up to
	// JoinCheckFor) and fails, wrapping ErrStillVoter, if it lists ID: the
	// group counts this voter, whose log is lost, and an empty voter would
	// grant its vote to any candidate. It fails too when the configuration
	// cannot be read. Start does not join: the caller calls Join once Start
	// returns. A voter that has Raft state is not checked.
	Join string
	// RaftAdvertise is the Raft address peers dial to reach this voter when
	// it differs from RaftAddr (a wildcard RaftAddr, a proxy). Default:
	// RaftAddr. Only with ID.
	RaftAdvertise string
	// URL is the HTTP base URL other voters forward requests to when this
	// voter leads, e.g. "http://10.0.0.1:4437". Default: "http://" and the
	// HTTP listener's address. Only with ID.
	URL string
	// Dir holds each voter's Raft log, stable store and snapshots in
	// Dir/<ID>; "" keeps them in memory (lost on exit).
	Dir string
	// HTTPAddr is voter A's HTTP address; B and C listen on the next ports.
	// Port 0 gives each voter a free port. Default "127.0.0.1:0".
	HTTPAddr string
	// RaftAddr is voter A's Raft transport address; B and C use the next
	// ports. Port 0 gives each voter a free port. Default "127.0.0.1:0".
	// With a Dir, the addresses chosen at the first start are recorded in
	// Dir/raft-peers and every later start uses those (the voters' stored
	// configuration names them), whatever RaftAddr says.
	RaftAddr string
	// LongPoll, MaxBody, MaxProducerID: see server.Server.
	LongPoll      time.Duration
	MaxBody       int64
	MaxProducerID int
	// FenceDefault is the fence mode of a stream created without a
	// Stream-Fence header: stream.FenceRequired, or "" or stream.FenceNone
	// (the protocol's behaviour); see server.Server.FenceDefault.
	FenceDefault string
	// ReadHeaderTimeout bounds the time a client may take to send a
	// request's header (default 10s); IdleTimeout how long a kept-alive
	// connection may sit between requests (default 2m). Both cut off
	// slow or idle clients that would otherwise hold a connection and a
	// goroutine for ever. There is no write timeout: long-poll and SSE
	// answers stay open on purpose.
	ReadHeaderTimeout, IdleTimeout time.Duration
	// BodyTimeout, WriteTimeout: see server.Server.
	BodyTimeout, WriteTimeout time.Duration
	// Raft timing (see replica.Config); zero: hashicorp/raft's defaults.
	HeartbeatTimeout, ElectionTimeout, LeaderLeaseTimeout time.Duration
	// ProducerTTL is how long an in-memory stream (Dir "") keeps a producer
	// id without an accepted append: default 7 days, the figure PROTOCOL.md
	// 5.2.1 gives for in-memory stores; negative: for ever. A durable group
	// (Dir set) keeps producer state for as long as the stream's data
	// exists, as 5.2.1 asks of persistent stores, and ignores ProducerTTL
	// unless ForgetProducers is set. SweepInterval is how often the leader
	// checks for expired streams and idle producers and, when there are
	// any, commits an OpSweep that removes them on every voter (default 1
	// minute).
	ProducerTTL, SweepInterval time.Duration
	// ForgetProducers makes a durable group forget idle producers after
	// ProducerTTL (which must then be positive) all the same. The risk: a
	// forgotten producer id has no fence and no duplicate detection any
	// more, so a fenced writer that claims again at an epoch it picks
	// itself, without reading the stream first, can share an epoch with
	// the writer that fenced it, and a retry of an append applied before
	// the sweep is appended twice. Package owner reads the stream before it
	// claims after "forgotten" and is safe against it; a bare client is not.
	ForgetProducers bool
	// Snapshots and log compaction (see replica.Config); zero:
	// hashicorp/raft's defaults.
	SnapshotThreshold, TrailingLogs uint64
	SnapshotInterval                time.Duration
}

// Node is one voter: its machine, its Raft group and its HTTP server.
type Node struct {
	ID      string
	URL     string // base URL, e.g. http://127.0.0.1:4437
	Machine *stream.Machine
	Group   *replica.Group
	Server  *server.Server
	m       *machine
	ln      net.Listener
	http    *http.Server
	stop    chan struct{}
	done    chan struct{}
	served  bool

	producerTTL, sweepEvery time.Duration
}

// Cluster is the voters of one stream group that run in this process.
type Cluster struct {
	Nodes []*Node
	byID  map[string]*Node
}

// addrs returns n addresses: base, base+1, … (or n free ports when base's
// port is 0). For free ports it also returns the listeners, still open, so
// that no other process can take a port before its voter uses it; the
// caller owns them (closeAll). With a fixed port the listeners are nil.
func addrs(base string, n int) ([]string, []net.Listener, error) {
	host, port, err := net.SplitHostPort(base)
	if err != nil {
		return nil, nil, fmt.Errorf("address %q: %w", base, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return nil, nil, fmt.Errorf("address %q: port %q is not a number", base, port)
	}
	out := make([]string, n)
	lns := make([]net.Listener, n)
	for i := range out {
		if p == 0 {
			ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
			if err != nil {
				closeAll(lns)
				return nil, nil, err
			}
			out[i], lns[i] = ln.Addr().String(), ln
		} else {
			out[i] = net.JoinHostPort(host, strconv.Itoa(p+i))
		}
	}
	return out, lns, nil
}

// closeAll closes the listeners that are not nil.
func closeAll(lns []net.Listener) {
	for _, ln := range lns {
		if ln != nil {
			ln.Close()
		}
	}
}

// PeersFile, in a cluster's data directory, records each voter's Raft
// address, one "ID host:port" line per voter (e.g. "A 127.0.0.1:40123").
// The voters' Raft logs hold the same addresses in their configuration, so
// a cluster restarted on the directory must listen there again.
const PeersFile = "raft-peers"

// raftPeers returns the n voters' Raft addresses: those recorded in
// dir/PeersFile when it exists, otherwise addrs(base, n), recorded there
// (when dir is not "") before any voter starts.
//
// Errors: a PeersFile that cannot be read, is malformed or holds another
// number of voters, naming the file and line; a bad base address.
func raftPeers(dir, base string, n int) ([]string, []net.Listener, error) {
	if dir == "" {
		return addrs(base, n)
	}
	path := filepath.Join(dir, PeersFile)
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		if len(lines) != n {
			return nil, nil, fmt.Errorf("%s: the data directory holds %d voters, not %d", path, len(lines), n)
		}
		out := make([]string, n)
		for i, line := range lines {
			f := strings.Fields(line)
			id := string(rune('A' + i))
			if len(f) != 2 || f[0] != id {
				return nil, nil, fmt.Errorf("%s:%d: want \"%s host:port\", got %q", path, i+1, id, line)
			}
			if _, _, err := net.SplitHostPort(f[1]); err != nil {
				return nil, nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
			}
			out[i] = f[1]
		}
		return out, make([]net.Listener, n), nil
	case errors.Is(err, os.ErrNotExist):
	default:
		return nil, nil, err
	}
	out, lns, err := addrs(base, n)
	if err != nil {
		return nil, nil, err
	}
	var b strings.Builder
	for i, a := range out {
		fmt.Fprintf(&b, "%c %s\n", 'A'+i, a)
	}
	tmp := path + ".tmp"
	err = os.MkdirAll(dir, 0o755)
	if err == nil {
		err = os.WriteFile(tmp, []byte(b.String()), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		closeAll(lns)
		return nil, nil, err
	}
	return out, lns, nil
}

// Start opens the voters, starts their HTTP servers and, for voters in this
// process only (ID unset), waits until a leader is known (at most 30s). With
// ID set it starts this process's voter and returns at once: its peers may
// not be up yet, and until a quorum is, requests get 503 with Retry-After.
//
// Errors: bad addresses, ports in use, stores that cannot be opened, Peers
// without this voter's ID, no leader in time.
func Start(opts Options) (*Cluster, error) {
	if opts.HTTPAddr == "" {
		opts.HTTPAddr = "127.0.0.1:0"
	}
	if opts.RaftAddr == "" {
		opts.RaftAddr = "127.0.0.1:0"
	}
	switch opts.FenceDefault {
	case "", stream.FenceNone, stream.FenceRequired:
	default:
		return nil, fmt.Errorf("node: fence default %q: want %q or %q", opts.FenceDefault, stream.FenceRequired, stream.FenceNone)
	}
	if opts.ID != "" {
		return startOne(opts)
	}
	n := opts.Voters
	if n == 0 {
		n = 1
	}
	if n != 1 && n != 3 {
		return nil, fmt.Errorf("node: %d voters: want 1 or 3", n)
	}
	raftAddrs, raftLns, err := raftPeers(opts.Dir, opts.RaftAddr, n)
	if err != nil {
		return nil, fmt.Errorf("node: raft %w", err)
	}
	httpAddrs, httpLns, err := addrs(opts.HTTPAddr, n)
	if err != nil {
		closeAll(raftLns)
		return nil, fmt.Errorf("node: http %w", err)
	}
	ids := []string{"A", "B", "C"}[:n]
	var voters []replica.Peer
	for i, id := range ids {
		voters = append(voters, replica.Peer{ID: id, Address: raftAddrs[i]})
	}
	c := &Cluster{byID: map[string]*Node{}}
	for i, id := range ids {
		cfg := c.raftConfig(opts, id, voters)
		cfg.Bind, cfg.Listener = raftAddrs[i], raftLns[i]
		if opts.Dir != "" {
			cfg.Dir = filepath.Join(opts.Dir, id)
		}
		raftLns[i] = nil // replica.Open owns it now, failing or not
		if err := c.add(opts, cfg, httpAddrs[i], httpLns[i], ""); err != nil {
			httpLns[i] = nil
			closeAll(raftLns)
			closeAll(httpLns)
			c.Close()
			return nil, err
		}
		httpLns[i] = nil
	}
	c.serve()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Leader(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// startOne starts the one voter opts.ID of a group spanning processes.
func startOne(opts Options) (*Cluster, error) {
	if opts.Voters > 1 {
		return nil, fmt.Errorf("node: voter %s: an ID runs one voter in this process, not %d", opts.ID, opts.Voters)
	}
	if _, port, err := net.SplitHostPort(opts.RaftAddr); err != nil {
		return nil, fmt.Errorf("node: voter %s: Raft address %q: %w", opts.ID, opts.RaftAddr, err)
	} else if port == "0" && opts.RaftAdvertise == "" {
		return nil, fmt.Errorf("node: voter %s: Raft address %q: a voter of a group spanning processes needs a fixed port, which its peers dial", opts.ID, opts.RaftAddr)
	}
	seen := map[string]bool{}
	for _, p := range opts.Peers {
		if p.ID == "" || p.Address == "" {
			return nil, fmt.Errorf("node: voter %s: peer %+v: want an ID and a Raft address", opts.ID, p)
		}
		if seen[p.ID] {
			return nil, fmt.Errorf("node: voter %s: peer %s listed twice", opts.ID, p.ID)
		}
		seen[p.ID] = true
	}
	if len(opts.Peers) > 0 && !seen[opts.ID] {
		return nil, fmt.Errorf("node: voter %s: the peers %v do not include this voter", opts.ID, opts.Peers)
	}
	c := &Cluster{byID: map[string]*Node{}}
	cfg := c.raftConfig(opts, opts.ID, opts.Peers)
	switch {
	case opts.Bootstrap:
		cfg.Bootstrap = replica.BootstrapNew
	case len(opts.Peers) > 0 && opts.Dir != "":
		cfg.Bootstrap = replica.BootstrapNever
	}
	if opts.Join != "" && len(opts.Peers) == 0 {
		cfg.OnEmpty = func() error { return checkNotVoter(opts.Join, opts.ID) }
	}
	cfg.Bind, cfg.Advertise, cfg.Dir = opts.RaftAddr, opts.RaftAdvertise, opts.Dir
	if err := c.add(opts, cfg, opts.HTTPAddr, nil, opts.URL); err != nil {
		c.Close()
		return nil, err
	}
	c.serve()
	return c, nil
}

func (c *Cluster) raftConfig(opts Options, id string, voters []replica.Peer) replica.Config {
	return replica.Config{ID: id, Voters: voters,
		HeartbeatTimeout: opts.HeartbeatTimeout, ElectionTimeout: opts.ElectionTimeout,
		LeaderLeaseTimeout: opts.LeaderLeaseTimeout, SnapshotThreshold: opts.SnapshotThreshold,
		TrailingLogs: opts.TrailingLogs, SnapshotInterval: opts.SnapshotInterval}
}

// add opens one voter and its HTTP listener (not yet serving): ln when it
// is not nil (add owns it, failing or not), else one on httpAddr.
func (c *Cluster) add(opts Options, cfg replica.Config, httpAddr string, ln net.Listener, url string) error {
	ttl, err := producerTTL(opts)
	if err != nil {
		if ln != nil {
			ln.Close()
		}
		return fmt.Errorf("node: voter %s: %w", cfg.ID, err)
	}
	m := newMachine()
	nd := &Node{ID: cfg.ID, Machine: m.Machine, m: m, stop: make(chan struct{}), done: make(chan struct{}),
		producerTTL: ttl, sweepEvery: orDefault(opts.SweepInterval, time.Minute)}
	g, err := replica.Open(cfg, m)
	if err != nil {
		if ln != nil {
			ln.Close()
		}
		return fmt.Errorf("node: %w", err)
	}
	nd.Group = g
	c.Nodes = append(c.Nodes, nd)
	c.byID[nd.ID] = nd
	if ln == nil {
		if ln, err = net.Listen("tcp", httpAddr); err != nil {
			return fmt.Errorf("node: voter %s: %w", nd.ID, err)
		}
	}
	nd.ln = ln
	nd.URL = "http://" + ln.Addr().String()
	if url != "" {
		nd.URL = strings.TrimSuffix(url, "/")
	}
	nd.Server = &server.Server{M: nd.Machine, A: applier{g}, LongPoll: opts.LongPoll, MaxBody: opts.MaxBody,
		BodyTimeout: opts.BodyTimeout, WriteTimeout: opts.WriteTimeout, Redirect: c.redirect(nd), Forward: true,
		NewLeader: c.newLeader(nd), BaseURL: nd.URL, MaxProducerID: opts.MaxProducerID,
		FenceDefault: opts.FenceDefault}
	mux := http.NewServeMux()
	mux.Handle(AdminPrefix, c.admin(nd))
	mux.Handle(AdminPrefix+"/", c.admin(nd))
	mux.Handle("/", removedGone(nd))
	nd.http = &http.Server{Handler: mux, ReadHeaderTimeout: orDefault(opts.ReadHeaderTimeout, 10*time.Second),
		IdleTimeout: orDefault(opts.IdleTimeout, 2*time.Minute)}
	return nil
}

// removedGone serves nd's streams while nd is a voter of the group, and
// answers 410 Gone once it has been removed (replica.Group.Removed): it no
// longer hears of new appends, so it must not answer for the stream.
func removedGone(nd *Node) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if nd.Group.Removed() {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusGone)
			fmt.Fprintf(w, "voter %s has been removed from the group: ask another voter (GET %s on one of them lists the group)\n", nd.ID, AdminPrefix)
			return
		}
		nd.Server.ServeHTTP(w, r)
	})
}

// serve starts every voter's HTTP server and its announcer.
func (c *Cluster) serve() {
	for _, nd := range c.Nodes {
		nd.served = true
		go nd.http.Serve(nd.ln)
		go nd.announce()
	}
}

// announce runs while the voter is open. Whenever it leads and the log's
// directory does not map it to its URL, it commits that mapping, so that
// followers in other processes can forward to it; and every sweepEvery, when
// some stream has expired or some producer has been idle for producerTTL,
// it commits an OpSweep stamped with its clock.
func (nd *Node) announce() {
	defer close(nd.done)
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	lastSweep := time.Now()
	for {
		select {
		case <-nd.stop:
			return
		case <-t.C:
		}
		if !nd.Group.IsLeader() {
			continue
		}
		if u, ok := nd.m.URL(nd.ID); !ok || u != nd.URL {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			nd.Group.Apply(ctx, encodeDir(dirEntry{ID: nd.ID, URL: nd.URL}))
			cancel()
		}
		if time.Since(lastSweep) < nd.sweepEvery {
			continue
		}
		lastSweep = time.Now()
		now := time.Now().UnixNano()
		if nd.Machine.NeedsSweep(now, int64(nd.producerTTL)) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			nd.Group.Apply(ctx, stream.Command{Op: stream.OpSweep, Now: now, ProducerTTL: int64(nd.producerTTL)}.Encode())
			cancel()
		}
	}
}

// DefaultProducerTTL is how long an in-memory stream keeps an idle
// producer id by default: 7 days (PROTOCOL.md 5.2.1, in-memory stores).
const DefaultProducerTTL = 7 * 24 * time.Hour

// producerTTL returns how long the leader's sweep lets a producer id idle
// before it forgets it, 0 for never: see Options.ProducerTTL and
// Options.ForgetProducers. Error: ForgetProducers without a positive
// ProducerTTL.
func producerTTL(opts Options) (time.Duration, error) {
	switch {
	case opts.ForgetProducers && opts.ProducerTTL <= 0:
		return 0, fmt.Errorf("forgetting producers needs a positive producer TTL, not %v", opts.ProducerTTL)
	case opts.Dir != "" && !opts.ForgetProducers:
		return 0, nil // durable: producer state lives as long as the data
	case opts.ProducerTTL < 0:
		return 0, nil
	}
	return orDefault(opts.ProducerTTL, DefaultProducerTTL), nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// applier is the server's view of a voter's group. During an election no
// voter knows a leader; rather than refuse at once, a call that was refused
// as "not the leader, leader unknown" (so nothing was proposed) waits up to
// electionWait for a leader and then retries here or names the new leader.
type applier struct{ g *replica.Group }

const electionWait = 5 * time.Second

// maxRetries bounds the retries of one call on this voter.
const maxRetries = 5

func (a applier) Apply(ctx context.Context, cmd []byte) ([]byte, error) {
	var res []byte
	err := a.loop(ctx, func() (err error) { res, err = a.g.Apply(ctx, cmd); return err })
	return res, err
}

func (a applier) LeaderRead(ctx context.Context) error {
	return a.loop(ctx, func() error { return a.g.LeaderRead(ctx) })
}

// loop runs call until retry says stop: at most maxRetries retries after
// elections, and retries during a leadership transfer for at most
// electionWait.
func (a applier) loop(ctx context.Context, call func() error) error {
	transferUntil := time.Now().Add(electionWait)
	for i := 0; ; {
		err := call()
		retry, rerr := a.retry(ctx, err)
		if !retry {
			return rerr
		}
		if errors.Is(err, replica.ErrLeadershipTransfer) {
			if time.Now().After(transferUntil) {
				return err
			}
			continue
		}
		if i == maxRetries {
			return err
		}
		i++
	}
}

// retry reports whether to try again here; otherwise it returns the error to
// report, with the leader named when one became known.
func (a applier) retry(ctx context.Context, err error) (bool, error) {
	if errors.Is(err, replica.ErrLeadershipTransfer) {
		return a.afterTransfer(ctx, err)
	}
	var nl *replica.NotLeaderError
	if !errors.As(err, &nl) {
		return false, err
	}
	if nl.Leader == a.g.ID() {
		return true, nil // it won an election just after refusing: retry here
	}
	if nl.Leader != "" {
		return false, err
	}
	wctx, cancel := context.WithTimeout(ctx, electionWait)
	defer cancel()
	leader, werr := a.g.WaitLeader(wctx)
	if werr != nil {
		return false, err
	}
	if leader == a.g.ID() {
		return true, nil
	}
	return false, &replica.NotLeaderError{ID: a.g.ID(), Leader: leader}
}

// leaderURL returns the HTTP base URL of voter id as nd knows it: from the
// log's directory, or for a voter in this process from the process itself.
func (c *Cluster) leaderURL(nd *Node, id string) (string, bool) {
	if u, ok := nd.m.URL(id); ok {
		return u, true
	}
	if o := c.byID[id]; o != nil {
		return o.URL, true
	}
	return "", false
}

// afterTransfer handles a refusal because this voter is handing its
// leadership over: it waits 10 ms, then sends the call to the new leader
// when another voter leads (a NotLeaderError naming it), and otherwise has
// it retried here (the transfer may still run, or may have failed and left
// this voter leading). Nothing was proposed. Apply and LeaderRead bound
// these retries by electionWait.
func (a applier) afterTransfer(ctx context.Context, err error) (bool, error) {
	select {
	case <-ctx.Done():
		return false, err
	case <-time.After(10 * time.Millisecond):
	}
	if leader, ok := a.g.Leader(); ok && leader != a.g.ID() {
		return false, &replica.NotLeaderError{ID: a.g.ID(), Leader: leader}
	}
	return true, nil
}

// redirect maps nd's NotLeaderError to the leader's base URL. A leader
// elected a moment ago may not have committed its URL yet; redirect waits
// for it up to electionWait.
func (c *Cluster) redirect(nd *Node) func(err error) (string, bool) {
	return func(err error) (string, bool) {
		var nl *replica.NotLeaderError
		if !errors.As(err, &nl) {
			return "", false
		}
		return c.awaitLeaderURL(nd, nl.Leader)
	}
}

// awaitLeaderURL returns the base URL of voter id as nd knows it, polling
// every 10 ms for up to electionWait: a leader elected a moment ago may not
// have committed its URL yet. It reports false at once for id "".
func (c *Cluster) awaitLeaderURL(nd *Node, id string) (string, bool) {
	if id == "" {
		return "", false
	}
	deadline := time.Now().Add(electionWait)
	for {
		if u, ok := c.leaderURL(nd, id); ok {
			return u, true
		}
		if time.Now().After(deadline) {
			return "", false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// newLeader returns the server's NewLeader for nd: it polls every 10 ms, for
// at most electionWait, until nd knows a leader whose URL is known and is
// not old (the voter the forward could not reach), and returns that URL.
// The new leader may be nd itself; forwarding to itself then serves the
// request there.
func (c *Cluster) newLeader(nd *Node) func(ctx context.Context, old string) (string, bool) {
	return func(ctx context.Context, old string) (string, bool) {
		ctx, cancel := context.WithTimeout(ctx, electionWait)
		defer cancel()
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			if id, ok := nd.Group.Leader(); ok {
				if u, ok := c.leaderURL(nd, id); ok && u != old {
					return u, true
				}
			}
			select {
			case <-ctx.Done():
				return "", false
			case <-t.C:
			}
		}
	}
}

// Leader waits until some voter is leader and returns it.
func (c *Cluster) Leader(ctx context.Context) (*Node, error) {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		for _, nd := range c.Nodes {
			if nd.Group != nil && nd.Group.IsLeader() {
				return nd, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("node: no leader: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// Close stops the HTTP servers and the voters.
func (c *Cluster) Close() error {
	var errs []error
	for _, nd := range c.Nodes {
		if nd.http != nil {
			nd.http.Close()
		} else if nd.ln != nil {
			nd.ln.Close()
		}
	}
	for _, nd := range c.Nodes {
		if nd.served {
			nd.served = false
			close(nd.stop)
			<-nd.done
		}
		if nd.Group != nil {
			errs = append(errs, nd.Group.Close())
		}
	}
	return errors.Join(errs...)
}
