package service

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ownership-book/ownership/examples/ownership"
)

// env is one ownership service on a loopback port, behind mutual TLS, with
// a LocalRegistry whose floor lives in a test directory.
type env struct {
	t      *testing.T
	auth   *Authority
	roster Roster
	server *Server
	reg    Registry
	addr   string
	floor  string // floor file path ("" for a Raft registry)
}

var testRoster = []ownership.NodeID{"A", "B", "C", "kv"}

func newAuthority(t *testing.T) *Authority {
	t.Helper()
	a, err := NewAuthority("test-ca")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// newLocalEnv starts a server over a LocalRegistry in a fresh directory.
func newLocalEnv(t *testing.T) *env {
	t.Helper()
	path := filepath.Join(t.TempDir(), "floor")
	f, err := OpenFloor(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := startEnv(t, newAuthority(t), NewLocalRegistry(f, nil))
	e.floor = path
	return e
}

func startEnv(t *testing.T, auth *Authority, reg Registry) *env {
	t.Helper()
	roster, err := NewRoster(testRoster...)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, auth: auth, roster: roster, reg: reg, server: NewServer(reg, roster)}
	e.addr = serve(t, auth, "ownerd-1", e.server)
	return e
}

// serve serves h over mutual TLS on a loopback port until the test ends and
// returns its address.
func serve(t *testing.T, auth *Authority, name ownership.NodeID, s *Server) string {
	t.Helper()
	cert, err := auth.IssueServer(name)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := s.HTTPServer(auth, cert)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); hs.ServeTLS(l, "", "") }()
	t.Cleanup(func() { hs.Close(); wg.Wait() })
	return l.Addr().String()
}

// client returns a client that presents a certificate naming node, issued
// by the env's authority.
func (e *env) client(node ownership.NodeID) *Client {
	e.t.Helper()
	return clientFor(e.t, e.auth, node, e.addr)
}

func clientFor(t *testing.T, auth *Authority, node ownership.NodeID, addrs ...string) *Client {
	t.Helper()
	cert, err := auth.Issue(node)
	if err != nil {
		t.Fatal(err)
	}
	c := NewClient(auth, cert, addrs...)
	t.Cleanup(c.Close)
	return c
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// ownedBy creates actor x for node and lets node acquire it; it returns the
// token.
func (e *env) ownedBy(actor ownership.ActorID, node ownership.NodeID) ownership.Token {
	e.t.Helper()
	ctx := ctxT(e.t)
	s, err := e.server.Create(ctx, actor, node)
	if err != nil {
		e.t.Fatal(err)
	}
	tok, err := e.client(node).Acquire(ctx, actor, ownership.CurrentEpoch(s))
	if err != nil {
		e.t.Fatal(err)
	}
	return tok
}

// record returns the encoded record of actor (state and issued tokens).
func (e *env) record(actor ownership.ActorID) string {
	e.t.Helper()
	a, err := e.reg.Read(ctxT(e.t), actor)
	if err != nil {
		e.t.Fatal(err)
	}
	b, err := a.MarshalBinary()
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

func wantCode(t *testing.T, err error, code Code) *Error {
	t.Helper()
	var se *Error
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T): want an *Error with code %s", err, err, code)
	}
	if se.Code != code {
		t.Fatalf("error %v: code %s, want %s", err, se.Code, code)
	}
	if se.Rule == "" || se.Detail == "" {
		t.Fatalf("error %v: rule or detail is empty", err)
	}
	return se
}

// tlsDial makes the raw TLS handshake with cfg against addr and reports the
// error of the first read (TLS 1.3 reports a refused client certificate
// there, after the client's side of the handshake has finished).
func tlsDial(addr string, cfg *tls.Config) error {
	conn, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write([]byte("POST /v1/state HTTP/1.1\r\nHost: ownerd\r\nContent-Length: 13\r\n\r\n{\"actor\":\"x\"}")); err != nil {
		return err
	}
	buf := make([]byte, 1)
	_, err = conn.Read(buf)
	return err
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
