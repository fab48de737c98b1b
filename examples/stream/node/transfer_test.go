package node

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestAppendsAcrossLeadershipTransfers: producers keep appending, through
// the leader and through a follower, while the leader hands its leadership
// over (POST /v1/cluster/transfer, hashicorp/raft LeadershipTransfer) three
// times. During a transfer the old leader refuses proposals but still names
// itself as leader; its voter waits for the new leader and forwards there,
// so no append is refused for the transfer (no 503 naming the refusing voter
// as leader, none saying a transfer is in progress). An append that was in
// flight when leadership moved may be answered "outcome unknown"; its
// producer retries it and gets 200 or 204 (a duplicate). Reference: Ongaro's dissertation
// §3.10 (leadership transfer).
func TestAppendsAcrossLeadershipTransfers(t *testing.T) {
	c, err := Start(Options{Voters: 3, HeartbeatTimeout: 100 * time.Millisecond,
		ElectionTimeout: 100 * time.Millisecond, LeaderLeaseTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	leader, err := c.Leader(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	post := func(url, path, body string, h map[string]string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, url+path, strings.NewReader(body))
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	req, _ := http.NewRequest(http.MethodPut, leader.URL+"/v1/stream/t", nil)
	req.Header.Set("Content-Type", "text/plain")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: %v %v", resp, err)
	}

	var wg sync.WaitGroup
	stop := make(chan struct{})
	var mu sync.Mutex
	var bad []string
	n := 0
	for p := range 4 {
		wg.Go(func() {
			for seq := 0; ; seq++ {
				select {
				case <-stop:
					return
				default:
				}
				nd := c.Nodes[(p+seq)%len(c.Nodes)]
				for try := 0; ; try++ {
					code, msg := post(nd.URL, "/v1/stream/t", fmt.Sprintf("p%d-%d|", p, seq), map[string]string{
						"Content-Type": "text/plain", "Producer-Id": fmt.Sprintf("p%d", p),
						"Producer-Epoch": "0", "Producer-Seq": fmt.Sprint(seq)})
					// An append in flight when leadership moved may
					// have an unknown outcome: that is said, and the
					// producer retries it (idempotent: 200 or 204).
					if code == http.StatusServiceUnavailable && strings.Contains(msg, "outcome unknown") && try < 5 {
						continue
					}
					mu.Lock()
					n++
					if code != http.StatusOK && code != http.StatusNoContent {
						bad = append(bad, fmt.Sprintf("append through %s: %d %s", nd.ID, code, strings.TrimSpace(msg)))
					}
					mu.Unlock()
					break
				}
			}
		})
	}
	transfers := 0
	for range 3 {
		time.Sleep(150 * time.Millisecond)
		ld, err := c.Leader(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		// A transfer may fail on its own (the target fell behind, an
		// election got in first); the test needs some to succeed.
		if code, msg := post(ld.URL, AdminPrefix+"/transfer", "", nil); code != http.StatusOK {
			t.Logf("transfer from %s: %d %s", ld.ID, code, strings.TrimSpace(msg))
		} else {
			transfers++
		}
	}
	if transfers == 0 {
		t.Error("no leadership transfer succeeded: the test showed nothing")
	}
	time.Sleep(150 * time.Millisecond)
	close(stop)
	wg.Wait()
	t.Logf("%d appends across %d leadership transfers", n, transfers)
	for _, b := range bad {
		t.Error(b)
	}
}
