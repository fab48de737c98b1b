package cluster_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkStreamdMemory is a measurement, not a check: it starts three
// streamd processes (one voter each) and logs each voter's resident set
// (VmRSS) and peak (VmHWM) from /proc, and the size of its latest snapshot,
// after 10,000 streams, after 100,000 producers of one byte each, and after
// a 1 MB stream with 100 bodiless forks; then it restarts one voter from its
// snapshot and logs the same. It takes a minute or two:
//
//	go test ./tests/cluster -run '^$' -bench StreamdMemory -benchtime 1x -v
func BenchmarkStreamdMemory(b *testing.B) {
	bin := binary(b, "stream/streamd")
	send := func(cl *http.Client, method, url string, h map[string]string, body []byte, want int) error {
		req, _ := http.NewRequest(method, url, bytes.NewReader(body))
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := cl.Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			return fmt.Errorf("%s %s: %s", method, url, resp.Status)
		}
		return nil
	}
	scenario := func(name string, load func(t testing.TB, c *cluster, cl *http.Client)) {
		b.Run(name, func(t *testing.B) {
			c := newCluster(t, bin, "A", "B", "C")
			for _, v := range c.voters {
				v.args = append(v.args, "-max-body", "2000000", "-snapshot-interval", "200ms", "-snapshot-threshold", "1024")
				c.start(v)
			}
			c.leader(20 * time.Second)
			cl := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			start := time.Now()
			load(t, c, cl)
			time.Sleep(time.Second)
			for _, v := range c.voters {
				if err := send(cl, "POST", v.url+"/v1/cluster/snapshot", nil, nil, 200); err != nil {
					t.Logf("voter %s: %v", v.id, err)
				}
			}
			time.Sleep(2 * time.Second) // let the heap settle
			for _, v := range c.voters {
				rss, hwm := procMem(t, v.cmd.Process.Pid)
				t.Logf("%s: voter %s: RSS %d MB, peak %d MB, latest snapshot %s (load took %v)",
					name, v.id, rss>>10, hwm>>10, snapSize(v.dir), time.Since(start).Round(time.Second))
			}
			// A voter restarted on its data directory restores the snapshot.
			v := c.voters[2]
			c.kill(v)
			c.start(v)
			c.caughtUp(v, 60*time.Second)
			time.Sleep(2 * time.Second)
			rss, hwm := procMem(t, v.cmd.Process.Pid)
			t.Logf("%s: voter %s restarted from its snapshot: RSS %d MB, peak %d MB", name, v.id, rss>>10, hwm>>10)
		})
	}
	parallel := func(n, workers int, f func(i int) error) error {
		var next atomic.Int64
		var first error
		var mu sync.Mutex
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for {
					i := int(next.Add(1) - 1)
					if i >= n {
						return
					}
					if err := f(i); err != nil {
						mu.Lock()
						if first == nil {
							first = err
						}
						mu.Unlock()
						return
					}
				}
			})
		}
		wg.Wait()
		return first
	}
	text := map[string]string{"Content-Type": "text/plain"}
	scenario("10000 streams", func(t testing.TB, c *cluster, cl *http.Client) {
		ld := c.leader(10 * time.Second)
		if err := parallel(10000, 32, func(i int) error {
			return send(cl, "PUT", fmt.Sprintf("%s/v1/stream/s%05d", ld.url, i), text, []byte("0123456789"), 201)
		}); err != nil {
			t.Fatal(err)
		}
	})
	scenario("100000 producers", func(t testing.TB, c *cluster, cl *http.Client) {
		ld := c.leader(10 * time.Second)
		if err := send(cl, "PUT", ld.url+"/v1/stream/p", text, nil, 201); err != nil {
			t.Fatal(err)
		}
		if err := parallel(100000, 64, func(i int) error {
			return send(cl, "POST", ld.url+"/v1/stream/p", map[string]string{"Content-Type": "text/plain",
				"Producer-Id": "p" + strconv.Itoa(i), "Producer-Epoch": "0", "Producer-Seq": "0"}, []byte("x"), 200)
		}); err != nil {
			t.Fatal(err)
		}
	})
	scenario("1 MB stream, 100 forks", func(t testing.TB, c *cluster, cl *http.Client) {
		ld := c.leader(10 * time.Second)
		if err := send(cl, "PUT", ld.url+"/v1/stream/big", map[string]string{"Content-Type": "application/octet-stream"},
			bytes.Repeat([]byte("b"), 1_000_000), 201); err != nil {
			t.Fatal(err)
		}
		for i := range 100 {
			if err := send(cl, "PUT", fmt.Sprintf("%s/v1/stream/f%03d", ld.url, i), map[string]string{
				"Stream-Forked-From": "/v1/stream/big"}, nil, 201); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// procMem returns VmRSS and VmHWM of pid in KiB.
func procMem(t testing.TB, pid int) (rss, hwm int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && (f[0] == "VmRSS:" || f[0] == "VmHWM:") {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			if f[0] == "VmRSS:" {
				rss = n
			} else {
				hwm = n
			}
		}
	}
	return rss, hwm
}

// snapSize returns the size of the newest snapshot in dir/snapshots.
func snapSize(dir string) string {
	ms, _ := filepath.Glob(filepath.Join(dir, "snapshots", "*", "state.bin"))
	if len(ms) == 0 {
		return "none"
	}
	var newest string
	for _, m := range ms {
		if m > newest {
			newest = m
		}
	}
	fi, err := os.Stat(newest)
	if err != nil {
		return "?"
	}
	return fmt.Sprintf("%.1f MB", float64(fi.Size())/1e6)
}
