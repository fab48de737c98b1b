// Package browser tests the built site and the live server in a real
// browser: Debian's Chromium, driven with chromedp, headless, with a fresh
// profile. The site is built from testdata/book (a small book of its own
// module) and served over loopback with the headers netlify.toml gives
// Netlify, Content-Security-Policy included, so a violation of that policy
// shows up as a console error and fails the test.
//
// Without Chromium the tests skip with a message, unless the CI environment
// variable is set (.ci/run sets it): there a missing browser is a failure.
// BOOKGEN_CHROMIUM names the browser binary when it is not in $PATH as
// chromium, chromium-browser, google-chrome or google-chrome-stable.
//
// Screenshots go to tests/artifacts/ (ignored by git); the tests print
// their paths.
package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/pelletier/go-toml/v2"

	"github.com/ownership-book/ownership/internal/build"
	"github.com/ownership-book/ownership/tests/internal/toolskip"
)

// chromium returns the browser's path, or skips (fails under CI) when
// there is none.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("BOOKGEN_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	// toolskip keeps go test from replaying this skip from its cache
	// once Chromium is installed.
	toolskip.Missing(t, "browser tests need Chromium: install it with `apt-get install chromium` (or name it with BOOKGEN_CHROMIUM)")
	return ""
}

// newBrowser starts a headless Chromium with a fresh profile and returns a
// context whose children (newTab) are its tabs. It stops when the test ends.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	exe := chromium(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("force-color-profile", "srgb"),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// The first Run starts the browser; it lives as long as bctx.
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("starting %s: %v", exe, err)
	}
	return bctx
}

// tab is one browser tab that records what the page writes to the console
// and every URL it requests.
type tab struct {
	ctx context.Context
	t   *testing.T

	mu       sync.Mutex
	console  []string // "error: text (url)" for errors, exceptions and error-level log entries
	requests []string
}

// newTab opens a tab of the browser bctx.
func newTab(t *testing.T, bctx context.Context) *tab {
	t.Helper()
	tb := &tab{t: t}
	ctx, cancel := chromedp.NewContext(bctx, chromedp.WithListener(tb.listen))
	t.Cleanup(cancel)
	tb.ctx = ctx
	if err := chromedp.Do(ctx); err != nil {
		t.Fatal(err)
	}
	return tb
}

func (tb *tab) listen(ev any) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			var parts []string
			for _, a := range ev.Args {
				if len(a.Value) > 0 {
					parts = append(parts, string(a.Value))
				} else {
					parts = append(parts, a.Description)
				}
			}
			tb.console = append(tb.console, "console."+string(ev.Type)+": "+strings.Join(parts, " "))
		}
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		msg := d.Text
		if d.Exception != nil {
			msg += " " + d.Exception.Description
		}
		tb.console = append(tb.console, fmt.Sprintf("exception: %s (%s:%d)", msg, d.URL, d.LineNumber+1))
	case *cdplog.EventEntryAdded:
		if e := ev.Entry; e.Level == cdplog.EntryLevelError || e.Level == cdplog.EntryLevelWarning {
			tb.console = append(tb.console, fmt.Sprintf("%s %s: %s (%s)", e.Source, e.Level, e.Text, e.URL))
		}
	case *network.EventRequestWillBeSent:
		tb.requests = append(tb.requests, ev.Request.URL)
	}
}

// messages returns the console problems seen so far and forgets them.
func (tb *tab) messages() []string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	m := tb.console
	tb.console = nil
	return m
}

// requested returns every URL requested so far.
func (tb *tab) requested() []string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return append([]string{}, tb.requests...)
}

// noConsoleErrors fails the test for every console problem seen since the
// last call; allow lists substrings of messages that are expected.
func (tb *tab) noConsoleErrors(where string, allow ...string) {
	tb.t.Helper()
next:
	for _, m := range tb.messages() {
		for _, a := range allow {
			if strings.Contains(m, a) {
				continue next
			}
		}
		tb.t.Errorf("%s: console: %s", where, m)
	}
}

// do runs actions, failing the test on an error.
func (tb *tab) do(actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		tb.t.Fatal(err)
	}
}

// navigate loads url and waits for its load event.
func (tb *tab) navigate(url string) {
	tb.t.Helper()
	tb.do(chromedp.Navigate(url))
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](tb *tab, expr string) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		tb.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// waitTrue polls a boolean JavaScript expression until it holds (errors,
// such as those of a page being replaced by a navigation, count as false).
func (tb *tab) waitTrue(what, expr string, timeout time.Duration) {
	tb.t.Helper()
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(tb.ctx, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		cancel()
		if err == nil && ok {
			return
		}
		last = err
		time.Sleep(40 * time.Millisecond)
	}
	url, _ := chromedp.Run(tb.ctx, chromedp.Location())
	if state, err := chromedp.Run(tb.ctx, chromedp.Evaluate[string](`(function(){var a=document.activeElement, i=document.getElementById("search-input"), l=document.getElementById("search-results"); return "focus=" + (a && (a.id || a.tagName)) + " search=" + (i ? JSON.stringify(i.value) : "-") + " results=" + (l ? JSON.stringify(l.textContent.slice(0, 300)) : "-");})()`)); err == nil {
		tb.t.Logf("page state: %s", state)
	}
	tb.t.Fatalf("%s: not within %s (page %s; expression %s; last error %v)", what, timeout, url, expr, last)
}

