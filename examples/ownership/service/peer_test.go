package service

import (
	"crypto/tls"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/ownership-book/ownership/examples/ownership"
	"github.com/ownership-book/ownership/examples/replica"
)

// Three voters speak Raft over RaftTransport: they elect a leader and
// replicate the owner record. Only a voter's peer certificate opens a Raft
// port: a node's certificate (even one named like a voter), the service's
// server certificate, a peer certificate for a name outside the group and
// one from another authority are each refused in the handshake, and no
// voter's term moves.
// Reference: chapter "The ownership service", section "The owner record in
// Raft".
func TestRaftTransportAdmitsOnlyVoters(t *testing.T) {
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
	var groups []*replica.Group
	var machines []*Machine
	for i, p := range peers {
		cert, err := auth.IssuePeer(ownership.NodeID(p.ID))
		if err != nil {
			t.Fatal(err)
		}
		tr := RaftTransport(auth, cert, ls[i], peers)
		m := NewMachine()
		g, err := replica.Open(replica.Config{
			ID: p.ID, Transport: tr, Voters: peers,
			HeartbeatTimeout: 300 * time.Millisecond, ElectionTimeout: 300 * time.Millisecond,
			LeaderLeaseTimeout: 300 * time.Millisecond,
		}, m)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close(); tr.Close() })
		groups, machines = append(groups, g), append(machines, m)
	}
	ctx := ctxT(t)
	// Create x through whichever voter leads. A leader change on a busy
	// machine may make the outcome unknown; the entry is then proposed
	// again, and a copy that finds x already there is refused harmlessly.
	for created := false; !created; time.Sleep(10 * time.Millisecond) {
		if ctx.Err() != nil {
			t.Fatal("no leader over the TLS transport committed x")
		}
		for _, g := range groups {
			if g.IsLeader() {
				_, err := g.Apply(ctx, mustJSON(Request{Op: OpCreate, Actor: "x", To: "A"}))
				created = err == nil
			}
		}
	}
	for i, m := range machines {
		for ctx.Err() == nil {
			if _, err := m.Read("x"); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if _, err := m.Read("x"); err != nil {
			t.Fatalf("voter %s did not replicate x: %v", peers[i].ID, err)
		}
	}

	terms := func() (ts []uint64) {
		for _, g := range groups {
			ts = append(ts, g.Status().Term)
		}
		return ts
	}
	before := terms()
	other := newAuthority(t)
	certs := map[string]func() (tls.Certificate, error){
		"node certificate named v1":    func() (tls.Certificate, error) { return auth.Issue("v1") },
		"server certificate of v2":     func() (tls.Certificate, error) { return auth.IssueServer("v2") },
		"peer certificate outside":     func() (tls.Certificate, error) { return auth.IssuePeer("v9") },
		"peer certificate, another CA": func() (tls.Certificate, error) { return other.IssuePeer("v1") },
	}
	// probe reports whether the Raft port at addr kept a connection made
	// with cert open (accepted) rather than refusing it in the handshake.
	probe := func(cert tls.Certificate) (accepted bool) {
		cfg := &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: auth.Pool(), ServerName: "v1", MinVersion: tls.VersionTLS13}
		conn, err := tls.Dial("tcp", peers[0].Address, cfg)
		if err != nil {
			return false
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(time.Second))
		// Half of an RPC frame: a voter that accepted the connection waits
		// for the rest; one that refused the certificate hangs up.
		conn.Write([]byte{0})
		_, err = conn.Read(make([]byte, 1))
		var ne net.Error
		return errors.As(err, &ne) && ne.Timeout()
	}
	for name, issue := range certs {
		t.Run(name, func(t *testing.T) {
			cert, err := issue()
			if err != nil {
				t.Fatal(err)
			}
			if probe(cert) {
				t.Fatal("the Raft port accepted the connection")
			}
		})
	}
	// The probe can tell: a voter's peer certificate is accepted.
	if peer, err := auth.IssuePeer("v2"); err != nil || !probe(peer) {
		t.Fatalf("a voter's peer certificate was not accepted (%v)", err)
	}
	// A plain Raft transport gets no answer either, and its term is not
	// taken up.
	stranger, err := raft.NewTCPTransport("127.0.0.1:0", nil, 1, 2*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stranger.Close()
	var resp raft.AppendEntriesResponse
	req := &raft.AppendEntriesRequest{RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("mallory")}, Term: before[0] + 100}
	if err := stranger.AppendEntries("v1", raft.ServerAddress(peers[0].Address), req, &resp); err == nil {
		t.Fatalf("a plain Raft transport got an answer (term %d)", resp.Term)
	}
	// Elections of their own may move the terms a little on a busy
	// machine; the stranger's term, a hundred ahead, must not be taken up.
	for i, term := range terms() {
		if term >= req.Term {
			t.Fatalf("voter %s took up the stranger's term: %d (it was %d)", peers[i].ID, term, before[i])
		}
	}
}

// A peer certificate may serve (voters dial each other), so it must never
// carry the service's name: IssuePeer refuses ServiceName, which would let
// that voter's Raft certificate answer nodes as the service.
func TestPeerCertificateCannotBeNamedAfterTheService(t *testing.T) {
	if _, err := newAuthority(t).IssuePeer(ServiceName); !errors.Is(err, ErrMalformed) {
		t.Fatalf("IssuePeer(%q) = %v; want ErrMalformed", ServiceName, err)
	}
}
