// Command ownerd runs the ownership service: the owner record in a Raft
// group (one voter by default, -voters 3 for three on this machine), each
// voter serving the wire methods over mutual TLS and speaking Raft to the
// others over mutual TLS as well. With no flags it runs a
// demonstration and exits: a handover over the wire, a wrong caller refused,
// a stranger's certificate refused, and a delayed write from the old owner
// refused by a fence-checking store but accepted by one that does not check.
// Its output is deterministic (no ports, no times), and the book shows it.
//
//	go run ./examples/ownership/ownerd             # the demonstration, one voter
//	go run ./examples/ownership/ownerd -voters 3   # the same with three voters
//	go run ./examples/ownership/ownerd -serve      # keep serving; writes certificates
//
// One voter per process (on one host here; on three hosts use each host's
// address): make a CA once, copy its directory to every host, start each
// voter with the same -peers list, and -bootstrap on the group's first
// start only (a later start without it refuses a data directory with no
// Raft state: the voter lost its log, and is removed and joins again).
//
//	ownerd -init-ca certs
//	ownerd -id v1 -addr 127.0.0.1:5001 -raft-addr 127.0.0.1:6001 -data v1 -ca certs \
//	       -peers v1=127.0.0.1:6001,v2=127.0.0.1:6002,v3=127.0.0.1:6003 -bootstrap
//	ownerd -id v2 -addr 127.0.0.1:5002 -raft-addr 127.0.0.1:6002 -data v2 -ca certs -peers …same… -bootstrap
//	ownerd -id v3 -addr 127.0.0.1:5003 -raft-addr 127.0.0.1:6003 -data v3 -ca certs -peers …same… -bootstrap
//
// Raft between the processes is mutual TLS with peer certificates the
// voters issue themselves from the CA at start; clients use the node
// certificates -init-ca wrote (A, B, C, kv) and may call any voter: one that
// does not lead answers 421 naming the leader, and service.Client moves on.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/raft"

	"github.com/ownership-book/ownership/examples/ownership"
	"github.com/ownership-book/ownership/examples/ownership/service"
	"github.com/ownership-book/ownership/examples/replica"
)