// waitPage waits until the tab shows a loaded page whose URL path ends with
// suffix (after a click or key that navigates).
func (tb *tab) waitPage(suffix string) {
	tb.t.Helper()
	js, _ := json.Marshal(suffix)
	tb.waitTrue("page "+suffix, `location.pathname.endsWith(`+string(js)+`) && document.readyState === "complete"`, 20*time.Second)
}

// markPage marks the document the tab shows now, so that waitNewPage can
// tell a page loaded afterwards from it: a key or click that navigates
// to the path the tab already shows (streams.html to
// streams.html?highlight=...#anchor) would otherwise satisfy waitPage at
// once, on the old page.
func (tb *tab) markPage() {
	tb.t.Helper()
	tb.do(chromedp.Evaluate[chromedp.Void](`window.__bookgenOldPage = true`))
}

// waitNewPage is waitPage for a document loaded after markPage.
func (tb *tab) waitNewPage(suffix string) {
	tb.t.Helper()
	js, _ := json.Marshal(suffix)
	tb.waitTrue("a new page "+suffix, `!window.__bookgenOldPage && location.pathname.endsWith(`+string(js)+`) && document.readyState === "complete"`, 20*time.Second)
}

// key types keys into the focused element.
func (tb *tab) key(keys string) {
	tb.t.Helper()
	tb.do(chromedp.KeyEvent(keys))
}

// screenshot saves a PNG of the viewport to tests/artifacts/name.
func (tb *tab) screenshot(name string) string {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		tb.t.Fatal(err)
	}
	dir, err := filepath.Abs(filepath.Join("..", "artifacts"))
	if err != nil {
		tb.t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, png, 0o644); err != nil {
		tb.t.Fatal(err)
	}
	tb.t.Logf("screenshot: %s", p)
	return p
}

// call runs one protocol command on the tab.
func call[P, R any](tb *tab, cmd cdp.Command[P, R], params P) R {
	tb.t.Helper()
	r, err := chromedp.Call(tb.ctx, cmd, params)
	if err != nil {
		tb.t.Fatalf("%s: %v", cmd.Method, err)
	}
	return r
}

// copyDir copies the folder src to dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			if d.Name() == ".bookgen-cache" {
				return fs.SkipDir
			}
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// fixture copies testdata/book into a temporary folder and returns it.
func fixture(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "book")
	copyDir(t, filepath.Join("testdata", "book"), root)
	return root
}

// buildSite builds the fixture and returns its output folder.
func buildSite(t *testing.T, root string) string {
	t.Helper()
	opt := build.Options{Root: root, Out: filepath.Join(t.TempDir(), "site")}
	opt.Verify.CacheDir = t.TempDir()
	res, err := build.Build(context.Background(), opt)
	if err != nil {
		build.PrintError(testWriter{t}, err)
		t.Fatalf("building the fixture failed")
	}
	t.Logf("fixture built: %s", res.Summary())
	return res.Out
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// netlifyRules are the [[headers]] of netlify.toml.
type netlifyRules struct {
	Headers []struct {
		For    string            `toml:"for"`
		Values map[string]string `toml:"values"`
	} `toml:"headers"`
}

// readNetlify reads the repository's netlify.toml.
func readNetlify(t *testing.T) netlifyRules {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "netlify.toml"))
	if err != nil {
		t.Fatal(err)
	}
	var r netlifyRules
	if err := toml.Unmarshal(data, &r); err != nil {
		t.Fatalf("netlify.toml: %v", err)
	}
	return r
}

// matchNetlify reports whether a Netlify "for" pattern ("/*",
// "/assets/*", "/x.html") matches the URL path p.
func matchNetlify(pattern, p string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(p, prefix)
	}
	return pattern == p
}

// serveSite serves the site folder over loopback as Netlify would: the
// headers of netlify.toml on every response, index.html for a folder, and
// 404.html with status 404 for a missing path.
func serveSite(t *testing.T, dir string) *httptest.Server {
	t.Helper()
	rules := readNetlify(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, h := range rules.Headers {
			if matchNetlify(h.For, r.URL.Path) {
				for k, v := range h.Values {
					w.Header().Set(k, v)
				}
			}
		}
		p := path.Clean("/" + r.URL.Path)
		if strings.HasSuffix(r.URL.Path, "/") {
			p = path.Join(p, "index.html")
		}
		name := filepath.Join(dir, filepath.FromSlash(p))
		f, err := os.Open(name)
		if err == nil {
			defer f.Close()
			if fi, err := f.Stat(); err == nil && !fi.IsDir() {
				http.ServeContent(w, r, name, fi.ModTime(), f)
				return
			}
		}
		data, err := os.ReadFile(filepath.Join(dir, "404.html"))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write(data)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
