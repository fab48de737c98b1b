package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ownership-book/ownership/examples/ownership"
	"github.com/ownership-book/ownership/examples/ownership/service"
	"github.com/ownership-book/ownership/examples/replica"
)

// initCA writes a new authority, valid for validity, to dir: ca.pem and
// ca.key (every voter loads both with -ca) and, for each roster node, its
// certificate and key (<node>.pem, <node>.key) for clients.
func initCA(dir string, validity time.Duration, w io.Writer) error {
	if _, err := os.Stat(filepath.Join(dir, "ca.key")); err == nil {
		return fmt.Errorf("%s already holds a CA (ca.key): remove it first, or keep using it", dir)
	}
	auth, err := service.NewAuthorityValid("ownerd-ca", validity)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	key, err := auth.KeyPEM()
	if err != nil {
		return err
	}
	files := map[string][]byte{"ca.pem": auth.CertPEM(), "ca.key": key}
	for _, n := range roster {
		cert, err := auth.Issue(n)
		if err != nil {
			return err
		}
		cp, kp, err := service.EncodePEM(cert)
		if err != nil {
			return err
		}
		files[string(n)+".pem"], files[string(n)+".key"] = cp, kp
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "ownerd: CA (ca.pem, ca.key; valid %v) and node certificates for %v in %s\n", validity, roster, dir)
	return nil
}

// loadAuthority reads dir/ca.pem and dir/ca.key, naming the file at fault.
func loadAuthority(dir string) (*service.Authority, error) {
	cp, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil {
		return nil, fmt.Errorf("-ca: %w (make one with ownerd -init-ca %s)", err, dir)
	}
	kp, err := os.ReadFile(filepath.Join(dir, "ca.key"))
	if err != nil {
		return nil, fmt.Errorf("-ca: %w", err)
	}
	a, err := service.LoadAuthority(cp, kp)
	if err != nil {
		return nil, fmt.Errorf("-ca %s: %w", dir, err)
	}
	return a, nil
}

// voterOptions configure one voter of a group spanning processes.
type voterOptions struct {
	id, addr, raftAddr, data, ca string
	peers                        []replica.Peer
	timeout                      time.Duration // Raft heartbeat, election and lease timeouts
	// join: do not bootstrap; peers only names the voters to trust until
	// this voter's log holds the group's configuration (a leader adds it
	// with POST /v1/cluster/voters on its admin address). With no Raft
	// state in data, the voter first asks the others in peers and refuses
	// to start while the group still counts it (service.CheckNotVoter).
	join bool
	// bootstrap: the group's first start; the voter bootstraps it from
	// peers. Without it or join, a data directory with no Raft state is
	// refused (replica.BootstrapNever): the group exists, and a voter that
	// lost its log must not vote as if it had one.
	bootstrap bool
	// admin is the loopback address of the membership endpoints ("": none).
	admin string
}

// joinCheckFor bounds how long a voter started with -join and no Raft
// state tries to ask the voters in -peers whether the group still counts
// it (service.CheckNotVoter); it does not start without an answer.
const joinCheckFor = 30 * time.Second

// parsePeers parses "v1=host:port,v2=host:port".
func parsePeers(s string) ([]replica.Peer, error) {
	var out []replica.Peer
	for _, f := range strings.Split(s, ",") {
		id, addr, ok := strings.Cut(strings.TrimSpace(f), "=")
		if !ok || id == "" || addr == "" {
			return nil, fmt.Errorf("-peers %q: want ID=host:port,…", f)
		}
		out = append(out, replica.Peer{ID: id, Address: addr})
	}
	return out, nil
}

