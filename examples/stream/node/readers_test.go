package node

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

func fastCluster(t *testing.T, voters int) *Cluster {
	t.Helper()
	c, err := Start(Options{Voters: voters, LongPoll: 30 * time.Second, HeartbeatTimeout: 100 * time.Millisecond,
		ElectionTimeout: 100 * time.Millisecond, LeaderLeaseTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// mustDo sends a request that is safe to resend (a create), resending it
// while the cluster answers "try again" (see retrying).
func mustDo(t *testing.T, method, url string, h map[string]string, body string) *http.Response {
	t.Helper()
	resp, _, _ := retrying(t, func() *http.Request {
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		for k, v := range h {
			req.Header.Set(k, v)
		}
		return req
	})
	return resp
}

// waitReaders waits until n readers (long-poll or SSE) wait on stream name
// on the voters of c, wherever a follower forwarded them; it fails the
// test after 20 s. Tests wait for this instead of sleeping, so that a slow
// machine does not run them before their readers are in place.
func waitReaders(t *testing.T, c *Cluster, name string, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := 0
		for _, nd := range c.Nodes {
			got += nd.Machine.Readers(name)
		}
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d readers wait on %s after 20s", got, n, name)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// settle waits until the goroutine count is at most want (or 5s passed)
// and returns the last count.
func settle(want int) int {
	n := runtime.NumGoroutine()
	for end := time.Now().Add(5 * time.Second); n > want && time.Now().Before(end); n = runtime.NumGoroutine() {
		time.Sleep(20 * time.Millisecond)
	}
	return n
}

// TestReadersThatLeaveLeakNothing opens long-poll and SSE readers on every
// voter (those on followers are forwarded to the leader), lets them wait,
// and disconnects them: the goroutines of both the follower's forward and
// the leader's handler must end.
func TestReadersThatLeaveLeakNothing(t *testing.T) {
	c := fastCluster(t, 3)
	defer c.Close()
	mustDo(t, "PUT", c.Nodes[0].URL+"/v1/stream/s", map[string]string{"Content-Type": "text/plain"}, "x")
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	time.Sleep(200 * time.Millisecond)
	base := runtime.NumGoroutine()
	const readers = 60
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := "offset=now&live=long-poll"
			if i%2 == 1 {
				q = "offset=-1&live=sse"
			}
			req, _ := http.NewRequestWithContext(ctx, "GET", c.Nodes[i%3].URL+"/v1/stream/s?"+q, nil)
			resp, err := client.Do(req)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	waitReaders(t, c, "s", readers)
	during := runtime.NumGoroutine()
	cancel()
	wg.Wait()
	after := settle(base + 5)
	t.Logf("goroutines: %d before, %d with %d readers, %d after they left", base, during, readers, after)
	if during < base+readers {
		t.Fatalf("only %d goroutines with %d readers waiting (base %d): readers not waiting", during, readers, base)
	}
	if after > base+5 {
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, true)
		t.Fatalf("%d goroutines after the readers left, %d before:\n%s", after, base, buf[:n])
	}
}

// TestFollowerReadersSurviveLeaderChange starts long-poll readers on a
// follower, closes the leader (process death in one process: its Raft
// voter and its HTTP server), and checks that each reader gets an answer
// (an error status or the data), never hangs, and that after the election
// a write through the follower reaches a new long-poll reader there.
func TestFollowerReadersSurviveLeaderChange(t *testing.T) {
	c := fastCluster(t, 3)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	leader, err := c.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var follower *Node
	for _, nd := range c.Nodes {
		if nd != leader {
			follower = nd
			break
		}
	}
	mustDo(t, "PUT", follower.URL+"/v1/stream/s", map[string]string{"Content-Type": "text/plain"}, "")
	type answer struct {
		status int
		err    error
	}
	answers := make(chan answer, 4)
	for range 4 {
		go func() {
			req, _ := http.NewRequestWithContext(ctx, "GET", follower.URL+"/v1/stream/s?offset=now&live=long-poll", nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				answers <- answer{err: err}
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			answers <- answer{status: resp.StatusCode}
		}()
	}
	waitReaders(t, c, "s", 4)
	leader.http.Close()
	leader.Group.Close()
	for range 4 {
		select {
		case a := <-answers:
			if a.err == nil && a.status < 500 {
				t.Errorf("long-poll through the follower when the leader died: %d, want a 5xx (or data)", a.status)
			}
			t.Logf("reader: status %d err %v", a.status, a.err)
		case <-ctx.Done():
			t.Fatal("a long-poll reader on a follower hangs after the leader died")
		}
	}
	// A new leader among the two left; until the follower knows it, an
	// append is answered 5xx with Retry-After or (the dead leader's port
	// refusing the connection) waits for it, then is served.
	start, refused := time.Now(), 0
	for {
		req, _ := http.NewRequestWithContext(ctx, "POST", follower.URL+"/v1/stream/s", strings.NewReader("after"))
		req.Header.Set("Content-Type", "text/plain")
		req.Header.Set("Producer-Id", "p")
		req.Header.Set("Producer-Epoch", "0")
		req.Header.Set("Producer-Seq", "0")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 || resp.StatusCode == 204 {
			break
		}
		if resp.StatusCode < 500 || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("append through the follower during the election: %d (Retry-After %q), want 5xx with Retry-After",
				resp.StatusCode, resp.Header.Get("Retry-After"))
		}
		refused++
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("append through the follower refused %d times, accepted %v after the leader died", refused, time.Since(start).Round(100*time.Millisecond))
	resp, err := http.Get(follower.URL + "/v1/stream/s?offset=-1")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "after" {
		t.Fatalf("read on the follower after the election: %d %q, want 200 \"after\"", resp.StatusCode, b)
	}
}
