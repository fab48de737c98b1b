package tests

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ownership-book/ownership/internal/build"
	"github.com/ownership-book/ownership/internal/serve"
)

// TestServe starts the live server on a free loopback port against a copy
// of the good fixture, listens to its event stream, edits a chapter and
// expects a reload event and the new text on the page; then breaks the
// chapter and expects an error event naming file:line while the last good
// page is still served.
func TestServe(t *testing.T) {
	t.Parallel()
	root := copyFixture(t, "good")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opt := serve.Options{Build: build.Options{Root: root, Out: filepath.Join(t.TempDir(), "site")}, Log: &lockedLog{}, Debounce: 50 * time.Millisecond}
	opt.Build.Verify.CacheDir = t.TempDir()
	done := make(chan error, 1)
	go func() { done <- serve.Run(ctx, ln, opt) }()
	base := "http://" + ln.Addr().String()

	// The server answers at once (the "building" page, 503); waitFor polls
	// until the first build has landed.
	body := waitFor(t, base+"/intro.html", "The code is in", 2*time.Minute)
	if !strings.Contains(body, serve.ScriptPath) {
		t.Error("served page lacks the live-reload script")
	}

	resp, err := http.Get(base + serve.EventsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := readEvents(resp.Body)
	if ev := next(t, events); ev.name != "hello" {
		t.Fatalf("first event %+v, want hello", ev)
	}

	intro := filepath.Join(root, "book", "intro.md")
	src, err := os.ReadFile(intro)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(src), "Read [the rule]", "First, read [the rule]", 1)
	if err := os.WriteFile(intro, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, events); ev.name != "reload" {
		t.Fatalf("after an edit: event %+v, want reload", ev)
	}
	if _, body := get(t, base+"/intro.html"); !strings.Contains(body, "First, read") {
		t.Errorf("after the reload event the page does not show the edit")
	}

	// A broken include: an error event naming the line, the last good page
	// still served.
	broken := edited + "\n```go\n{{#include ../examples/greet/greet.go:nope}}\n```\n"
	if err := os.WriteFile(intro, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	ev := next(t, events)
	if ev.name != "build-error" || !strings.Contains(ev.data, "book/intro.md:") || !strings.Contains(ev.data, "nope") {
		t.Fatalf("after a broken edit: event %+v, want build-error at book/intro.md", ev)
	}
	if code, body := get(t, base+"/intro.html"); code != 200 || !strings.Contains(body, "First, read") {
		t.Errorf("after a failed build: %d, last good page not served", code)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
	log := opt.Log.(*lockedLog).String()
	for _, want := range []string{"serving", "build 1: 3 pages", "changed: book/intro.md", "build 2: 3 pages", "build 3 failed"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

type sseEvent struct{ name, data string }

// readEvents parses a text/event-stream into a channel.
func readEvents(r io.Reader) <-chan sseEvent {
	c := make(chan sseEvent, 16)
	go func() {
		defer close(c)
		sc := bufio.NewScanner(r)
		var ev sseEvent
		var data []string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.name != "" {
					ev.data = strings.Join(data, "\n")
					c <- ev
				}
				ev, data = sseEvent{}, nil
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data = append(data, strings.TrimPrefix(line, "data: "))
			}
		}
	}()
	return c
}

func next(t *testing.T, c <-chan sseEvent) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-c:
		if !ok {
			t.Fatal("event stream closed")
		}
		return ev
	case <-time.After(2 * time.Minute):
		t.Fatal("no event within 2 minutes")
	}
	return sseEvent{}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// waitFor polls url until its body contains want.
func waitFor(t *testing.T, url, want string, limit time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(limit)
	last := ""
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			last = string(b)
			if resp.StatusCode == 200 && strings.Contains(last, want) {
				return last
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s never contained %q; last body:\n%s", url, want, last)
	return ""
}

type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
