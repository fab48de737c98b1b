package serve

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ownership-book/ownership/internal/build"
	"github.com/ownership-book/ownership/internal/diag"
)

// TestOverlayEventIsBounded checks that a build error whose detail is a
// program's enormous output (one 2.4 MB line, as a transcript that timed
// out printing it leaves) reaches the browsers' error overlay cut to a
// readable size that says how much was cut, and the log likewise.
func TestOverlayEventIsBounded(t *testing.T) {
	root := t.TempDir()
	huge := strings.Repeat("x", 2_400_000)
	failing := func(context.Context, build.Options) (*build.Result, error) {
		return &build.Result{}, &diag.Error{File: "book/ch.md", Line: 3, Msg: "$ go run ./x: timeout after 2s", Detail: huge}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var log strings.Builder
	sw := &safeWriter{w: &log}
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, ln, Options{Build: build.Options{Root: root}, BuildFunc: failing, Debounce: 20 * time.Millisecond, Log: sw})
	}()
	defer func() { cancel(); <-done }()
	base := "http://" + ln.Addr().String()
	deadline := time.Now().Add(10 * time.Second)
	for {
		sw.mu.Lock()
		failed := strings.Contains(log.String(), "failed")
		sw.mu.Unlock()
		if failed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no failed build logged")
		}
		time.Sleep(20 * time.Millisecond)
	}
	resp, err := http.Get(base + EventsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	ev := &sse{bufio.NewReader(resp.Body)}
	ev.next(t) // hello
	name, data := ev.next(t)
	if name != "build-error" {
		t.Fatalf("event %q, want build-error", name)
	}
	if len(data) > 8<<10 || !strings.Contains(data, "(2399000 more bytes on this line)") {
		t.Errorf("overlay event is %d bytes (want a few KB saying what was cut): %.200s", len(data), data)
	}
	sw.mu.Lock()
	n := log.Len()
	sw.mu.Unlock()
	if n > 8<<10 {
		t.Errorf("the log holds %d bytes for one failed build", n)
	}
}
