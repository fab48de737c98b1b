package service

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/ownership-book/ownership/examples/ownership"
)

// forge returns a certificate signed by a's own key, shaped like a node
// certificate for name and then changed by edit: what a mistaken or
// compromised issuing step could produce.
func forge(t *testing.T, a *Authority, name string, edit func(*x509.Certificate)) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: name},
		DNSNames:     []string{name},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	edit(tmpl)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

// Certificates that chain to our authority but do not name exactly one node
// on the roster, for client authentication, now, are refused in the
// handshake: expired, not yet valid, a server-only certificate, one naming
// two roster nodes, one whose common name is not its DNS name, one with an
// empty name. No method runs and the record does not change; a proper
// certificate still gets through.
// Reference: chapter "The ownership service", section "Who is calling:
// learned, never told".
func TestCertificateNotNamingExactlyOneNodeIsRefused(t *testing.T) {
	e := newLocalEnv(t)
	e.ownedBy("x", "A")
	before, calls := e.record("x"), e.server.MethodCalls()
	now := time.Now()
	cases := map[string]tls.Certificate{
		"expired": forge(t, e.auth, "A", func(c *x509.Certificate) {
			c.NotBefore, c.NotAfter = now.Add(-2*time.Hour), now.Add(-time.Hour)
		}),
		"not yet valid": forge(t, e.auth, "A", func(c *x509.Certificate) {
			c.NotBefore, c.NotAfter = now.Add(time.Hour), now.Add(2*time.Hour)
		}),
		"server certificate": forge(t, e.auth, "A", func(c *x509.Certificate) {
			c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		}),
		"names two roster nodes": forge(t, e.auth, "A", func(c *x509.Certificate) {
			c.DNSNames = []string{"A", "B"}
		}),
		"names a node and the service": forge(t, e.auth, "A", func(c *x509.Certificate) {
			c.DNSNames = []string{"A", ServiceName}
		}),
		"common name is not its DNS name": forge(t, e.auth, "A", func(c *x509.Certificate) {
			c.DNSNames = []string{"B"}
		}),
		"no DNS name": forge(t, e.auth, "A", func(c *x509.Certificate) { c.DNSNames = nil }),
		"empty name":  forge(t, e.auth, "", func(c *x509.Certificate) { c.DNSNames = nil }),
	}
	for name, cert := range cases {
		t.Run(name, func(t *testing.T) {
			if err := tlsDial(e.addr, ClientTLS(e.auth, cert)); err == nil {
				t.Fatal("handshake and request succeeded; want the certificate refused")
			}
		})
	}
	if got := e.server.MethodCalls(); got != calls {
		t.Fatalf("%d methods ran for refused certificates", got-calls)
	}
	if got := e.record("x"); got != before {
		t.Fatalf("record changed:\n got %s\nwant %s", got, before)
	}
	good := forge(t, e.auth, "B", func(*x509.Certificate) {})
	if err := tlsDial(e.addr, ClientTLS(e.auth, good)); err != nil {
		t.Fatalf("a proper certificate for B: %v", err)
	}
}

// A node's certificate proves who the node is to the service; it must not
// let the node pose as the service. Here A, whose token went stale in a
// handover, runs an impostor that answers every fence check "valid" with
// its own certificate, and the resource server's client dials it: the
// client refuses the impostor in the handshake, so the stale write fails.
// Before the fix, node certificates also named the service and allowed
// server authentication, and the stale write landed.
// Reference: chapter "The ownership service", section "Who is calling:
// learned, never told".
func TestNodeCertificateCannotPoseAsTheService(t *testing.T) {
	e := newLocalEnv(t)
	tokA := e.ownedBy("x", "A")
	ctx := ctxT(t)
	if _, err := e.client("A").BeginTransfer(ctx, "x", 1, "B"); err != nil {
		t.Fatal(err)
	}
	certA, err := e.auth.Issue("A")
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	impostor := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			json.NewEncoder(w).Encode(Validity{Valid: true, Issued: true, CurrentEpoch: 1})
		}),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{certA}},
		ErrorLog:  e.server.HTTPServer(e.auth, certA).ErrorLog,
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); impostor.ServeTLS(l, "", "") }()
	defer func() { impostor.Close(); wg.Wait() }()

	store := NewStore("x", clientFor(t, e.auth, "kv", l.Addr().String()))
	err = store.Put(ctx, tokA, "k", "stale write from A")
	if err == nil {
		t.Fatal("the store took A's stale write on the word of A's impostor")
	}
	var ce *tls.CertificateVerificationError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v; want the impostor's certificate refused", err)
	}
	if _, ok := store.Get("k"); ok {
		t.Fatal("value stored")
	}
}

// A voter's certificates are not a node's: its server certificate and its
// Raft peer certificate, presented as a client, are refused even when the
// name in them is on the roster.
func TestServerCertificateCannotCall(t *testing.T) {
	e := newLocalEnv(t)
	e.ownedBy("x", "A")
	calls := e.server.MethodCalls()
	for name, issue := range map[string]func(ownership.NodeID) (tls.Certificate, error){
		"server": e.auth.IssueServer, "peer": e.auth.IssuePeer,
	} {
		voterA, err := issue("A")
		if err != nil {
			t.Fatal(err)
		}
		if err := tlsDial(e.addr, ClientTLS(e.auth, voterA)); err == nil {
			t.Fatalf("a voter's %s certificate named A was accepted as node A's", name)
		}
	}
	if e.server.MethodCalls() != calls {
		t.Fatal("a method ran")
	}
}

// Names that cannot be nodes are refused when issuing and in a roster.
func TestInvalidNodeNamesAreRefused(t *testing.T) {
	a := newAuthority(t)
	for _, n := range []ownership.NodeID{"", "a b", "x/y", "ä", ownership.NodeID(make([]byte, 65))} {
		if _, err := a.Issue(n); !errors.Is(err, ErrMalformed) {
			t.Errorf("Issue(%q) = %v; want ErrMalformed", n, err)
		}
		if _, err := a.IssueServer(n); !errors.Is(err, ErrMalformed) {
			t.Errorf("IssueServer(%q) = %v; want ErrMalformed", n, err)
		}
		if _, err := NewRoster("A", n); !errors.Is(err, ErrMalformed) {
			t.Errorf("NewRoster(A, %q) = %v; want ErrMalformed", n, err)
		}
	}
}

// A stranger who opens a connection and never completes the TLS handshake
// is cut off after HandshakeTimeout; it cannot hold connections (and the
// server's goroutines and file descriptors) open for ever. Before the fix
// the server set no timeout and kept such a connection indefinitely.
func TestStrangerCannotHoldAConnectionOpen(t *testing.T) {
	t.Parallel()
	e := newLocalEnv(t)
	conn, err := net.Dial("tcp", e.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	conn.SetReadDeadline(start.Add(3 * HandshakeTimeout))
	_, err = conn.Read(make([]byte, 1)) // send nothing, wait for the server
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection still open after %v without a handshake", 3*HandshakeTimeout)
	}
	t.Logf("server closed the silent connection after %v (%v)", time.Since(start).Round(100*time.Millisecond), err)
}
