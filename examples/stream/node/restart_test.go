package node

import (
	"strings"
	"testing"
	"time"
)

// TestRestartDefaultRaftAddrs starts a durable three-voter cluster with the
// default Raft address (port 0: free ports), appends, closes it and starts
// it again on the same directory with the same options. The voters' stored
// configuration names the Raft addresses of the first start, so the second
// start must listen there again; then a leader is elected and the appends
// are still in the stream.
// Reference: Raft §5.2 (a voter restarts from its persistent state and
// must be reachable at the address its peers know).
func TestRestartDefaultRaftAddrs(t *testing.T) {
	dir := t.TempDir()
	opts := Options{Voters: 3, Dir: dir, HeartbeatTimeout: 100 * time.Millisecond,
		ElectionTimeout: 100 * time.Millisecond, LeaderLeaseTimeout: 50 * time.Millisecond}
	c, err := Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	// On a busy machine the short timeouts can move the leadership while
	// the test runs: the requests are resent while the cluster answers
	// "try again" (503 with Retry-After), instead of assuming a stable
	// leader.
	first := c
	closed := false
	t.Cleanup(func() {
		if !closed {
			first.Close()
		}
	})
	createOK(t, c.Nodes[0].URL)
	for seq := range 3 {
		appendOK(t, c.Nodes[seq].URL, 1, seq, "x")
	}
	closed = true
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	// Another number of voters on the directory is refused, naming the file.
	one := opts
	one.Voters = 1
	if c1, err := Start(one); err == nil || !strings.Contains(err.Error(), PeersFile) {
		if c1 != nil {
			c1.Close()
		}
		t.Errorf("one voter on a three-voter directory: %v, want an error naming %s", err, PeersFile)
	}

	c, err = Start(opts)
	if err != nil {
		t.Fatalf("restart on the same directory: %v", err)
	}
	defer c.Close()
	if resp, b := readAll(t, c.Nodes[1].URL); resp.StatusCode != 200 || b != "xxx" {
		t.Errorf("read after restart: %s %q, want 200 \"xxx\"", resp.Status, b)
	}
}
