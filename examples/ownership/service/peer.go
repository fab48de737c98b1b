package service

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/ownership-book/ownership/examples/ownership"
	"github.com/ownership-book/ownership/examples/replica"
)

// IssuePeer returns a voter's certificate for Raft traffic between voters:
// the voter's name as common name and only DNS name, good for both client
// and server authentication (a voter dials its peers and is dialled by
// them), and not naming ServiceName, so it cannot pose as the service to
// nodes. A node's certificate (client authentication only) and the
// service's (server authentication only) are both refused on a Raft port,
// and a peer certificate is refused as a node's (see ServerTLS).
//
// Errors: *InvalidNameError if name is not 1 to 64 of [A-Za-z0-9._-];
// ErrMalformed (wrapped) if name is ServiceName.
func (a *Authority) IssuePeer(name ownership.NodeID) (tls.Certificate, error) {
	if name == ServiceName {
		return tls.Certificate{}, fmt.Errorf("peer name %q is the service's name, which only server certificates carry: %w", string(name), ErrMalformed)
	}
	return a.issue(name, []string{string(name)}, nil, x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth)
}

// ErrNotAVoter is returned (inside the TLS handshake of a Raft connection)
// for a certificate that is not the peer certificate of a voter.
var ErrNotAVoter = errors.New("certificate is not a voter's peer certificate")

// ANCHOR: raft_transport

// RaftTransport returns the Raft transport of one voter: hashicorp/raft's
// NetworkTransport over mutual TLS on l. The voter presents cert (from
// IssuePeer); it accepts a connection, and dials a peer, only when the other
// end presents a certificate of a that IssuePeer made for one of peers. A
// process without such a certificate cannot speak Raft to a voter, so it can
// neither depose a leader with a higher term nor send log entries, whose
// Request carries a caller that the wire methods would have taken from a
// certificate. l's address must be this voter's Address in peers. Closing
// the transport closes l and every connection it accepted or dialled.
func RaftTransport(
	a *Authority, cert tls.Certificate, l net.Listener, peers []replica.Peer,
) *raft.NetworkTransport {
	peers = slices.Clone(peers)
	return NewRaftTransport(a, cert, l, func() []replica.Peer { return peers })
}

// NewRaftTransport is RaftTransport for a group whose voters change
// (hashicorp/raft AddVoter, RemoveServer): peers is called at every
// handshake and every dial and returns the voters trusted now, for example
// the group's latest configuration. A voter removed from it can no longer
// connect, and one added can at once.
func NewRaftTransport(
	a *Authority, cert tls.Certificate, l net.Listener, peers func() []replica.Peer,
) *raft.NetworkTransport {
	voter := func(name string) bool {
		for _, p := range peers() {
			if p.ID == name {
				return true
			}
		}
		return false
	}
	verify := func(cs tls.ConnectionState) error {
		if len(cs.VerifiedChains) == 0 || len(cs.VerifiedChains[0]) == 0 {
			return fmt.Errorf("no verified certificate: %w", ErrNotAVoter)
		}
		leaf := cs.VerifiedChains[0][0]
		if err := namesOne(leaf); err != nil {
			return fmt.Errorf("%v: %w", err, ErrNotAVoter)
		}
		if !voter(leaf.Subject.CommonName) ||
			!slices.Contains(leaf.ExtKeyUsage, x509.ExtKeyUsageClientAuth) ||
			!slices.Contains(leaf.ExtKeyUsage, x509.ExtKeyUsageServerAuth) {
			name := leaf.Subject.CommonName
			return fmt.Errorf("certificate for %q: %w", name, ErrNotAVoter)
		}
		return nil
	}
	s := &peerStream{
		l: l, peers: peers, conns: map[net.Conn]struct{}{},
		server: &tls.Config{
			MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{cert},
			ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: a.pool,
			VerifyConnection: verify,
		},
		client: &tls.Config{
			MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{cert},
			RootCAs: a.pool, VerifyConnection: verify,
		},
	}
	return raft.NewNetworkTransport(s, 3, 10*time.Second, io.Discard)
}

// ANCHOR_END: raft_transport

// peerStream is a raft.StreamLayer that speaks mutual TLS and remembers its
// connections, so that Close ends them all.
type peerStream struct {
	l              net.Listener
	server, client *tls.Config
	peers          func() []replica.Peer // the voters trusted now

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

// Accept returns the next connection; its handshake runs on first use and
// must finish within HandshakeTimeout.
func (s *peerStream) Accept() (net.Conn, error) {
	c, err := s.l.Accept()
	if err != nil {
		return nil, err
	}
	return s.track(&handshakeConn{Conn: tls.Server(c, s.server)})
}

// Dial connects to the voter at addr and verifies that it is that voter.
func (s *peerStream) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	id := ""
	for _, p := range s.peers() {
		if raft.ServerAddress(p.Address) == addr {
			id = p.ID
		}
	}
	if id == "" {
		return nil, fmt.Errorf("raft transport: %s is no voter's address", addr)
	}
	cfg := s.client.Clone()
	cfg.ServerName = id
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	d := &tls.Dialer{NetDialer: &net.Dialer{}, Config: cfg}
	c, err := d.DialContext(ctx, "tcp", string(addr))
	if err != nil {
		return nil, err
	}
	return s.track(c)
}

