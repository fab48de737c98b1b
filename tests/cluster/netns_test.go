package cluster_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// netlab is a private network the test makes for itself: one network
// namespace per voter ("nem<pid>-<name>"), each with one veth interface
// (eth0) plugged into a bridge that lives in a namespace of its own
// ("nem<pid>-hub"), and one more veth pair that plugs the test process's
// namespace into the same bridge, so that the test (the clients, the
// checks) reaches every voter directly. Addresses are 10.a.b.0/24, a and b
// taken from the test's process id and checked against the routes already
// present; the test is .1, node i is .(10+i).
//
// Faults are real packet loss, made with iproute2 only (no iptables or
// traffic-control modules are needed): a voter's namespace gets a policy
// rule "from <peer> iif eth0 blackhole" ahead of the local table, so the
// kernel silently drops every packet from that peer before any socket sees
// it. That is a one-way cut (the peer's packets to this voter vanish; this
// voter's packets to the peer still arrive); both directions make a full
// partition. The test's own address is never cut: clients keep reaching an
// isolated voter, as in the Jepsen tests of a partitioned leader.
//
// Everything is torn down by t.Cleanup, even on failure; namespaces left
// by a test process that died (go test's timeout) are removed by the next
// run, which finds them by their prefix and a process id that is gone.
type netlab struct {
	t      testing.TB
	prefix string // "nem<pid>"
	subnet string // "10.a.b"
	hub    string
	host   string // the test's veth in its own namespace
	nodes  map[string]*labNode
	order  []*labNode

	mu  sync.Mutex
	cut map[[2]string]bool // {to, from}: to drops every packet from from
}

// labNode is one namespace with its address.
type labNode struct {
	name, ns, ip string
}

