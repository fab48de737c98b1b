package cluster_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ownership-book/ownership/examples/ownership"
	"github.com/ownership-book/ownership/examples/ownership/service"
)

// TestOwnerdCluster runs the ownership service as three ownerd processes
// (-id, -peers, a CA from -init-ca), Raft between them over mutual TLS: a
// handover of x from A to B runs through the voters while the leader is
// SIGKILLed in the middle of it; the handover completes on the other two,
// the token B acquires fences A's, and the killed voter, restarted on its
// data directory, is then needed for a quorum (the new leader is killed) and
// holds the handover. Reference: Raft §5.4 (Leader Completeness).
func TestOwnerdCluster(t *testing.T) {
	bin := binary(t, "ownership/ownerd")
	root := t.TempDir()
	certs := filepath.Join(root, "certs")
	if out, err := exec.Command(bin, "-init-ca", certs).CombinedOutput(); err != nil {
		t.Fatalf("ownerd -init-ca: %v\n%s", err, out)
	}
	type proc struct {
		id, addr, raft string
		args           []string
		cmd            *exec.Cmd
	}
	var ps []*proc
	var peers []string
	for i := range 3 {
		p := &proc{id: fmt.Sprintf("v%d", i+1), addr: freePort(t, "127.0.0.1"), raft: freePort(t, "127.0.0.1")}
		peers = append(peers, p.id+"="+p.raft)
		ps = append(ps, p)
	}
	serving := regexp.MustCompile(`^ownerd: voter (\S+) serving on `)
	start := func(p *proc) {
		t.Helper()
		p.cmd = exec.Command(bin, p.args...)
		out, _ := p.cmd.StdoutPipe()
		p.cmd.Stderr = os.Stderr
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ok := make(chan bool, 1)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if serving.MatchString(sc.Text()) {
					ok <- true
				}
			}
			ok <- false
		}()
		select {
		case good := <-ok:
			if !good {
				t.Fatalf("voter %s exited before serving", p.id)
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("voter %s does not serve after 15s", p.id)
		}
	}
	kill := func(p *proc) {
		if p.cmd != nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
			p.cmd = nil
		}
	}
	t.Cleanup(func() {
		for _, p := range ps {
			kill(p)
		}
	})
	var addrs []string
	for _, p := range ps {
		p.args = []string{"-id", p.id, "-addr", p.addr, "-raft-addr", p.raft, "-data", filepath.Join(root, p.id),
			"-ca", certs, "-peers", strings.Join(peers, ",")}
		start(p)
		addrs = append(addrs, p.addr)
	}
	caPEM, _ := os.ReadFile(filepath.Join(certs, "ca.pem"))
	caKey, _ := os.ReadFile(filepath.Join(certs, "ca.key"))
	auth, err := service.LoadAuthority(caPEM, caKey)
	if err != nil {
		t.Fatal(err)
	}
	client := func(n string) *service.Client {
		cert, err := tls.LoadX509KeyPair(filepath.Join(certs, n+".pem"), filepath.Join(certs, n+".key"))
		if err != nil {
			t.Fatal(err)
		}
		return service.NewClient(auth, cert, addrs...)
	}
	a, b, kv := client("A"), client("B"), client("kv")
	defer a.Close()
	defer b.Close()
	defer kv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()

	// The leader creates x for A once elected.
	var tokA ownership.Token
	for {
		tokA, err = a.Acquire(ctx, "x", 1)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("A could not acquire x at epoch 1: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := a.BeginTransfer(ctx, "x", 1, "B"); err != nil {
		t.Fatal(err)
	}
	leader := func() *proc {
		for {
			for _, p := range ps {
				if p.cmd == nil {
					continue
				}
				// A voter that leads answers State; the others 421.
				c := service.NewClient(auth, mustCert(t, certs, "kv"), p.addr)
				sctx, scancel := context.WithTimeout(ctx, 300*time.Millisecond)
				_, err := c.State(sctx, "x")
				scancel()
				c.Close()
				if err == nil {
					return p
				}
			}
			if ctx.Err() != nil {
				t.Fatal("no leader")
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	ld := leader()
	kill(ld) // SIGKILL mid-handover: the transfer began on a quorum's disks
	if _, err := a.CompleteRelease(ctx, "x", 1); err != nil {
		t.Fatalf("CompleteRelease after the leader %s was killed: %v", ld.id, err)
	}
	tokB, err := b.Acquire(ctx, "x", 2)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := kv.Validate(ctx, tokA); err != nil || v.Valid {
		t.Fatalf("A's token %v after B acquired %v: %+v, %v; want fenced", tokA, tokB, v, err)
	}
	// Restart the killed voter, then kill another: the group needs the
	// restarted one, which must hold the handover.
	start(ld)
	time.Sleep(time.Second)
	other := leader()
	kill(other)
	s, err := kv.State(ctx, "x")
	if err != nil {
		t.Fatalf("State(x) with %s restarted and %s killed: %v", ld.id, other.id, err)
	}
	if !strings.Contains(fmt.Sprint(s), "B") {
		t.Fatalf("State(x) = %v, want held by B", s)
	}
	t.Logf("killed %s mid-handover, restarted it, killed %s; x is %v", ld.id, other.id, s)
}

func mustCert(t *testing.T, dir, n string) tls.Certificate {
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, n+".pem"), filepath.Join(dir, n+".key"))
	if err != nil {
		t.Fatal(err)
	}
	return cert
}