func main() {
	voters := flag.Int("voters", 1, "number of Raft voters to run on this machine (1 or 3)")
	serve := flag.Bool("serve", false, "keep serving instead of running the demonstration")
	dir := flag.String("data", "", "data directory for the Raft logs, the voters' Raft addresses (raft-peers) and, with -serve, the certificates; a directory used before brings the owner record back (default: a fresh temporary directory, removed at exit)")
	id := flag.String("id", "", "run one voter of a group spanning processes: this voter's ID (e.g. v1); needs -ca, -peers, -addr, -raft-addr")
	addr := flag.String("addr", "127.0.0.1:5001", "with -id: HTTPS address of the wire methods")
	raftAddr := flag.String("raft-addr", "127.0.0.1:6001", "with -id: Raft address (mutual TLS), as named in -peers")
	peers := flag.String("peers", "", "with -id: the initial voters as ID=host:port,… (Raft addresses, this voter included, the same list on every voter); the group is bootstrapped from it on its first start, with -bootstrap")
	ca := flag.String("ca", "", "with -id: directory holding ca.pem and ca.key (from -init-ca)")
	initCADir := flag.String("init-ca", "", "write a new CA and the roster nodes' certificates to this directory, and exit")
	validity := flag.Duration("ca-validity", 365*24*time.Hour, "with -init-ca: how long the CA and every certificate issued from it are valid")
	bootstrap := flag.Bool("bootstrap", false, "with -id and -peers: the group's first start: bootstrap it from -peers (-data must hold no Raft state); without it (and without -join), a -data with no Raft state is refused, since the group already exists (a voter that lost its data is removed and started again with -join)")
	join := flag.Bool("join", false, "with -id: do not bootstrap; -peers names the running voters to trust (and this one) until a leader adds this voter (POST /v1/cluster/voters on its -admin address); with an empty -data it first asks those voters and refuses to start while the group still counts it (remove it first: DELETE /v1/cluster/voters/<id>)")
	admin := flag.String("admin", "", "with -id: loopback address for the membership endpoints (GET /v1/cluster, POST /v1/cluster/voters, DELETE /v1/cluster/voters/<id>, POST /v1/cluster/transfer); \"\": none")
	raftTimeout := flag.Duration("raft-timeout", 300*time.Millisecond, "with -id: Raft heartbeat, election and leader-lease timeout")
	flag.Parse()
	var err error
	switch {
	case *initCADir != "":
		err = initCA(*initCADir, *validity, os.Stdout)
	case *id != "":
		var ps []replica.Peer
		if ps, err = parsePeers(*peers); err == nil {
			if *bootstrap && *join {
				err = errors.New("give -bootstrap (create the group) or -join (join a running one), not both")
			} else if *ca == "" || *dir == "" {
				err = errors.New("-id needs -ca (from -init-ca) and -data (this voter's Raft log)")
			} else {
				err = serveVoter(voterOptions{id: *id, addr: *addr, raftAddr: *raftAddr, data: *dir, ca: *ca,
					peers: ps, timeout: *raftTimeout, join: *join, bootstrap: *bootstrap, admin: *admin}, os.Stdout)
			}
		}
	default:
		err = run(*voters, *serve, *dir, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ownerd:", err)
		os.Exit(1)
	}
}

// roster is the fixed set of nodes that may call the service.
var roster = []ownership.NodeID{"A", "B", "C", "kv"}

func run(voters int, serve bool, dir string, w io.Writer) error {
	if voters != 1 && voters != 3 {
		return fmt.Errorf("-voters %d: want 1 or 3", voters)
	}
	if dir == "" {
		tmp, err := os.MkdirTemp("", "ownerd-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	c, err := startCluster(voters, dir)
	if err != nil {
		return err
	}
	defer c.close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.waitLeader(ctx); err != nil {
		return err
	}
	if serve {
		cancel()
		return c.serveForever(dir, w)
	}
	return demo(ctx, c, w)
}

// voter is one Raft voter and the HTTPS server in front of it.
type voter struct {
	id        string
	raftAddr  string                 // the Raft transport's address
	transport *raft.NetworkTransport // Raft over mutual TLS
	group     *replica.Group
	server    *service.Server
	http      *http.Server
	addr      string
}

type cluster struct {
	auth   *service.Authority
	roster service.Roster
	voters []*voter
	addrs  []string
}

// ANCHOR: start_cluster

// startCluster starts n voters on loopback ports. Each keeps its Raft log in
// dir/<id>/raft.db (raft-boltdb), speaks Raft to the others over mutual TLS
// with a peer certificate, and serves the wire methods over mutual TLS with
// a server certificate; an authority made here and now issues both.
func startCluster(n int, dir string) (*cluster, error) {
	auth, err := service.NewAuthority("ownerd-ca")
	if err != nil {
		return nil, err
	}
	r, err := service.NewRoster(roster...)
	if err != nil {
		return nil, err
	}
	c := &cluster{auth: auth, roster: r}
	peers, raftListeners, err := listenRaft(n, dir)
	if err != nil {
		return nil, err
	}
	for i, p := range peers {
		v := &voter{id: p.ID, raftAddr: p.Address}
		c.voters = append(c.voters, v)
		peerCert, err := auth.IssuePeer(ownership.NodeID(p.ID))
		if err != nil {
			c.close(raftListeners[i:]...)
			return nil, err
		}
		v.transport = service.RaftTransport(auth, peerCert, raftListeners[i], peers)
		m := service.NewMachine()
		v.group, err = replica.Open(replica.Config{
			ID: p.ID, Dir: filepath.Join(dir, p.ID), Transport: v.transport, Voters: peers,
			// hashicorp/raft's lease is 500 ms by default; shorter leases
			// made a busy machine depose a fresh leader mid-demonstration.
			HeartbeatTimeout: 300 * time.Millisecond, ElectionTimeout: 300 * time.Millisecond,
			LeaderLeaseTimeout: 300 * time.Millisecond,
		}, m)
		if err != nil {
			c.close(raftListeners[i+1:]...)
			return nil, err
		}
		v.server = service.NewServer(service.NewRaftRegistry(v.group, m), r)
		cert, err := auth.IssueServer(ownership.NodeID(p.ID))
		if err != nil {
			c.close(raftListeners[i+1:]...)
			return nil, err
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			c.close(raftListeners[i+1:]...)
			return nil, err
		}
		v.addr = l.Addr().String()
		v.http = v.server.HTTPServer(auth, cert)
		go v.http.ServeTLS(l, "", "")
		c.addrs = append(c.addrs, v.addr)
	}
	return c, nil
}

// ANCHOR_END: start_cluster

// peersFile, in the data directory, names each voter's Raft address, one
// "id address" line per voter. The Raft log's configuration holds the same
// addresses, so a voter restarted on the directory must listen there again.
const peersFile = "raft-peers"

// listenRaft returns the n voters of dir and a listener on each one's Raft
// address. A new directory gets fresh loopback ports, recorded in peersFile
// before any voter starts; a used one gets the ports recorded there.
//
// Errors: a peersFile for another number of voters, or one that cannot be
// read, naming the file; an address that cannot be listened on again.
func listenRaft(n int, dir string) ([]replica.Peer, []net.Listener, error) {
	path := filepath.Join(dir, peersFile)
	var peers []replica.Peer
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			f := strings.Fields(line)
			if len(f) != 2 || f[0] != fmt.Sprintf("v%d", i+1) {
				return nil, nil, fmt.Errorf("%s:%d: want \"v%d host:port\", got %q", path, i+1, i+1, line)
			}
			peers = append(peers, replica.Peer{ID: f[0], Address: f[1]})
		}
		if len(peers) != n {
			return nil, nil, fmt.Errorf("%s: the data directory holds %d voters; run with -voters %d or use another -data", path, len(peers), len(peers))
		}
	case errors.Is(err, os.ErrNotExist):
	default:
		return nil, nil, err
	}
	var ls []net.Listener
	fail := func(err error) ([]replica.Peer, []net.Listener, error) {
		for _, l := range ls {
			l.Close()
		}
		return nil, nil, err
	}
	for i := range n {
		addr := "127.0.0.1:0"
		if peers != nil {
			addr = peers[i].Address
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return fail(fmt.Errorf("voter v%d: Raft address from %s: %w", i+1, path, err))
		}
		ls = append(ls, l)
	}
	if peers == nil {
		var b strings.Builder
		for i, l := range ls {
			peers = append(peers, replica.Peer{ID: fmt.Sprintf("v%d", i+1), Address: l.Addr().String()})
			fmt.Fprintf(&b, "v%d %s\n", i+1, l.Addr())
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fail(err)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			return fail(err)
		}
	}
	return peers, ls, nil
}

func (c *cluster) waitLeader(ctx context.Context) error {
	for _, v := range c.voters {
		if _, err := v.group.WaitLeader(ctx); err != nil {
			return err
		}
	}
	return nil
}

// close stops every voter's HTTP server, Raft group and transport, and
// closes the Raft listeners not yet handed to a transport.
func (c *cluster) close(unused ...net.Listener) {
	for _, v := range c.voters {
		if v.http != nil {
			v.http.Close()
		}
		if v.group != nil {
			v.group.Close()
		}
		if v.transport != nil {
			v.transport.Close()
		}
	}
	for _, l := range unused {
		l.Close()
	}
}

// coordinate runs one of the coordinator's in-process transitions on
// whichever voter leads.
func (c *cluster) coordinate(ctx context.Context, f func(*service.Server) (ownership.State, error)) (ownership.State, error) {
	for {
		for _, v := range c.voters {
			s, err := f(v.server)
			if !errors.Is(err, service.ErrNotLeader) {
				return s, err
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (c *cluster) client(node ownership.NodeID) (*service.Client, error) {
	cert, err := c.auth.Issue(node)
	if err != nil {
		return nil, err
	}
	return service.NewClient(c.auth, cert, c.addrs...), nil
}

func (c *cluster) methodCalls() int64 {
	var n int64
	for _, v := range c.voters {
		n += v.server.MethodCalls()
	}
	return n
}

// serveForever writes the CA and every roster node's certificate and key to
// dir/certs, prints where the voters listen, and serves until interrupted.
func (c *cluster) serveForever(dir string, w io.Writer) error {
	certs := filepath.Join(dir, "certs")
	if err := os.MkdirAll(certs, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(certs, "ca.pem"), c.auth.CertPEM(), 0o600); err != nil {
		return err
	}
	for _, n := range roster {
		cert, err := c.auth.Issue(n)
		if err != nil {
			return err
		}
		cp, kp, err := service.EncodePEM(cert)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(certs, string(n)+".pem"), cp, 0o600); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(certs, string(n)+".key"), kp, 0o600); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	_, err := c.coordinate(ctx, func(s *service.Server) (ownership.State, error) { return s.Create(ctx, "x", "A") })
	if err != nil && !errors.Is(err, service.ErrActorExists) { // a reused -data directory keeps x
		cancel()
		return err
	}
	cancel()
	fmt.Fprintf(w, "ownerd: %d voter(s) at %s; actor x exists (created for A)\n", len(c.voters), strings.Join(c.addrs, " "))
	fmt.Fprintf(w, "ownerd: CA and node certificates in %s (server name %q); Ctrl-C stops\n", certs, service.ServiceName)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt)
	<-stop
	return nil
}