// ipCmd runs ip (or tc) with args, bounded in time, and returns its
// combined output and an error naming the command.
func ipCmd(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// cannotLab skips the test with why, or fails it when CI is set: in CI the
// machine is root with iproute2 installed (.ci/run), so a missing network
// namespace is a broken check, not an absent tool.
func cannotLab(t testing.TB, why string) {
	t.Helper()
	msg := "cannot make network namespaces (needs root and iproute2's ip): " + why
	if os.Getenv("CI") != "" {
		t.Fatal(msg + " (CI is set: this is a failure, not a skip)")
	}
	t.Skip(msg)
}

var staleNS = regexp.MustCompile(`^nem(\d+)-\S+`)

// removeStale deletes namespaces and host veths left by test processes
// that no longer exist.
func removeStale() {
	out, _ := ipCmd("netns", "list")
	for _, line := range strings.Split(out, "\n") {
		m := staleNS.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		pid, _ := strconv.Atoi(m[1])
		if pid == os.Getpid() || syscall.Kill(pid, 0) == nil {
			continue
		}
		name := strings.Fields(m[0])[0]
		ipCmd("netns", "del", name)
		ipCmd("link", "del", fmt.Sprintf("nem%dh", pid))
	}
}

// newNetlab makes the namespaces for names (e.g. "A", "B", "C").
func newNetlab(t testing.TB, names ...string) *netlab {
	t.Helper()
	if os.Geteuid() != 0 {
		cannotLab(t, "not running as root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		cannotLab(t, err.Error())
	}
	removeStale()
	pid := os.Getpid()
	l := &netlab{t: t, prefix: fmt.Sprintf("nem%d", pid), nodes: map[string]*labNode{}, cut: map[[2]string]bool{}}
	routes, _ := ipCmd("-4", "route", "show", "table", "all")
	for k := 0; ; k++ {
		if k == 64 {
			cannotLab(t, "no free 10.x.y.0/24 subnet")
		}
		a, b := 64+(pid>>8+k)%128, pid&255
		l.subnet = fmt.Sprintf("10.%d.%d", a, b)
		if !strings.Contains(routes, l.subnet+".") {
			break
		}
	}
	l.hub = l.prefix + "-hub"
	l.host = l.prefix + "h"
	if _, err := ipCmd("netns", "add", l.hub); err != nil {
		cannotLab(t, err.Error())
	}
	t.Cleanup(l.close)
	must := func(args ...string) {
		t.Helper()
		if _, err := ipCmd(args...); err != nil {
			l.close()
			cannotLab(t, err.Error())
		}
	}
	must("-n", l.hub, "link", "set", "lo", "up")
	must("-n", l.hub, "link", "add", "br0", "type", "bridge")
	must("-n", l.hub, "link", "set", "br0", "up")
	must("link", "add", l.host, "type", "veth", "peer", "name", "host", "netns", l.hub)
	must("-n", l.hub, "link", "set", "host", "master", "br0", "up")
	must("addr", "add", l.subnet+".1/24", "dev", l.host)
	must("link", "set", l.host, "up")
	for i, name := range names {
		n := &labNode{name: name, ns: l.prefix + "-" + name, ip: fmt.Sprintf("%s.%d", l.subnet, 10+i)}
		port := "p" + strconv.Itoa(i)
		must("netns", "add", n.ns)
		must("-n", n.ns, "link", "set", "lo", "up")
		must("-n", l.hub, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", n.ns)
		must("-n", l.hub, "link", "set", port, "master", "br0", "up")
		must("-n", n.ns, "addr", "add", n.ip+"/24", "dev", "eth0")
		must("-n", n.ns, "link", "set", "eth0", "up")
		// The local table moves behind the blackhole rules (preference
		// 100+), so a rule can drop a packet addressed to this namespace.
		must("-n", n.ns, "rule", "add", "pref", "1000", "lookup", "local")
		must("-n", n.ns, "rule", "del", "pref", "0")
		l.nodes[name] = n
		l.order = append(l.order, n)
	}
	return l
}

// close removes everything newNetlab made (processes in the namespaces
// must be gone first; the cluster's cleanup, registered later, runs
// earlier).
func (l *netlab) close() {
	for _, n := range l.order {
		ipCmd("netns", "del", n.ns)
	}
	ipCmd("link", "del", l.host) // also removes its peer in the hub
	ipCmd("netns", "del", l.hub)
	l.order = nil
}

// exec returns the command line prefix that runs a program in n's namespace.
func (l *netlab) exec(name string) []string {
	return []string{"ip", "netns", "exec", l.nodes[name].ns}
}

// apply makes name's namespace drop exactly the sources cut for it.
func (l *netlab) apply(name string) error {
	n := l.nodes[name]
	var froms []string
	for k := range l.cut {
		if k[0] == name {
			froms = append(froms, k[1])
		}
	}
	sort.Strings(froms)
	out, err := ipCmd("-n", n.ns, "rule", "show")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.Contains(line, "blackhole") {
			ipCmd("-n", n.ns, "rule", "del", "pref", strings.TrimSuffix(f[0], ":"))
		}
	}
	for i, from := range froms {
		if _, err := ipCmd("-n", n.ns, "rule", "add", "pref", strconv.Itoa(100+i), "from", l.nodes[from].ip,
			"iif", "eth0", "blackhole"); err != nil {
			return err
		}
	}
	return nil
}

// setCuts replaces the whole set of one-way cuts: each pair {to, from}
// means to drops every packet from from.
func (l *netlab) setCuts(cuts ...[2]string) {
	l.t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	touched := map[string]bool{}
	for k := range l.cut {
		touched[k[0]] = true
	}
	l.cut = map[[2]string]bool{}
	for _, k := range cuts {
		l.cut[k] = true
		touched[k[0]] = true
	}
	for _, n := range l.order {
		if touched[n.name] {
			if err := l.apply(n.name); err != nil {
				l.t.Fatal(err)
			}
		}
	}
}

// isolation returns the cuts that separate name from every other node,
// both ways.
func (l *netlab) isolation(name string) [][2]string {
	var cuts [][2]string
	for _, n := range l.order {
		if n.name != name {
			cuts = append(cuts, [2]string{name, n.name}, [2]string{n.name, name})
		}
	}
	return cuts
}

// heal removes every cut.
func (l *netlab) heal() { l.setCuts() }

// TestNetlab checks the harness itself: a TCP connection from one
// namespace to another reaches it (a refused port answers with a reset)
// until the destination drops the source's packets, and again after the
// heal; the test's own address is never cut.
func TestNetlab(t *testing.T) {
	lab := newNetlab(t, "A", "B")
	reach := func(from, to string) bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		// Port 9 has no listener: "Connection refused" proves the packets
		// went both ways; a timeout that they did not.
		cmd := exec.CommandContext(ctx, "ip", "netns", "exec", lab.nodes[from].ns, "bash", "-c",
			"timeout 1 bash -c 'echo > /dev/tcp/"+lab.nodes[to].ip+"/9' 2>&1; true")
		out, _ := cmd.CombinedOutput()
		return strings.Contains(string(out), "refused")
	}
	if !reach("A", "B") || !reach("B", "A") {
		t.Fatal("A and B do not reach each other before any cut")
	}
	lab.setCuts([2]string{"B", "A"})
	if reach("A", "B") {
		t.Error("A reaches B while B drops A's packets")
	}
	lab.setCuts(lab.isolation("A")...)
	if reach("B", "A") || reach("A", "B") {
		t.Error("A and B reach each other while A is isolated")
	}
	lab.heal()
	if !reach("A", "B") || !reach("B", "A") {
		t.Error("A and B do not reach each other after the heal")
	}
}
