package main

import (
	"bufio"
	"context"
	"fmt"
	"github.com/ownership-book/ownership/internal/freeport"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestMain lets a test run this very binary as streamd: with
// STREAMD_TEST_CHILD=1 the test binary is the server, so a test can kill a
// real server process with SIGKILL and start it again on the same data.
func TestMain(m *testing.M) {
	if os.Getenv("STREAMD_TEST_CHILD") == "1" {
		os.Args = append([]string{"streamd"}, strings.Fields(os.Getenv("STREAMD_TEST_ARGS"))...)
		main()
		return
	}
	os.Exit(m.Run())
}

var servingRE = regexp.MustCompile(`voter A serving on (http://\S+)/v1/stream/`)

// startChild starts streamd with args and returns the process and voter A's
// base URL once it serves.
func startChild(t *testing.T, args string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "STREAMD_TEST_CHILD=1", "STREAMD_TEST_ARGS="+args)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
				urlc <- m[1]
			}
		}
	}()
	select {
	case u := <-urlc:
		return cmd, u
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("streamd did not start in 30s")
		return nil, ""
	}
}

// freeAddr returns a loopback address free now, below the kernel's
// ephemeral range (see package freeport).
func freeAddr(t *testing.T) string {
	t.Helper()
	addr, err := freeport.Pick("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

func appendAs(ctx context.Context, base string, epoch, seq int) (int, http.Header, error) {
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/v1/stream/log", strings.NewReader(fmt.Sprintf("e%d-s%d\n", epoch, seq)))
	req.Header.Set("Content-Type", "text/plain")
	req.Header.Set("Producer-Id", "p")
	req.Header.Set("Producer-Epoch", fmt.Sprint(epoch))
	req.Header.Set("Producer-Seq", fmt.Sprint(seq))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header, nil
}

// TestSIGKILLKeepsAcknowledgedAppends runs streamd -data DIR as a real
// process, claims epoch 2 for a producer, kills the process with SIGKILL
// while four writers append, restarts it on the same directory and checks
// that every acknowledged append is in the stream exactly once, in
// acknowledgement order per writer, and that the fence still refuses
// epoch 1.
// Reference: Raft §5.3 (an entry is acknowledged only once stored by a
// quorum, here the one voter's disk); PROTOCOL.md 5.2.1 (the producer's
// epoch survives); chapter "The epoch-fenced stream".
func TestSIGKILLKeepsAcknowledgedAppends(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	dir := t.TempDir()
	args := fmt.Sprintf("-addr %s -data %s -long-poll 200ms", freeAddr(t), dir)
	cmd, base := startChild(t, args)
	defer func() { cmd.Process.Kill(); cmd.Wait() }()

	req, _ := http.NewRequest("PUT", base+"/v1/stream/log", nil)
	req.Header.Set("Content-Type", "text/plain")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 201 {
		t.Fatalf("PUT: %v %v", resp, err)
	}
	for seq := 0; seq < 3; seq++ {
		if st, _, err := appendAs(context.Background(), base, 1, seq); err != nil || st != 200 {
			t.Fatalf("epoch 1 seq %d: %d %v", seq, st, err)
		}
	}
	if st, h, err := appendAs(context.Background(), base, 2, 0); err != nil || st != 200 || h.Get("Producer-Closed-Epoch") != "1" {
		t.Fatalf("claim of epoch 2: %d %v %v", st, h, err)
	}
	acked := map[string]bool{"e1-s0": true, "e1-s1": true, "e1-s2": true, "e2-s0": true}

	// Four writers without producer headers append "wN-i" until the kill.
	var mu sync.Mutex
	var wg sync.WaitGroup
	ctx, stop := context.WithCancel(context.Background())
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				tok := fmt.Sprintf("w%d-%d", w, i)
				req, _ := http.NewRequestWithContext(ctx, "POST", base+"/v1/stream/log", strings.NewReader(tok+"\n"))
				req.Header.Set("Content-Type", "text/plain")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 204 {
					mu.Lock()
					acked[tok] = true
					mu.Unlock()
				}
			}
		}()
	}
	// The producer appends in epoch 2 as well.
	wg.Add(1)
	lastSeq := 0
	go func() {
		defer wg.Done()
		for seq := 1; ctx.Err() == nil; seq++ {
			st, _, err := appendAs(ctx, base, 2, seq)
			if err != nil || st != 200 {
				return
			}
			mu.Lock()
			acked[fmt.Sprintf("e2-s%d", seq)] = true
			lastSeq = seq
			mu.Unlock()
		}
	}()
	// Kill once enough appends are acknowledged to test something (not
	// after a fixed time, which a slow machine may fill with too few).
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 200 || time.Now().After(deadline) {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	stop()
	wg.Wait()
	t.Logf("%d appends acknowledged before SIGKILL (producer up to epoch 2 seq %d)", len(acked), lastSeq)
	if len(acked) < 20 {
		t.Fatalf("only %d appends acknowledged: load too light to test anything", len(acked))
	}

	cmd, base = startChild(t, args)
	resp, err := http.Get(base + "/v1/stream/log?offset=-1")
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		all.Write(b)
		if resp.Header.Get("Stream-Up-To-Date") == "true" {
			break
		}
		resp, err = http.Get(base + "/v1/stream/log?offset=" + resp.Header.Get("Stream-Next-Offset"))
		if err != nil {
			t.Fatal(err)
		}
	}
	count := map[string]int{}
	for _, line := range strings.Split(strings.TrimSuffix(all.String(), "\n"), "\n") {
		count[line]++
	}
	for tok := range acked {
		if count[tok] != 1 {
			t.Errorf("acknowledged append %s is in the stream %d times after restart", tok, count[tok])
		}
	}
	for tok, n := range count {
		if n != 1 {
			t.Errorf("%s is in the stream %d times", tok, n)
		}
	}
	t.Logf("%d appends in the stream after restart, %d acknowledged", len(count), len(acked))
	if st, h, err := appendAs(context.Background(), base, 1, 3); err != nil || st != 403 || h.Get("Producer-Outcome") != "epoch-closed" || h.Get("Producer-Epoch") != "2" {
		t.Errorf("epoch 1 after restart: %d %q epoch %q %v, want 403 epoch-closed epoch 2", st, h.Get("Producer-Outcome"), h.Get("Producer-Epoch"), err)
	}
	// The producer's next sequence number continues where the log ends.
	if st, _, err := appendAs(context.Background(), base, 2, lastSeq); err != nil || st != 204 {
		t.Errorf("epoch 2 seq %d again after restart: %d %v, want 204 duplicate", lastSeq, st, err)
	}
}
