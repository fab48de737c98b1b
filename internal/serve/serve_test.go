package serve

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

	"github.com/ownership-book/ownership/internal/atomicfile"
	"github.com/ownership-book/ownership/internal/build"
	"github.com/ownership-book/ownership/internal/diag"
)

// fakeBuild copies book/ch.md into out/index.html, or fails with a
// diag.Error when the chapter says BAD, so the server can be tested
// without the real stages.
func fakeBuild(_ context.Context, opt build.Options) (*build.Result, error) {
	src, err := os.ReadFile(filepath.Join(opt.Root, "book", "ch.md"))
	if err != nil {
		return nil, err
	}
	if strings.Contains(string(src), "BAD") {
		return &build.Result{}, &diag.Error{File: "book/ch.md", Line: 1, Msg: "bad chapter"}
	}
	out := opt.OutDir()
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	page := "<html><body><p>" + string(src) + "</p></body></html>"
	// Atomically, as the real build swaps its site in: the test reads the
	// page while the next build writes it.
	return &build.Result{Pages: 1}, atomicfile.Write(filepath.Join(out, "index.html"), []byte(page), 0o644)
}

type sse struct {
	r *bufio.Reader
}

// next returns the next event's name and data.
func (s *sse) next(t *testing.T) (string, string) {
	t.Helper()
	var name string
	var data []string
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading events: %v", err)
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "":
			if name != "" {
				return name, strings.Join(data, "\n")
			}
		case strings.HasPrefix(line, "event: "):
			name = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			data = append(data, line[len("data: "):])
		}
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestServeReloadsAndReportsErrors(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "book"), 0o755); err != nil {
		t.Fatal(err)
	}
	ch := filepath.Join(root, "book", "ch.md")
	if err := os.WriteFile(ch, []byte("first"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var log strings.Builder
	go func() {
		done <- Run(ctx, ln, Options{Build: build.Options{Root: root}, BuildFunc: fakeBuild, Debounce: 20 * time.Millisecond, Log: &safeWriter{w: &log}})
	}()
	base := "http://" + ln.Addr().String()

	// Wait for the first build to be served.
	deadline := time.Now().Add(10 * time.Second)
	var body string
	for time.Now().Before(deadline) {
		var code int
		if code, body = get(t, base+"/"); code == 200 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(body, "first") || !strings.Contains(body, `<script src="/__bookgen/live.js" data-build="`) {
		t.Fatalf("page = %q", body)
	}
	if code, js := get(t, base+ScriptPath); code != 200 || !strings.Contains(js, "EventSource") {
		t.Fatalf("live.js: %d %q", code, js)
	}

	resp, err := http.Get(base + EventsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type = %q", ct)
	}
	ev := &sse{bufio.NewReader(resp.Body)}
	name, hello := ev.next(t)
	if name != "hello" || hello == "" {
		t.Fatalf("first event %q %q", name, hello)
	}

	// A bad edit: an error event, the old page still served.
	if err := os.WriteFile(ch, []byte("BAD"), 0o644); err != nil {
		t.Fatal(err)
	}
	name, data := ev.next(t)
	if name != "build-error" || data != "book/ch.md:1: bad chapter" {
		t.Fatalf("event %q %q, want build-error", name, data)
	}
	if _, body := get(t, base+"/index.html"); !strings.Contains(body, "first") {
		t.Errorf("after a failed build the page is %q", body)
	}

	// A good edit: a reload event with a new build id, the new page served.
	if err := os.WriteFile(ch, []byte("second"), 0o644); err != nil {
		t.Fatal(err)
	}
	name, id := ev.next(t)
	if name != "reload" || id == hello {
		t.Fatalf("event %q %q, want reload with a new id (hello was %q)", name, id, hello)
	}
	if _, body := get(t, base+"/"); !strings.Contains(body, "second") {
		t.Errorf("after a good build the page is %q", body)
	}
	// A folder created after the start is watched too.
	sub := filepath.Join(root, "book", "part")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if name, _ := ev.next(t); name != "reload" {
		t.Fatalf("after mkdir: event %q, want reload", name)
	}
	time.Sleep(100 * time.Millisecond) // let the watcher add the new folder
	if err := os.WriteFile(filepath.Join(sub, "new.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if name, _ := ev.next(t); name != "reload" {
		t.Fatalf("after a write in a new folder: event %q, want reload", name)
	}
	if code, _ := get(t, base+"/missing.html"); code != 404 {
		t.Errorf("missing page: status %d", code)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	out := log.String()
	for _, want := range []string{"bookgen: serving", "build 1: 1 page", "build 2 failed; still serving the last good site (build 1):", "book/ch.md:1: bad chapter", "build 3: 1 page", "changed: book/ch.md", "changed: book/part/new.md"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

func TestInject(t *testing.T) {
	got := string(inject([]byte("<html><body><p>x</p></body></html>"), "id-1"))
	want := "<html><body><p>x</p>" + `<script src="/__bookgen/live.js" data-build="id-1"></script>` + "\n</body></html>"
	if got != want {
		t.Errorf("inject = %q", got)
	}
	if got := string(inject([]byte("frag"), "id-1")); got != "frag"+string(scriptTag("id-1")) {
		t.Errorf("inject without body = %q", got)
	}
}

func TestRelevant(t *testing.T) {
	w := &watcher{root: "/r", out: "/r/site"}
	w.dirs, w.files, w.all = Watched(w.root)
	cases := map[string]bool{
		"/r/book/ch.md":               true,
		"/r/examples/x/main.go":       true,
		"/r/theme/book.css":           true,
		"/r/go.mod":                   true,
		"/r/site/index.html":          false,
		"/r/.bookgen-cache/x":         false,
		"/r/book/.ch.md.swp":          false,
		"/r/book/ch.md~":              false,
		"/r/internal/x.go":            false,
		"/r/README.md":                false,
		"/r/examples/node_modules/a":  false,
		"/elsewhere/book/ch.md":       false,
		"/r/examples/x/testdata/a.in": true,
		"/r/examples/x/sedjHZQce":     false, // GNU sed -i's temporary file
		"/r/examples/x/sedan.go":      true,
		"/r/book/ch.md___jb_tmp___":   false,
		"/r/book/#ch.md#":             false,
		"/r/book/4913":                false,
	}
	for p, want := range cases {
		if _, got := w.relevant(p); got != want {
			t.Errorf("relevant(%s) = %v, want %v", p, got, want)
		}
	}
}

// TestWatchedLayouts checks what serve watches in each layout: the source
// folder and book.toml's, not mdBook's output folder book/.
func TestWatchedLayouts(t *testing.T) {
	for _, tt := range []struct {
		name  string
		files map[string]string
		yes   []string
		no    []string
	}{
		{"bookgen's with src", map[string]string{"go.mod": "", "book/book.toml": "[book]\nsrc = \"src\"\n", "book/src/SUMMARY.md": ""},
			[]string{"book/book.toml", "book/src/a.md", "examples/x/x.go", "go.mod"}, []string{"src/a.md", "book.toml"}},
		{"mdBook's", map[string]string{"book.toml": "[book]\n", "src/SUMMARY.md": "", "book/index.html": ""},
			[]string{"book.toml", "src/a.md", "src/img/x.png", "theme/page.html"}, []string{"book/index.html", "book/a.html", "site/a.html", "README.md"}},
		{"mdBook's, src = \".\"", map[string]string{"book.toml": "[book]\nsrc = \".\"\n", "SUMMARY.md": ""},
			[]string{"book.toml", "a.md", "img/x.png"}, []string{"site/a.html", ".git/x"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for name, data := range tt.files {
				p := filepath.Join(root, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			w := &watcher{root: root, out: filepath.Join(root, "site")}
			w.dirs, w.files, w.all = Watched(root)
			for _, want := range []bool{true, false} {
				list := tt.yes
				if !want {
					list = tt.no
				}
				for _, p := range list {
					if _, got := w.relevant(filepath.Join(root, filepath.FromSlash(p))); got != want {
						t.Errorf("relevant(%s) = %v, want %v (watching %v, %v)", p, got, want, w.dirs, w.files)
					}
				}
			}
		})
	}
}

func TestWriteEventMultiline(t *testing.T) {
	var b strings.Builder
	writeEvent(&b, event{"build-error", "a:1: x\n    detail"})
	if b.String() != "event: build-error\ndata: a:1: x\ndata:     detail\n\n" {
		t.Errorf("event = %q", b.String())
	}
}

// safeWriter serialises writes from the server's goroutines.
type safeWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *safeWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// TestPollWatcherSeesEdits runs the polling watcher (bookgen serve --poll)
// over a temporary repository: an edit, a new file in a new folder and a
// removal each lead to one rebuild naming the path; a file outside the
// watched folders leads to none.
func TestPollWatcherSeesEdits(t *testing.T) {
	root := t.TempDir()
	ch := filepath.Join(root, "book", "ch.md")
	if err := os.MkdirAll(filepath.Dir(ch), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ch, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := newWatcher(root, filepath.Join(root, "site"), 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan []string, 8)
	go w.run(ctx, 50*time.Millisecond, func(c []string) { got <- c })
	expect := func(what string, want ...string) {
		t.Helper()
		select {
		case c := <-got:
			if strings.Join(c, " ") != strings.Join(want, " ") {
				t.Errorf("%s: rebuild for %q, want %q", what, c, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: no rebuild", what)
		}
	}
	if err := os.WriteFile(ch, []byte("two, longer"), 0o644); err != nil {
		t.Fatal(err)
	}
	expect("edit", "book/ch.md")
	if err := os.WriteFile(filepath.Join(root, "README.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "examples", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "examples", "x", "x.go"), []byte("package x"), 0o644); err != nil {
		t.Fatal(err)
	}
	expect("new folder and file", "examples", "examples/x", "examples/x/x.go")
	if err := os.Remove(ch); err != nil {
		t.Fatal(err)
	}
	expect("removal", "book/ch.md")
	select {
	case c := <-got:
		t.Errorf("unexpected rebuild for %q", c)
	case <-time.After(150 * time.Millisecond):
	}
}

// TestPollWatcherDebouncesBursts checks that a burst of edits spread over
// several poll intervals (an editor saving repeatedly, a script writing a
// file line by line) leads to one rebuild in --poll mode, as it does with
// fsnotify: the quiet period must outlast a poll interval, or every poll
// that sees a change would start a rebuild.
func TestPollWatcherDebouncesBursts(t *testing.T) {
	root := t.TempDir()
	ch := filepath.Join(root, "book", "ch.md")
	if err := os.MkdirAll(filepath.Dir(ch), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ch, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	const poll = 150 * time.Millisecond
	w, err := newWatcher(root, filepath.Join(root, "site"), poll)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	rebuilds := 0
	go w.run(ctx, 20*time.Millisecond, func([]string) { mu.Lock(); rebuilds++; mu.Unlock() })
	// 45 edits 20 ms apart: about 900 ms, six poll intervals.
	for i := range 45 {
		if err := os.WriteFile(ch, []byte(strings.Repeat("x", i+2)), 0o644); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(3 * poll)
	mu.Lock()
	n := rebuilds
	mu.Unlock()
	// One is expected; two tolerates a scheduler stall longer than a poll
	// interval on a loaded machine. Without the longer quiet period there
	// are about six.
	if n < 1 || n > 2 {
		t.Errorf("a burst over six poll intervals led to %d rebuilds, want 1", n)
	}
	t.Logf("%d rebuild(s) for 45 edits", n)
}

func TestOnlyCSS(t *testing.T) {
	for _, c := range []struct {
		changed []string
		want    bool
	}{
		{[]string{"theme/book.css"}, true},
		{[]string{"theme/book.css", "theme/extra.css"}, true},
		{[]string{"theme/book.css", "book/ch.md"}, false},
		{[]string{"theme/book.js"}, false},
		{[]string{"book/style.css"}, false},
		{nil, false},
	} {
		if got := onlyCSS(c.changed); got != c.want {
			t.Errorf("onlyCSS(%q) = %v, want %v", c.changed, got, c.want)
		}
	}
}

// startServe runs Run on root with fakeBuild and returns its log (a
// safeWriter and the builder it guards) and a function that stops it and
// waits for Run to return.
func startServe(t *testing.T, root string) (*safeWriter, *strings.Builder, func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var log strings.Builder
	sw := &safeWriter{w: &log}
	go func() {
		done <- Run(ctx, ln, Options{Build: build.Options{Root: root}, BuildFunc: fakeBuild, Debounce: 20 * time.Millisecond, Log: sw})
	}()
	stop := func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Error(err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Run did not return after cancel")
		}
	}
	return sw, &log, stop
}

// waitLog waits until the log contains want.
func waitLog(t *testing.T, sw *safeWriter, log *strings.Builder, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		sw.mu.Lock()
		got := log.String()
		sw.mu.Unlock()
		if strings.Contains(got, want) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	sw.mu.Lock()
	defer sw.mu.Unlock()
	t.Fatalf("log lacks %q after 10s:\n%s", want, log.String())
}

// TestFirstBuildFailsWithoutSite checks that a failed first build with no
// site in the output folder does not claim to serve a last good site.
func TestFirstBuildFailsWithoutSite(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "book"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "book", "ch.md"), []byte("BAD"), 0o644); err != nil {
		t.Fatal(err)
	}
	sw, log, stop := startServe(t, root)
	waitLog(t, sw, log, "bookgen: build 1 failed; no site to serve yet; every page shows the problems:")
	stop()
	if strings.Contains(log.String(), "last good") {
		t.Errorf("log claims a last good site:\n%s", log.String())
	}
}

// TestSedEditNamesTheFile edits a chapter the way GNU sed -i does (write a
// temporary file "sedXXXXXX" beside it, rename it over the chapter) and
// checks that the log names the chapter, not the temporary file.
func TestSedEditNamesTheFile(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "book")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ch := filepath.Join(dir, "ch.md")
	if err := os.WriteFile(ch, []byte("first"), 0o644); err != nil {
		t.Fatal(err)
	}
	sw, log, stop := startServe(t, root)
	defer stop()
	waitLog(t, sw, log, "build 1: 1 page")
	time.Sleep(50 * time.Millisecond)
	tmp := filepath.Join(dir, "sedjHZQce")
	if err := os.WriteFile(tmp, []byte("second"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, ch); err != nil {
		t.Fatal(err)
	}
	waitLog(t, sw, log, "build 2: 1 page")
	sw.mu.Lock()
	out := log.String()
	sw.mu.Unlock()
	if !strings.Contains(out, "bookgen: changed: book/ch.md\n") || strings.Contains(out, "sedjHZQce") {
		t.Errorf("log after a sed -i edit:\n%s\nwant \"bookgen: changed: book/ch.md\" and no temporary file", out)
	}
}

func TestChangeLine(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"book/a.md", "book/b.md"} {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		changed []string
		want    string
	}{
		{nil, ""},
		{[]string{"book/gone.md", "book/a.md"}, "bookgen: changed: book/a.md; removed: book/gone.md"},
		{[]string{"book/a.md", "book/b.md"}, "bookgen: changed: book/a.md and 1 more"},
		{[]string{"book/x.md", "book/y.md"}, "bookgen: removed: book/x.md and 1 more"},
	}
	for _, c := range cases {
		if got := changeLine(root, c.changed); got != c.want {
			t.Errorf("changeLine(%q) = %q, want %q", c.changed, got, c.want)
		}
	}
}

// TestServeBuildsForTheRoot checks that serve asks for a site served at
// the root of its address (build.Options.ServedAtRoot), so that 404.html
// finds its stylesheet even when book.toml's site-url has a path.
func TestServeBuildsForTheRoot(t *testing.T) {
	root := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan bool, 1)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, ln, Options{Build: build.Options{Root: root}, Log: io.Discard, BuildFunc: func(_ context.Context, opt build.Options) (*build.Result, error) {
			select {
			case got <- opt.ServedAtRoot:
			default:
			}
			return &build.Result{}, nil
		}})
	}()
	select {
	case v := <-got:
		if !v {
			t.Error("serve built without ServedAtRoot")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no build")
	}
	cancel()
	<-done
}
