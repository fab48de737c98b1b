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
// so every append is answered 200, and none is answered with a 503 that
// names the refusing voter as leader. Reference: Ongaro's dissertation
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
				code, msg := post(nd.URL, "/v1/stream/t", fmt.Sprintf("p%d-%d|", p, seq), map[string]string{
					"Content-Type": "text/plain", "Producer-Id": fmt.Sprintf("p%d", p),
					"Producer-Epoch": "0", "Producer-Seq": fmt.Sprint(seq)})
				mu.Lock()
				n++
				if code != http.StatusOK {
					bad = append(bad, fmt.Sprintf("append through %s: %d %s", nd.ID, code, strings.TrimSpace(msg)))
				}
				mu.Unlock()
			}
		})
	}
	for range 3 {
		time.Sleep(150 * time.Millisecond)
		ld, err := c.Leader(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if code, msg := post(ld.URL, AdminPrefix+"/transfer", "", nil); code != http.StatusOK {
			t.Errorf("transfer from %s: %d %s", ld.ID, code, msg)
		}
	}
	time.Sleep(150 * time.Millisecond)
	close(stop)
	wg.Wait()
	t.Logf("%d appends across 3 leadership transfers", n)
	for _, b := range bad {
		t.Error(b)
	}
}
