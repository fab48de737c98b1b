package node

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// chunked is a body of unknown length, so the client sends it chunked.
type chunked struct{ r io.Reader }

func (c chunked) Read(p []byte) (int, error) { return c.r.Read(p) }

// TestLeaderKilledMidAppend runs four idempotent producers that append
// through random voters (chunked bodies, so followers must forward what
// they read) and resend an append whose answer was an error or a 5xx with
// the same sequence number. Meanwhile the leader dies (its Raft voter and
// HTTP server close). Every answer is 200, 204 duplicate, or a 5xx /
// broken connection; never a 4xx. Afterwards the stream holds every
// producer's appends exactly once and in order, and every 200 was a first
// application.
// Reference: PROTOCOL.md 5.2.1 (retry with the same sequence number is a
// duplicate); Raft §5.3; chapter "The epoch-fenced stream".
func TestLeaderKilledMidAppend(t *testing.T) {
	c := fastCluster(t, 3)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	leader, err := c.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var alive []*Node
	for _, nd := range c.Nodes {
		if nd != leader {
			alive = append(alive, nd)
		}
	}
	mustDo(t, "PUT", alive[0].URL+"/v1/stream/s", map[string]string{"Content-Type": "text/plain; charset=utf-8"}, "")
	const producers, perProducer = 4, 150
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []string
	firsts, retries := 0, 0
	killed := make(chan struct{})
	halfway := make(chan struct{})
	var once sync.Once
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(p), 1))
			for seq := 0; seq < perProducer; {
				nodes := c.Nodes
				select {
				case <-killed:
					nodes = alive
				default:
				}
				nd := nodes[rng.IntN(len(nodes))]
				body := fmt.Sprintf("p%d-%d\n", p, seq)
				req, _ := http.NewRequestWithContext(ctx, "POST", nd.URL+"/v1/stream/s", chunked{strings.NewReader(body)})
				req.Header.Set("Content-Type", "text/plain; charset=utf-8")
				req.Header.Set("Producer-Id", fmt.Sprintf("p%d", p))
				req.Header.Set("Producer-Epoch", "1")
				req.Header.Set("Producer-Seq", fmt.Sprint(seq))
				resp, err := http.DefaultClient.Do(req)
				if ctx.Err() != nil {
					return
				}
				status := 0
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					status = resp.StatusCode
				}
				mu.Lock()
				switch {
				case status == 200:
					firsts++
					seq++
					if firsts == producers*perProducer/3 {
						once.Do(func() { close(halfway) })
					}
				case status == 204:
					seq++
				case err != nil || status >= 500:
					retries++
					time.Sleep(20 * time.Millisecond)
				default:
					errs = append(errs, fmt.Sprintf("p%d seq %d via %s: %d", p, seq, nd.ID, status))
					seq = perProducer
				}
				mu.Unlock()
			}
		}()
	}
	// The producers may all stop before a third of the appends is in (a
	// 4xx, or the 30 s bound on a starved machine): then nothing closes
	// halfway, and waiting on it alone would hang the package.
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-halfway:
	case <-finished:
		for _, e := range errs {
			t.Error(e)
		}
		t.Fatalf("the producers stopped after %d first applications, before a third of %d (ctx: %v)", firsts, producers*perProducer, ctx.Err())
	}
	leader.http.Close()
	leader.Group.Close()
	close(killed)
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatal("producers did not finish in 30s")
	}
	for _, e := range errs {
		t.Error(e)
	}
	t.Logf("%d first applications, %d retries after errors or 5xx", firsts, retries)
	var b []byte
	for {
		resp, err := http.Get(alive[1].URL + "/v1/stream/s?offset=-1")
		if err != nil {
			t.Fatal(err)
		}
		b, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 {
			break
		}
		if resp.StatusCode < 500 || ctx.Err() != nil {
			t.Fatalf("read after the election: %d %s", resp.StatusCode, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	next := make([]int, producers)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	for _, line := range lines {
		var p, seq int
		if _, err := fmt.Sscanf(line, "p%d-%d", &p, &seq); err != nil || p >= producers {
			t.Fatalf("stream holds %q", line)
		}
		if seq != next[p] {
			t.Fatalf("producer p%d: seq %d in the stream where %d was due", p, seq, next[p])
		}
		next[p]++
	}
	for p, n := range next {
		if n != perProducer {
			t.Errorf("producer p%d: %d appends in the stream, want %d", p, n, perProducer)
		}
	}
	// An append applied whose answer was lost is answered 204 (duplicate)
	// when resent, so the stream may hold more than the 200s, by at most
	// the number of resends.
	if len(lines) < firsts || len(lines)-firsts > retries {
		t.Errorf("%d appends in the stream, %d answered 200, %d resent: a 200 was not a first application", len(lines), firsts, retries)
	}
}
