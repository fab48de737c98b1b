// Command bench measures acknowledged appends per second and append latency
// (p50, p99) of streamd with one voter and with three, and of the Durable
// Streams reference Node server (@durable-streams/server, installed in
// tests/conformance) on the same machine in the same run, and prints each
// streamd figure as a ratio to the reference's.
//
//	go run ./examples/stream/bench -duration 10s -clients 16 -size 100
//
// Every append is an idempotent-producer append (Producer-Id, -Epoch, -Seq):
// client i writes under producer id "p<i>", epoch 0, sequence 0, 1, 2, …,
// one request in flight per client, and counts an append when it is answered
// 200. streamd's voters store their Raft log in raft-boltdb (fsync per
// batch) in a temporary directory; the reference server runs file-backed in
// another (or in memory with -ref-memory). The numbers depend on the
// machine and its load; they are printed, never asserted.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ownership-book/ownership/examples/stream/node"
)

type result struct {
	name     string
	n        int
	errs     int
	elapsed  time.Duration
	p50, p99 time.Duration
}

func (r result) rate() float64 { return float64(r.n) / r.elapsed.Seconds() }

// load runs the append load against base for d and returns the result.
func load(name, base string, clients, size int, d time.Duration) (result, error) {
	tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	defer tr.CloseIdleConnections()
	url := base + "/v1/stream/bench"
	req, _ := http.NewRequest("PUT", url, nil)
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := hc.Do(req)
	if err != nil {
		return result{}, fmt.Errorf("%s: create: %w", name, err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 && resp.StatusCode != 200 {
		return result{}, fmt.Errorf("%s: create: %s", name, resp.Status)
	}
	body := strings.Repeat("x", size)
	var (
		mu   sync.Mutex
		lats []time.Duration
		errs int
		wg   sync.WaitGroup
	)
	start := time.Now()
	stop := start.Add(d)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			bad := 0
			for seq := 0; time.Now().Before(stop); seq++ {
				req, _ := http.NewRequest("POST", url, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/octet-stream")
				req.Header.Set("Producer-Id", fmt.Sprintf("p%d", i))
				req.Header.Set("Producer-Epoch", "0")
				req.Header.Set("Producer-Seq", fmt.Sprint(seq))
				t0 := time.Now()
				resp, err := hc.Do(req)
				if err != nil {
					bad++
					break
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					bad++
					break // this producer's sequence is now off; stop it
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lats = append(lats, mine...)
			errs += bad
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	sort.Slice(lats, func(i, j int) bool { return lats[i] < lats[j] })
	r := result{name: name, n: len(lats), errs: errs, elapsed: elapsed}
	if len(lats) > 0 {
		r.p50 = lats[len(lats)*50/100]
		r.p99 = lats[min(len(lats)-1, len(lats)*99/100)]
	}
	return r, nil
}

// startRef starts the reference Node server and returns its URL and a stop
// function.
func startRef(dir string, memory bool, tmp string) (string, func(), error) {
	script := filepath.Join(dir, "refserver.mjs")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@durable-streams", "server")); err != nil {
		return "", nil, fmt.Errorf("reference server not installed (run npm ci in %s): %w", dir, err)
	}
	cmd := exec.Command("node", script)
	cmd.Env = append(os.Environ(), "PORT=0", "LONG_POLL_MS=1000")
	if !memory {
		cmd.Env = append(cmd.Env, "DATA_DIR="+filepath.Join(tmp, "ref"))
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if _, u, ok := strings.Cut(sc.Text(), "serving on "); ok {
				select {
				case urls <- strings.TrimSpace(u):
				default:
				}
			}
		}
	}()
	select {
	case u := <-urls:
		return strings.TrimSuffix(u, "/"), stop, nil
	case <-time.After(30 * time.Second):
		stop()
		return "", nil, fmt.Errorf("reference server did not start within 30s")
	}
}

func main() {
	duration := flag.Duration("duration", 5*time.Second, "how long each target is loaded")
	clients := flag.Int("clients", 16, "concurrent producers, one request in flight each")
	size := flag.Int("size", 100, "bytes per append")
	refDir := flag.String("ref", "tests/conformance", "directory with refserver.mjs and node_modules")
	refMemory := flag.Bool("ref-memory", false, "run the reference server in memory instead of file-backed")
	flag.Parse()

	tmp, err := os.MkdirTemp("", "streambench")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)

	var results []result
	for _, voters := range []int{1, 3} {
		c, err := node.Start(node.Options{Voters: voters, Dir: filepath.Join(tmp, fmt.Sprintf("v%d", voters))})
		if err != nil {
			log.Fatal(err)
		}
		leader, err := c.Leader(context.Background())
		if err != nil {
			log.Fatal(err)
		}
		r, err := load(fmt.Sprintf("streamd, %d voter(s)", voters), leader.URL, *clients, *size, *duration)
		c.Close()
		if err != nil {
			log.Fatal(err)
		}
		results = append(results, r)
	}
	var ref *result
	url, stop, err := startRef(*refDir, *refMemory, tmp)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: skipping the reference server: %v\n", err)
	} else {
		name := "reference Node server (file)"
		if *refMemory {
			name = "reference Node server (memory)"
		}
		r, err := load(name, url, *clients, *size, *duration)
		stop()
		if err != nil {
			log.Fatal(err)
		}
		results = append(results, r)
		ref = &results[len(results)-1]
	}

	fmt.Printf("%d clients, %d-byte appends, %s per target\n\n", *clients, *size, *duration)
	fmt.Printf("%-32s %12s %10s %10s %8s %s\n", "target", "appends/s", "p50", "p99", "errors", "vs reference")
	for _, r := range results {
		ratio := ""
		if ref != nil && ref.rate() > 0 && r.name != ref.name {
			ratio = fmt.Sprintf("%.2fx", r.rate()/ref.rate())
		}
		fmt.Printf("%-32s %12.0f %10s %10s %8d %s\n", r.name, r.rate(),
			r.p50.Round(10*time.Microsecond), r.p99.Round(10*time.Microsecond), r.errs, ratio)
	}
}
