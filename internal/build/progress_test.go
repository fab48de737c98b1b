package build

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ownership-book/ownership/internal/verify"
)

type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestProgressText(t *testing.T) {
	t0 := time.Unix(1000, 0)
	p := verify.Progress{Done: 12, Total: 64,
		Running: []string{"go test ./examples/stream/node", "go vet ./examples/raft"},
		Since:   []time.Time{t0, t0.Add(7 * time.Second)}}
	got := ProgressText(p, t0.Add(8500*time.Millisecond))
	want := "12 of 64 checks done; running go test ./examples/stream/node (8s) and 1 more"
	if got != want {
		t.Errorf("ProgressText = %q, want %q", got, want)
	}
	if got := ProgressText(verify.Progress{Done: 64, Total: 64}, t0); got != "64 of 64 checks done" {
		t.Errorf("ProgressText at the end = %q", got)
	}
}

// TestProgressLineInALog checks what a non-terminal (a pipe, CI's log)
// gets: nothing while every check is quick, a line once one has run for
// Quiet, and then at most one line per Every.
func TestProgressLineInALog(t *testing.T) {
	var out lockedBuilder
	now := time.Unix(1000, 0)
	var mu sync.Mutex
	l := NewProgressLine(&out)
	l.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	l.Quiet, l.Every = 5*time.Second, 15*time.Second
	start := now
	run := func(done int) verify.Progress {
		return verify.Progress{Done: done, Total: 64, Running: []string{"go test ./examples/stream"}, Since: []time.Time{start}}
	}
	l.Update(run(0))
	advance(time.Second)
	l.Update(run(1))
	if s := out.String(); s != "" {
		t.Fatalf("printed %q for a check running 1s", s)
	}
	advance(5 * time.Second)
	l.Update(run(2))
	if s := out.String(); s != "bookgen: 2 of 64 checks done; running go test ./examples/stream (6s)\n" {
		t.Fatalf("after 6s: %q", s)
	}
	advance(5 * time.Second)
	l.Update(run(3))
	if n := strings.Count(out.String(), "\n"); n != 1 {
		t.Fatalf("%d lines within Every:\n%s", n, out.String())
	}
	advance(15 * time.Second)
	l.Update(run(4))
	if n := strings.Count(out.String(), "\n"); n != 2 {
		t.Fatalf("%d lines after Every, want 2:\n%s", n, out.String())
	}
	l.Stop()
	l.Update(run(5))
	if strings.Contains(out.String(), "\r") || strings.Contains(out.String(), "\x1b") {
		t.Errorf("terminal codes in a log: %q", out.String())
	}
}

// TestProgressLineOnATerminal checks the terminal form: one line redrawn
// in place at each change, erased by Clear so that the summary that
// follows starts on a clean line.
func TestProgressLineOnATerminal(t *testing.T) {
	var out lockedBuilder
	t0 := time.Unix(1000, 0)
	l := NewProgressLine(&out)
	l.tty = true
	l.now = func() time.Time { return t0.Add(2 * time.Second) }
	l.Update(verify.Progress{Done: 0, Total: 2, Running: []string{"go vet ./examples/a"}, Since: []time.Time{t0}})
	l.Update(verify.Progress{Done: 1, Total: 2, Running: []string{"go test ./examples/a"}, Since: []time.Time{t0}})
	l.Clear()
	l.Stop()
	got := out.String()
	want := "\rbookgen: 0 of 2 checks done; running go vet ./examples/a (2s)\x1b[K" +
		"\rbookgen: 1 of 2 checks done; running go test ./examples/a (2s)\x1b[K" +
		"\r\x1b[K"
	if !strings.HasPrefix(got, want[:10]) || !strings.HasSuffix(got, "\r\x1b[K") || !strings.Contains(got, "1 of 2 checks done") {
		t.Errorf("terminal output %q, want %q (redraws by the ticker allowed)", got, want)
	}
}
