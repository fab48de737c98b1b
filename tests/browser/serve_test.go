package browser

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ownership-book/ownership/internal/build"
	"github.com/ownership-book/ownership/internal/serve"
	"github.com/ownership-book/ownership/internal/verify"
)

// syncLog is the server's log, read while it runs.
type syncLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// edit replaces old by new in the file p (old must be there).
func edit(t *testing.T, p, old, new string) {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(old)) {
		t.Fatalf("%s does not contain %q", p, old)
	}
	if err := os.WriteFile(p, bytes.Replace(data, []byte(old), []byte(new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestServe runs bookgen serve on a copy of the fixture (with a copy of
// the repository's theme) and watches an open page in Chromium: a prose
// edit reloads it with the change; a transcript that no longer matches
// shows the overlay with file:line and the diff while the last good page
// stays; the fix clears the overlay; a stylesheet-only edit swaps the
// stylesheet without reloading the page.
func TestServe(t *testing.T) {
	bctx := newBrowser(t)
	root := fixture(t)
	copyDir(t, filepath.Join("..", "..", "theme"), filepath.Join(root, "theme"))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	log := &syncLog{}
	opt := serve.Options{
		Build:    build.Options{Root: root, Out: filepath.Join(t.TempDir(), "site")},
		Log:      log,
		Debounce: 100 * time.Millisecond,
	}
	opt.Build.Verify.CacheDir = t.TempDir()
	done := make(chan error, 1)
	go func() { done <- serve.Run(ctx, ln, opt) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("serve did not stop")
		}
		t.Logf("serve log:\n%s", log.String())
	})
	base := "http://" + ln.Addr().String() + "/"
	waitLog := func(what string, re *regexp.Regexp, n int) []string {
		t.Helper()
		deadline := time.Now().Add(90 * time.Second)
		for time.Now().Before(deadline) {
			if m := re.FindAllString(log.String(), -1); len(m) >= n {
				return m
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("%s: log has no %d× %s:\n%s", what, n, re, log.String())
		return nil
	}
	good := regexp.MustCompile(`bookgen: build \d+: [^\n]*`)
	waitLog("first build", good, 1)

	tb := newTab(t, bctx)
	tb.navigate(base + "epochs.html")
	tb.waitTrue("live-reload script on the page", `!!document.querySelector('script[src="/__bookgen/live.js"]')`, 5*time.Second)
	// Give the page's EventSource a moment to connect before the first edit.
	time.Sleep(300 * time.Millisecond)
	chapter := filepath.Join(root, "book", "epochs.md")

	// 1. A prose edit: the page reloads with the change.
	eval[bool](tb, `(window.__stay = true)`)
	edit(t, chapter, "An epoch is a number that only grows.", "An epoch is a counter that only grows.")
	tb.waitTrue("page reloads with the edit", `!window.__stay && document.querySelector(".chapter p").textContent.indexOf("a counter that only grows") >= 0`, 60*time.Second)
	lines := waitLog("rebuild after the prose edit", good, 2)
	t.Logf("prose edit rebuilt: %s", lines[1])
	// The fixture has 8 checks: 2 parse the chapter's Go fragments in
	// process (they always run); the 6 that start a go process (vet,
	// test, the transcript, ...) must come from the cache.
	if !strings.Contains(lines[1], "(1 rendered), 0 checks run, 6 cached, 2 parsed") {
		t.Errorf("a prose edit should render its chapter only and take every go process from the cache: %s", lines[1])
	}
	tb.noConsoleErrors("serve: reload")

	// 2. A transcript that no longer matches: the overlay, the last good page.
	edit(t, chapter, "epoch 2 refused", "epoch 2 accepted")
	tb.waitTrue("overlay shows the failure", `!!document.getElementById("bookgen-error")`, 60*time.Second)
	overlay := eval[string](tb, `document.getElementById("bookgen-error").textContent`)
	for _, want := range []string{"book/epochs.md:", "-epoch 2 accepted", "+epoch 2 refused"} {
		if !strings.Contains(overlay, want) {
			t.Errorf("overlay lacks %q:\n%s", want, overlay)
		}
	}
	if got := eval[string](tb, `document.querySelector(".chapter p").textContent`); !strings.Contains(got, "a counter") {
		t.Errorf("under the overlay the page is not the last good one: %q", got)
	}
	tb.screenshot("serve-overlay.png")
	tb.noConsoleErrors("serve: overlay")

	// 3. The fix: the overlay goes away.
	edit(t, chapter, "epoch 2 accepted", "epoch 2 refused")
	tb.waitTrue("overlay clears after the fix", `!document.getElementById("bookgen-error") && document.readyState === "complete" && !!document.querySelector(".chapter")`, 60*time.Second)

	// 4. A stylesheet-only edit: swapped in place, no reload.
	time.Sleep(300 * time.Millisecond)
	eval[bool](tb, `(window.__stay = true)`)
	before := eval[string](tb, `document.querySelector('link[rel=stylesheet]').getAttribute("href")`)
	f, err := os.OpenFile(filepath.Join(root, "theme", "book.css"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("\n:root { --serve-test-probe: swapped; }\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	tb.waitTrue("new stylesheet applies", `getComputedStyle(document.documentElement).getPropertyValue("--serve-test-probe").trim() === "swapped"`, 60*time.Second)
	if !eval[bool](tb, `window.__stay === true`) {
		t.Error("a CSS-only change reloaded the page")
	}
	after := eval[string](tb, `document.querySelector('link[rel=stylesheet][href*="assets/book."]').getAttribute("href")`)
	if after == before {
		t.Errorf("stylesheet link still %s", after)
	}
	tb.noConsoleErrors("serve: css")
}

// TestServeBuildingPage opens a page while serve's first build still runs
// (held here until the page is up, as a fresh clone's first build takes
// minutes): the tab shows the "building" page with the build's progress
// at once, and becomes the chapter when the build lands, without a
// console error.
func TestServeBuildingPage(t *testing.T) {
	bctx := newBrowser(t)
	root := fixture(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	release := make(chan struct{})
	opt := serve.Options{
		Build: build.Options{Root: root, Out: filepath.Join(t.TempDir(), "site")},
		Log:   &syncLog{},
		BuildFunc: func(ctx context.Context, o build.Options) (*build.Result, error) {
			o.Verify.Progress(verify.Progress{Done: 1, Total: 9, Running: []string{"go test ./examples/slow"}, Since: []time.Time{time.Now()}})
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return build.Build(ctx, o)
		},
	}
	opt.Build.Verify.CacheDir = t.TempDir()
	done := make(chan error, 1)
	go func() { done <- serve.Run(ctx, ln, opt) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	base := "http://" + ln.Addr().String() + "/"
	tb := newTab(t, bctx)
	tb.navigate(base + "epochs.html")
	tb.waitTrue("the building page", `document.querySelector("h1") && document.querySelector("h1").textContent.indexOf("Building the book") === 0`, 10*time.Second)
	tb.waitTrue("its progress", `document.getElementById("bookgen-progress").textContent.indexOf("1 of 9 checks done; running go test ./examples/slow") === 0`, 10*time.Second)
	close(release)
	tb.waitTrue("the chapter after the build", `location.pathname === "/epochs.html" && !!document.querySelector(".chapter h1") && !document.getElementById("bookgen-building")`, 90*time.Second)
	tb.noConsoleErrors("building page", "status of 503")
}
