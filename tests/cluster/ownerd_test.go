package cluster_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
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
	var ps []*proc
	var peers []string
	for i := range 3 {
		p := &proc{id: fmt.Sprintf("v%d", i+1), addr: freePort(t, "127.0.0.1"), raft: freePort(t, "127.0.0.1")}
		peers = append(peers, p.id+"="+p.raft)
		ps = append(ps, p)
	}
	start := func(p *proc) { t.Helper(); p.start(t, bin) }
	kill := func(p *proc) { p.kill() }
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

// proc is one ownerd voter process.
type proc struct {
	id, addr, raft, admin string
	args                  []string
	cmd                   *exec.Cmd
	prefix                []string  // runs the binary through this command (a network namespace's ip netns exec)
	stderr                io.Writer // where the voter's stderr goes (nil: the test's)
	starts                int
}

var serving = regexp.MustCompile(`^ownerd: voter (\S+) serving on `)

// start runs the voter and waits until it serves (its admin address, when
// it has one, is up by then too: it is printed after).
func (p *proc) start(t *testing.T, bin string) {
	t.Helper()
	argv := append(append(append([]string(nil), p.prefix...), bin), p.args...)
	if p.starts++; p.starts == 1 && slices.Contains(p.args, "-peers") && !slices.Contains(p.args, "-join") {
		argv = append(argv, "-bootstrap") // the group's first start only
	}
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // no voter outlives a killed test
	out, _ := p.cmd.StdoutPipe()
	p.cmd.Stderr = os.Stderr
	if p.stderr != nil {
		p.cmd.Stderr = p.stderr
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ok := make(chan bool, 2)
	go func() {
		sc := bufio.NewScanner(out)
		seen := false
		for sc.Scan() {
			if serving.MatchString(sc.Text()) && !seen {
				seen = true
				if p.admin == "" {
					ok <- true
				}
			}
			if strings.Contains(sc.Text(), "membership admin on") {
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

func (p *proc) kill() {
	if p.cmd != nil {
		p.cmd.Process.Kill()
		p.cmd.Wait()
		p.cmd = nil
	}
}

func mustCert(t *testing.T, dir, n string) tls.Certificate {
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, n+".pem"), filepath.Join(dir, n+".key"))
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// TestOwnerdReplaceVoter replaces a dead ownerd voter through the leader's
// loopback admin address: v3 is killed for good and removed
// (RemoveServer), v4 starts with -join and an empty data directory and is
// added (AddVoter), catches up, and is then needed for a quorum: with v1 or
// v2 killed as well, x's record (held by B after a handover) is still
// served. A follower's admin address refuses the change with 421 naming the
// leader. Reference: Ongaro, "Consensus: Bridging Theory and Practice",
// 2014, §4.1.
func TestOwnerdReplaceVoter(t *testing.T) {
	bin := binary(t, "ownership/ownerd")
	root := t.TempDir()
	certs := filepath.Join(root, "certs")
	if out, err := exec.Command(bin, "-init-ca", certs).CombinedOutput(); err != nil {
		t.Fatalf("ownerd -init-ca: %v\n%s", err, out)
	}
	var ps []*proc
	var peers []string
	for i := range 4 {
		p := &proc{id: fmt.Sprintf("v%d", i+1), addr: freePort(t, "127.0.0.1"), raft: freePort(t, "127.0.0.1"), admin: freePort(t, "127.0.0.1")}
		ps = append(ps, p)
		if i < 3 {
			peers = append(peers, p.id+"="+p.raft)
		}
	}
	t.Cleanup(func() {
		for _, p := range ps {
			p.kill()
		}
	})
	for _, p := range ps[:3] {
		p.args = []string{"-id", p.id, "-addr", p.addr, "-raft-addr", p.raft, "-admin", p.admin,
			"-data", filepath.Join(root, p.id), "-ca", certs, "-peers", strings.Join(peers, ",")}
		p.start(t, bin)
	}
	v1, v2, v3, v4 := ps[0], ps[1], ps[2], ps[3]
	// v4 trusts v1, v2 and itself until its log holds the configuration.
	v4.args = []string{"-id", "v4", "-addr", v4.addr, "-raft-addr", v4.raft, "-admin", v4.admin, "-join",
		"-data", filepath.Join(root, "v4"), "-ca", certs, "-peers", strings.Join([]string{peers[0], peers[1], "v4=" + v4.raft}, ",")}

	caPEM, _ := os.ReadFile(filepath.Join(certs, "ca.pem"))
	caKey, _ := os.ReadFile(filepath.Join(certs, "ca.key"))
	auth, err := service.LoadAuthority(caPEM, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	all := func(ps ...*proc) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.addr)
		}
		return out
	}
	a := service.NewClient(auth, mustCert(t, certs, "A"), all(v1, v2, v3)...)
	b := service.NewClient(auth, mustCert(t, certs, "B"), all(v1, v2, v3)...)
	defer a.Close()
	defer b.Close()
	for {
		if _, err = a.Acquire(ctx, "x", 1); err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("A could not acquire x: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := a.BeginTransfer(ctx, "x", 1, "B"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CompleteRelease(ctx, "x", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Acquire(ctx, "x", 2); err != nil {
		t.Fatal(err)
	}

	admin := func(p *proc, method, path, body string) (int, string) {
		req, _ := http.NewRequestWithContext(ctx, method, "http://"+p.admin+path, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	v3.kill()
	// Find the leader among v1, v2 by its admin view.
	var leader, follower *proc
	for leader == nil {
		for _, p := range []*proc{v1, v2} {
			if code, body := admin(p, "GET", "/v1/cluster", ""); code == 200 && strings.Contains(body, `"leader":"`+p.id+`"`) {
				leader = p
			}
		}
		if ctx.Err() != nil {
			t.Fatal("no leader among v1, v2")
		}
		time.Sleep(50 * time.Millisecond)
	}
	follower = v1
	if leader == v1 {
		follower = v2
	}
	if code, body := admin(follower, "DELETE", "/v1/cluster/voters/v3", ""); code != http.StatusMisdirectedRequest || !strings.Contains(body, leader.id) {
		t.Fatalf("DELETE v3 on follower %s: %d %s, want 421 naming %s", follower.id, code, body, leader.id)
	}
	if code, body := admin(leader, "DELETE", "/v1/cluster/voters/v3", ""); code != 200 || strings.Contains(body, `"v3"`) {
		t.Fatalf("DELETE v3 on leader %s: %d %s", leader.id, code, body)
	}
	v4.start(t, bin)
	if code, body := admin(leader, "POST", "/v1/cluster/voters", `{"id":"v4","raft":"`+v4.raft+`"}`); code != 200 || !strings.Contains(body, `"v4"`) {
		t.Fatalf("add v4 on leader %s: %d %s", leader.id, code, body)
	}
	time.Sleep(time.Second) // v4 catches up
	leader.kill()           // v4 is now needed for a quorum
	kv := service.NewClient(auth, mustCert(t, certs, "kv"), all(v1, v2, v4)...)
	defer kv.Close()
	s, err := kv.State(ctx, "x")
	if err != nil {
		t.Fatalf("State(x) with v3 replaced by v4 and %s killed: %v", leader.id, err)
	}
	if !strings.Contains(fmt.Sprint(s), "B") {
		t.Fatalf("State(x) = %v, want held by B", s)
	}
	t.Logf("replaced v3 by v4, killed %s; x is %v", leader.id, s)
}

// TestOwnerdLostDataDir: as TestStreamdLostDataDir, for ownerd. Three
// voters start (the first start bootstraps), v3 is killed, its data
// directory removed, and it is started again with its usual command line
// (-peers, no -bootstrap): it must exit with an error naming the directory
// and -join, instead of bootstrapping a group of its own and voting with an
// empty log (Raft §5.4.1). Started with -join while the group still counts
// it, it must refuse too, saying to remove it first. Then it is brought
// back as the messages say: removed on the leader's admin address, started
// with -join, added, and it follows the leader.
func TestOwnerdLostDataDir(t *testing.T) {
	bin := binary(t, "ownership/ownerd")
	root := t.TempDir()
	certs := filepath.Join(root, "certs")
	if out, err := exec.Command(bin, "-init-ca", certs).CombinedOutput(); err != nil {
		t.Fatalf("ownerd -init-ca: %v\n%s", err, out)
	}
	var ps []*proc
	var peers []string
	for i := range 3 {
		p := &proc{id: fmt.Sprintf("v%d", i+1), addr: freePort(t, "127.0.0.1"), raft: freePort(t, "127.0.0.1"), admin: freePort(t, "127.0.0.1")}
		peers = append(peers, p.id+"="+p.raft)
		ps = append(ps, p)
	}
	t.Cleanup(func() {
		for _, p := range ps {
			p.kill()
		}
	})
	for _, p := range ps {
		p.args = []string{"-id", p.id, "-addr", p.addr, "-raft-addr", p.raft, "-admin", p.admin, "-data", filepath.Join(root, p.id),
			"-ca", certs, "-peers", strings.Join(peers, ",")}
		p.start(t, bin)
	}
	v3 := ps[2]
	v3.kill()
	dir := filepath.Join(root, v3.id)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	// refused starts v3 with args and requires it to exit within 10 s,
	// its output holding every one of wants.
	refused := func(args []string, wants ...string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case err := <-exited:
			for _, want := range wants {
				if !strings.Contains(out.String(), want) {
					t.Fatalf("voter v3 exited (%v) on an empty data directory without naming %q:\n%s", err, want, out.String())
				}
			}
			t.Logf("voter v3 refused to start on an empty data directory (%v): %s", err, strings.TrimSpace(out.String()))
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
			t.Fatalf("voter v3 started on an empty data directory in a running group that counts it, with %q\n%s", args, out.String())
		}
	}
	// Its usual command line: it would bootstrap a group of its own.
	refused(v3.args, dir, "-join")
	// With -join, before it is removed: the group still counts it, and it
	// would vote with an empty log.
	refused(append(slices.Clone(v3.args), "-join"), "DELETE /v1/cluster/voters/v3")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin := func(p *proc, method, path, body string) (int, string) {
		req, _ := http.NewRequestWithContext(ctx, method, "http://"+p.admin+path, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	var leader *proc
	for leader == nil {
		for _, p := range ps[:2] {
			if code, body := admin(p, "GET", "/v1/cluster", ""); code == 200 && strings.Contains(body, `"leader":"`+p.id+`"`) {
				leader = p
			}
		}
		if ctx.Err() != nil {
			t.Fatal("no leader among v1, v2")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code, body := admin(leader, "DELETE", "/v1/cluster/voters/v3", ""); code != 200 || strings.Contains(body, `"v3"`) {
		t.Fatalf("DELETE v3 on leader %s: %d %s", leader.id, code, body)
	}
	// The Raft ports trust the configuration as it was at most 100 ms ago:
	// wait until both voters' views have dropped v3, and then some.
	for _, p := range ps[:2] {
		for {
			if code, body := admin(p, "GET", "/v1/cluster", ""); code == 200 && !strings.Contains(body, `"id":"v3"`) {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("voter %s still counts v3", p.id)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	time.Sleep(300 * time.Millisecond)
	v3.args = append(v3.args, "-join")
	v3.start(t, bin)
	if code, body := admin(leader, "POST", "/v1/cluster/voters", `{"id":"v3","raft":"`+v3.raft+`"}`); code != 200 || !strings.Contains(body, `"v3"`) {
		t.Fatalf("add v3 on leader %s: %d %s", leader.id, code, body)
	}
	for {
		code, body := admin(v3, "GET", "/v1/cluster", "")
		if code == 200 && strings.Contains(body, `"leader":"`+leader.id+`"`) && strings.Contains(body, `{"id":"v3","raft":"`+v3.raft+`"}`) {
			t.Logf("v3 is back: %s", strings.TrimSpace(body))
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("v3, added again, does not follow %s: %d %s", leader.id, code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
