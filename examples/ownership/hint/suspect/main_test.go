package main

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestFalseSuspicionUnderMemberlist runs the demonstration with the real
// detector: the paused owner A is suspected, revoked at a new epoch, its
// write after it wakes is refused as stale, it refutes the suspicion, and
// the resource's log has no safety violation. The whole transcript is
// compared, so a change in what the detector makes happen shows here; and
// the three members leave no goroutine behind once the run returns.
//
// Reference: chapter "Failure detection is a hint"; SWIM (Das, Gupta and
// Motivala, DSN 2002): the suspicion mechanism.
func TestFalseSuspicionUnderMemberlist(t *testing.T) {
	before := runtime.NumGoroutine()
	var out strings.Builder
	if err := run(&out); err != nil {
		t.Fatalf("%v\noutput so far:\n%s", err, out.String())
	}
	want := `memberlist on 127.0.0.1: A, B and C are members
C's view: A alive, B alive, C alive
record: Owned(A, 41)
A writes x=1 with Token(x, 41, A): accepted
A pauses: it sends and receives nothing, and its next write waits
C's detector suspects A (A is healthy, only paused)
coordinator: Revoke(-> B): Unowned(42, B)
B acquires: Owned(B, 42)
B writes x=2 with Token(x, 42, B): accepted
A wakes and sends the write it was about to send
A writes x=3 with Token(x, 41, A): refused: epoch 41 is stale: the current epoch is 42
C's view: A alive again: A refuted the suspicion by raising its own incarnation number
record: Owned(B, 42) (a refutation raises the incarnation, never the epoch)
resource accepted: x=1@41, x=2@42
safety violations: 0
`
	if out.String() != want {
		t.Errorf("transcript:\n%s\nwant:\n%s", out.String(), want)
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines after the run, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}
