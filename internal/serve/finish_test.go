package serve

import (
	"context"
	"io"
	"sync/atomic"
	"testing"
)

// TestFinishStoppedAndResumed: the next build stops the last good build's
// Finish (print.html and the search index) between files; when that build
// fails, the stopped Finish runs again to the end, so the print page and
// the index match the site still served; at shutdown Run does the same.
func TestFinishStoppedAndResumed(t *testing.T) {
	s := &server{opt: Options{Log: io.Discard}}
	var calls, completed atomic.Int32
	release := make(chan struct{})
	finish := func(ctx context.Context) error {
		n := calls.Add(1)
		if n == 1 {
			// The first run is still writing when the next build starts.
			<-ctx.Done()
			return ctx.Err()
		}
		select {
		case <-release:
			completed.Add(1)
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	s.startFinish(1, finish)
	s.stopFinish() // the next build starts
	if got := calls.Load(); got != 1 || completed.Load() != 0 {
		t.Fatalf("after stopFinish: %d calls, %d completed", got, completed.Load())
	}
	close(release)
	s.resumeFinish(true) // the next build failed
	if got := calls.Load(); got != 2 || completed.Load() != 1 {
		t.Fatalf("after resumeFinish: %d calls, %d completed; want the stopped Finish run again to the end", got, completed.Load())
	}
	// A Finish that completed is not run again.
	s.resumeFinish(true)
	if got := calls.Load(); got != 2 {
		t.Fatalf("a completed Finish ran again: %d calls", got)
	}
}