// serveVoter runs one voter until SIGINT or SIGTERM: Raft over mutual TLS on
// raftAddr with a peer certificate, the wire methods over mutual TLS on addr
// with a server certificate, both issued at start from the CA in -ca.
func serveVoter(o voterOptions, w io.Writer) error {
	auth, err := loadAuthority(o.ca)
	if err != nil {
		return err
	}
	r, err := service.NewRoster(roster...)
	if err != nil {
		return err
	}
	self := false
	for _, p := range o.peers {
		self = self || p.ID == o.id
	}
	if !self {
		return fmt.Errorf("-peers %v does not name this voter (-id %s)", o.peers, o.id)
	}
	peerCert, err := auth.IssuePeer(ownership.NodeID(o.id))
	if err != nil {
		return err
	}
	rl, err := net.Listen("tcp", o.raftAddr)
	if err != nil {
		return fmt.Errorf("-raft-addr: %w", err)
	}
	// The voters trusted on the Raft port: -peers until the group is open,
	// then the group's latest configuration (so that AddVoter and
	// RemoveServer change who may connect), together with -peers while this
	// voter has joined but not yet received the configuration.
	var trusted atomic.Pointer[[]replica.Peer]
	initial := slices.Clone(o.peers)
	trusted.Store(&initial)
	transport := service.NewRaftTransport(auth, peerCert, rl, func() []replica.Peer { return *trusted.Load() })
	defer transport.Close()
	m := service.NewMachine()
	bootstrap, mode := o.peers, replica.BootstrapNever
	switch {
	case o.join:
		bootstrap, mode = nil, replica.BootstrapIfEmpty
	case o.bootstrap:
		mode = replica.BootstrapNew
	}
	cfg := replica.Config{ID: o.id, Dir: o.data, Transport: transport, Voters: bootstrap,
		Bootstrap: mode, HeartbeatTimeout: o.timeout, ElectionTimeout: o.timeout, LeaderLeaseTimeout: o.timeout}
	if o.join {
		// No Raft state: before Raft starts (and could vote), ask the
		// running voters whether the group still counts this one.
		cfg.OnEmpty = func() error {
			ctx, cancel := context.WithTimeout(context.Background(), joinCheckFor)
			defer cancel()
			return service.CheckNotVoter(ctx, auth, peerCert, o.id, o.peers)
		}
	}
	g, err := replica.Open(cfg, m)
	switch {
	case errors.Is(err, service.ErrStillVoter):
		return fmt.Errorf("%w\nits log is lost, and an empty voter would vote; to bring voter %s back: on the leader's -admin address DELETE /v1/cluster/voters/%s, then start this one again with -join", err, o.id, o.id)
	case errors.Is(err, replica.ErrNoState):
		return fmt.Errorf("%w\nto bring voter %s back: on the leader's -admin address DELETE /v1/cluster/voters/%s, then start this one with -join; to create a new group, give -bootstrap", err, o.id, o.id)
	case errors.Is(err, replica.ErrBootstrapped):
		return fmt.Errorf("%w; leave out -bootstrap", err)
	case err != nil:
		return err
	}
	defer g.Close()
	stopTrust := make(chan struct{})
	defer close(stopTrust)
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			if vs, err := g.Voters(); err == nil && len(vs) > 0 {
				if o.join && !slices.ContainsFunc(vs, func(p replica.Peer) bool { return p.ID == o.id }) {
					vs = append(vs, initial...) // not added yet: keep trusting -peers
				}
				trusted.Store(&vs)
			}
			select {
			case <-stopTrust:
				return
			case <-t.C:
			}
		}
	}()
	srv := service.NewServer(service.NewRaftRegistry(g, m), r)
	cert, err := auth.IssueServer(ownership.NodeID(o.id))
	if err != nil {
		return err
	}
	hl, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("-addr: %w", err)
	}
	hs := srv.HTTPServer(auth, cert)
	go hs.ServeTLS(hl, "", "")
	defer hs.Close()
	fmt.Fprintf(w, "ownerd: voter %s serving on %s (Raft on %s)\n", o.id, hl.Addr(), rl.Addr())
	if o.admin != "" {
		al, err := listenLoopback(o.admin)
		if err != nil {
			return fmt.Errorf("-admin: %w", err)
		}
		as := &http.Server{Handler: adminHandler(g), ReadHeaderTimeout: 10 * time.Second}
		go as.Serve(al)
		defer as.Close()
		fmt.Fprintf(w, "ownerd: voter %s membership admin on http://%s/v1/cluster\n", o.id, al.Addr())
	}

	// Whichever voter leads creates actor x for A, as -serve does, so that
	// a new group has an actor to hand over.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if g.IsLeader() {
				cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
				_, err := srv.Create(cctx, "x", "A")
				ccancel()
				if err == nil || errors.Is(err, service.ErrActorExists) {
					return
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return nil
		case <-t.C:
			// A voter removed from the group (DELETE /v1/cluster/voters/<id>)
			// stops: it hears of no more transitions.
			if g.Removed() {
				fmt.Fprintf(w, "ownerd: voter %s has been removed from the group; stopping\n", o.id)
				return nil
			}
		}
	}
}
