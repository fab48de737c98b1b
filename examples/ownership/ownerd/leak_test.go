package main

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
	"time"
)

// A run of ownerd stops everything it started: after run returns, the
// goroutines (voters, HTTP servers, client connections) are gone again.
func TestRunLeavesNoGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	for _, n := range []int{1, 3} {
		if err := run(n, false, t.TempDir(), new(bytes.Buffer)); err != nil {
			t.Fatal(err)
		}
	}
	var after int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if after = runtime.NumGoroutine(); after <= before {
			return
		}
	}
	buf := make([]byte, 1<<20)
	stacks := string(buf[:runtime.Stack(buf, true)])
	t.Fatalf("%d goroutines before, %d after run; still running:\n%s", before, after, firstLines(stacks, 80))
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