func (s *peerStream) track(c net.Conn) (net.Conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		c.Close()
		return nil, net.ErrClosed
	}
	s.conns[c] = struct{}{}
	return &trackedConn{Conn: c, s: s}, nil
}

func (s *peerStream) Close() error {
	err := s.l.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	clear(s.conns)
	return err
}

func (s *peerStream) Addr() net.Addr { return s.l.Addr() }

// trackedConn forgets itself when closed.
type trackedConn struct {
	net.Conn
	s *peerStream
}

func (c *trackedConn) Close() error {
	c.s.mu.Lock()
	delete(c.s.conns, c.Conn)
	c.s.mu.Unlock()
	return c.Conn.Close()
}

// handshakeConn completes the server side of the TLS handshake, within
// HandshakeTimeout, before the first read or write.
type handshakeConn struct {
	*tls.Conn
	once sync.Once
	err  error
}

func (c *handshakeConn) handshake() error {
	c.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), HandshakeTimeout)
		defer cancel()
		c.err = c.Conn.HandshakeContext(ctx)
	})
	return c.err
}

func (c *handshakeConn) Read(b []byte) (int, error) {
	if err := c.handshake(); err != nil {
		return 0, err
	}
	return c.Conn.Read(b)
}

func (c *handshakeConn) Write(b []byte) (int, error) {
	if err := c.handshake(); err != nil {
		return 0, err
	}
	return c.Conn.Write(b)
}

// ErrStillVoter is returned by CheckNotVoter when a running voter still
// counts the asking voter as one of the group.
var ErrStillVoter = errors.New("the group still counts this voter")

// CheckNotVoter asks the running voters in peers (Raft addresses; self's
// own entry is skipped) whether the group still counts self as a voter,
// before a voter that has lost its log joins the group again. It dials each
// one's Raft port with cert (self's peer certificate, from IssuePeer) and
// sends a vote request for term 0, which every voter refuses without
// changing anything (Raft §5.1: a request with a stale term is rejected).
// A transport from NewRaftTransport whose trusted voters are the group's
// latest configuration answers only a voter it counts; one it does not
// count is refused in the TLS handshake. So an answer means the group still
// counts self, and a refused certificate that it does not.
//
// Such a voter must not vote: an empty log grants its vote to any candidate,
// and the group may have counted this voter's lost acknowledgements in
// quorums (Raft §5.4.1 counts on every voter keeping its log). Remove it
// (hashicorp/raft RemoveServer) first, then let it join.
//
// Every voter in peers is asked, since a voter whose configuration still
// lists self (one that has not yet heard of the removal) could win an
// election with self's empty vote: one answer is enough to refuse. It
// returns nil once at least one voter refused and none answered (voters
// that cannot be reached are not waited for), and asks again every 200 ms
// while none could be reached, until ctx ends.
// Errors: ErrStillVoter (wrapped, naming the voter that answered); a voter
// that could not be asked (ctx's error with the last dial error) when none
// answered or refused.
func CheckNotVoter(ctx context.Context, a *Authority, cert tls.Certificate, self string, peers []replica.Peer) error {
	var others []replica.Peer
	for _, p := range peers {
		if p.ID != self {
			others = append(others, p)
		}
	}
	if len(others) == 0 {
		return fmt.Errorf("no running voter to ask besides %s in %v", self, peers)
	}
	l := &idleListener{done: make(chan struct{})}
	// Its own transport, not the voter's: only the dialling side is used.
	tr := RaftTransport(a, cert, l, peers)
	defer tr.Close()
	var last error
	for {
		refused := 0
		for _, p := range others {
			req := &raft.RequestVoteRequest{
				RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte(self)},
				Term:      0,
			}
			var resp raft.RequestVoteResponse
			err := tr.RequestVote(raft.ServerID(p.ID), raft.ServerAddress(p.Address), req, &resp)
			switch {
			case err == nil:
				return fmt.Errorf("voter %s (%s) answers %s's peer certificate (term %d): %w", p.ID, p.Address, self, resp.Term, ErrStillVoter)
			case strings.Contains(err.Error(), "bad certificate"):
				refused++ // refused in the handshake: not in its configuration
			default:
				last = fmt.Errorf("voter %s (%s): %w", p.ID, p.Address, err)
			}
		}
		if refused > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("could not ask any of %v whether it counts %s: %w (last: %v)", others, self, ctx.Err(), last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// idleListener accepts nothing until closed.
type idleListener struct {
	once sync.Once
	done chan struct{}
}

func (l *idleListener) Accept() (net.Conn, error) {
	<-l.done
	return nil, net.ErrClosed
}

func (l *idleListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *idleListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }
