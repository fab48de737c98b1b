// Package serve is bookgen's live server: it builds the book, serves the
// output folder over HTTP, watches the book's source folder (book/, or
// src/ and book.toml in mdBook's layout; see Watched), examples/ and theme/ (with
// fsnotify, recursively, new folders included), rebuilds after a burst of
// changes has settled, and tells open pages to reload through Server-Sent
// Events. A failed rebuild keeps the last good site on disk and in the
// browser and shows the error (file:line) over the page.
//
// Endpoints besides the site:
//
//	/__bookgen/events   text/event-stream: "hello" (data: build id) on connect,
//	                    "reload" (data: build id) after a good build,
//	                    "css" (data: the build id, a newline, and the new stylesheet's
//	                    site path, e.g. "assets/book.3f2a9c1e.css") after a good build that only a
//	                    change to theme/*.css caused: the page swaps its stylesheet
//	                    without reloading,
//	                    "build-error" (data: the problems, one per line, with their
//	                    details, such as a transcript's diff) after a bad one,
//	                    "progress" (data: "12 of 64 checks done; running go test
//	                    ./examples/x (8s)") while a build verifies, until one has
//	                    succeeded (for the "building" page); a slow tab gets the
//	                    latest only
//	/__bookgen/live.js  the script injected before </body> of every served page,
//	                    as <script src="/__bookgen/live.js" data-build="ID">: a
//	                    page whose ID is not the one "hello" names is reloaded
//
// The first build of a fresh clone runs every example's tests (minutes on
// empty Go caches). The server answers from the start: until a site exists,
// every page is a "building" page (503, Retry-After) that shows the
// progress and becomes the book when the first build lands.
package serve

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ownership-book/ownership/internal/build"
	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/verify"
)

// Options configure Run.
type Options struct {
	Build build.Options
	// Log receives the URL, one summary line per build and every build error.
	Log io.Writer
	// Debounce is how long the sources must be quiet before a rebuild
	// (DefaultDebounce when zero).
	Debounce time.Duration
	// Poll, when positive, replaces file system events (fsnotify) by
	// comparing every watched file's modification time and size at this
	// interval (bookgen serve --poll).
	Poll time.Duration
	// BuildFunc replaces build.Build (tests); nil means build.Build.
	BuildFunc func(context.Context, build.Options) (*build.Result, error)
}

// EventsPath and ScriptPath are the live-reload endpoints.
const (
	EventsPath = "/__bookgen/events"
	ScriptPath = "/__bookgen/live.js"
)

//go:embed live.js
var liveJS []byte

// scriptTag is the live-reload script element for a page of build id.
func scriptTag(id string) []byte {
	return []byte(`<script src="` + ScriptPath + `" data-build="` + htmlEscape(id) + `"></script>`)
}

// DefaultDebounce is how long the sources must be quiet before a rebuild
// when Options.Debounce is not set: long enough to take an editor's save
// (a write, or a new file renamed over the old one: vim, VS Code and
// JetBrains' safe write each make their events within a millisecond or
// two) as one change, short enough to leave most of the 50 ms a reader
// notices to the rebuild itself. An editor slower than that costs one
// extra rebuild, never a lost change: events that arrive during a rebuild
// lead to another.
const DefaultDebounce = 10 * time.Millisecond

// Run builds the book, serves its output folder on ln and rebuilds on every
// change until ctx is done. It returns nil after a clean shutdown; a failed
// build is reported on Log, not returned.
func Run(ctx context.Context, ln net.Listener, opt Options) error {
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	if opt.Debounce <= 0 {
		opt.Debounce = DefaultDebounce
	}
	if opt.BuildFunc == nil {
		opt.BuildFunc = build.Build
	}
	// The site is served at the root of ln's address, whatever path
	// book.toml's site-url has: 404.html must refer to "/".
	opt.Build.ServedAtRoot = true
	// Builds follow one another: each reuses what the last one did.
	opt.Build.KeepWarm()
	s := &server{opt: opt, out: opt.Build.OutDir(), clients: map[*client]bool{}, nonce: time.Now().UnixNano()}
	// Progress goes to the terminal (unless -v logs every check) and to
	// the open tabs.
	s.progressLine = build.NewProgressLine(opt.Log)
	defer s.progressLine.Stop()
	term := s.progressLine.Update
	if opt.Build.Verify.Log != nil {
		term = nil
	}
	prev := opt.Build.Verify.Progress
	s.opt.Build.Verify.Progress = func(p verify.Progress) {
		if prev != nil {
			prev(p)
		}
		if term != nil {
			term(p)
		}
		s.setProgress(p)
	}

	w, err := newWatcher(opt.Build.Root, s.out, opt.Poll)
	if err != nil {
		return err
	}
	defer w.close()

	how := "watching with fsnotify"
	if opt.Poll > 0 {
		how = fmt.Sprintf("polling every %s", opt.Poll)
	}
	fmt.Fprintf(opt.Log, "bookgen: serving %s on http://%s/ (%s)\n", s.out, ln.Addr(), how)

	// Serve at once: during the first build (minutes on a fresh clone)
	// the browser gets the "building" page, not a connection that hangs.
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()

	ctx, stopLoop := context.WithCancel(ctx)
	defer stopLoop()
	loopDone := make(chan struct{})
	go func() {
		defer close(loopDone)
		s.rebuild(ctx, nil)
		w.run(ctx, opt.Debounce, func(changed []string) { s.rebuild(ctx, changed) })
	}()

	select {
	case <-ctx.Done():
	case err = <-errc:
		if err != nil {
			// The loop stops with the context; end it.
			stopLoop()
		}
	}
	s.closeClients()
	sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	<-loopDone
	// Leave print.html and the search index complete on disk.
	s.resumeFinish(true)
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	fmt.Fprintln(opt.Log, "bookgen: stopped")
	return nil
}

// event is one Server-Sent Event.
type event struct{ name, data string }

type server struct {
	opt          Options
	out          string
	nonce        int64
	progressLine *build.ProgressLine
	finishing    *finishRun // the last good build's Finish (see finishRun)

	mu       sync.Mutex
	headers  []headerRule // netlify.toml's [[headers]], read at each build
	gen      int          // builds started
	good     int          // number of the last good build, 0 before one
	lastErr  string       // the last build's problems, "" when it succeeded
	progress string       // the running build's progress (ProgressText), "" between builds
	clients  map[*client]bool
	closed   bool
}

// client is one open events stream: ev carries the events, progress the
// latest progress only (a tab that reads slowly skips to the newest, and
// progress never crowds out a "reload").
type client struct {
	ev       chan event
	progress chan string
}

// setProgress records the running build's progress and, until a build
// has succeeded (the tabs may show the "building" page), sends it to the
// open tabs.
func (s *server) setProgress(p verify.Progress) {
	text := build.ProgressText(p, time.Now())
	s.mu.Lock()
	defer s.mu.Unlock()
	s.progress = text
	if s.good > 0 {
		return
	}
	for c := range s.clients {
		select {
		case <-c.progress: // drop the older one
		default:
		}
		select {
		case c.progress <- text:
		default:
		}
	}
}

// buildID names the site currently served.
func (s *server) buildID() string { return fmt.Sprintf("%x-%d", s.nonce, s.good) }

// rebuild runs one build and tells the browsers.
func (s *server) rebuild(ctx context.Context, changed []string) {
	if ctx.Err() != nil {
		return
	}
	s.mu.Lock()
	s.gen++
	n := s.gen
	s.mu.Unlock()
	if line := changeLine(s.opt.Build.Root, changed); line != "" {
		fmt.Fprintln(s.opt.Log, line)
	}
	rules, herr := readHeaderRules(s.opt.Build.Root)
	if herr != nil {
		fmt.Fprintf(s.opt.Log, "bookgen: %v; serving without its headers\n", herr)
	}
	s.mu.Lock()
	s.headers = rules
	s.mu.Unlock()
	s.stopFinish()
	res, err := s.opt.BuildFunc(ctx, s.opt.Build)
	s.progressLine.Clear()
	s.mu.Lock()
	s.progress = ""
	s.mu.Unlock()
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		var b strings.Builder
		for _, e := range diag.All(err) {
			b.WriteString(e.Error())
			b.WriteByte('\n')
		}
		msg := strings.TrimRight(b.String(), "\n")
		fmt.Fprintf(s.opt.Log, "bookgen: build %d failed; %s:\n%s\n", n, s.serving(), msg)
		s.mu.Lock()
		s.lastErr = msg
		s.mu.Unlock()
		s.broadcast(event{"build-error", msg})
		s.resumeFinish(false)
		return
	}
	build.PrintWarnings(s.opt.Log, res)
	fmt.Fprintf(s.opt.Log, "bookgen: build %d: %s\n", n, res.Summary())
	s.mu.Lock()
	s.good = n
	wasBroken := s.lastErr != ""
	s.lastErr = ""
	id := s.buildID()
	s.mu.Unlock()
	if css := res.Stylesheet(); css != "" && !wasBroken && onlyCSS(changed) {
		s.broadcast(event{"css", id + "\n" + css})
	} else {
		s.broadcast(event{"reload", id})
	}
	// The open pages reload first; print.html and the search index,
	// which show every chapter, follow, while the next change is awaited.
	if res.Finish != nil {
		s.startFinish(n, res.Finish)
	}
}

// finishRun is the writing of what a good build left for after its reload
// (build.Result.Finish: print.html and the search index). It runs beside
// the wait for the next change; the next build stops it between files
// (Finish leaves the files it did not write as they were, and the next
// build's Finish writes them), so a save that follows at once does not
// wait for the print page of the one before. Only the loop goroutine (and
// Run, after the loop has ended) touches it.
type finishRun struct {
	n      int // the build's number
	fn     func(context.Context) error
	cancel context.CancelFunc
	done   chan struct{}
	err    error // set when done is closed
}

// startFinish runs fn, build n's Finish, in the background.
func (s *server) startFinish(n int, fn func(context.Context) error) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &finishRun{n: n, fn: fn, cancel: cancel, done: make(chan struct{})}
	s.finishing = f
	go func() {
		defer close(f.done)
		f.err = fn(ctx)
		if f.err != nil && !errors.Is(f.err, context.Canceled) {
			fmt.Fprintf(s.opt.Log, "bookgen: build %d: writing print.html and the search index failed: %v\n", n, f.err)
		}
	}()
}

// stopFinish stops the running Finish, if any, and waits for it.
func (s *server) stopFinish() {
	if f := s.finishing; f != nil {
		f.cancel()
		<-f.done
	}
}

// resumeFinish runs again the Finish of the last good build when it was
// stopped before it had written everything (the build that stopped it
// failed, so no later Finish will): print.html and the search index then
// match the site still served.
func (s *server) resumeFinish(wait bool) {
	f := s.finishing
	if f == nil {
		return
	}
	<-f.done
	if !errors.Is(f.err, context.Canceled) {
		return
	}
	s.startFinish(f.n, f.fn)
	if wait {
		<-s.finishing.done
	}
}

// serving says what a failed build leaves the browsers with: the last good
// site of this session, a site an earlier run left in the output folder, or
// nothing (pages then show the problems).
func (s *server) serving() string {
	s.mu.Lock()
	good := s.good
	s.mu.Unlock()
	if good > 0 {
		return fmt.Sprintf("still serving the last good site (build %d)", good)
	}
	if _, err := os.Stat(filepath.Join(s.out, "index.html")); err == nil {
		return "serving the site an earlier run left in " + s.out
	}
	return "no site to serve yet; every page shows the problems"
}

// onlyCSS reports whether every changed path is a stylesheet of the theme,
// so that the open pages can swap their stylesheet instead of reloading.
func onlyCSS(changed []string) bool {
	for _, p := range changed {
		if !strings.HasPrefix(p, "theme/") || !strings.HasSuffix(p, ".css") {
			return false
		}
	}
	return len(changed) > 0
}

func (s *server) broadcast(ev event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.clients {
		select {
		case c.ev <- ev:
		default: // a slow client misses an event; it reconnects or reloads later
		}
	}
}

func (s *server) closeClients() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for c := range s.clients {
		close(c.ev)
		delete(s.clients, c)
	}
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	rules := s.headers
	s.mu.Unlock()
	setHeaders(w.Header(), rules, r.URL.Path)
	switch r.URL.Path {
	case EventsPath:
		s.events(w, r)
		return
	case ScriptPath:
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(liveJS)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	p := path.Clean("/" + r.URL.Path)
	name := filepath.Join(s.out, filepath.FromSlash(p))
	fi, err := os.Stat(name)
	if err == nil && fi.IsDir() {
		if !strings.HasSuffix(r.URL.Path, "/") {
			http.Redirect(w, r, r.URL.Path+"/", http.StatusMovedPermanently)
			return
		}
		name = filepath.Join(name, "index.html")
		fi, err = os.Stat(name)
	}
	if err != nil || fi.IsDir() {
		s.notFound(w, r)
		return
	}
	if strings.HasSuffix(name, ".html") {
		s.serveHTML(w, name, http.StatusOK)
		return
	}
	f, err := os.Open(name)
	if err != nil {
		s.notFound(w, r)
		return
	}
	defer f.Close()
	http.ServeContent(w, r, name, fi.ModTime(), f)
}

// serveHTML serves a page with the live-reload script added.
func (s *server) serveHTML(w http.ResponseWriter, name string, status int) {
	data, err := os.ReadFile(name)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(inject(data, s.currentID()))
}

func (s *server) currentID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buildID()
}

// inject puts the live-reload script of build id before the last </body>,
// or at the end.
func inject(page []byte, id string) []byte {
	tag := scriptTag(id)
	i := bytes.LastIndex(page, []byte("</body>"))
	if i < 0 {
		return append(append([]byte{}, page...), tag...)
	}
	out := make([]byte, 0, len(page)+len(tag)+1)
	out = append(out, page[:i]...)
	out = append(out, tag...)
	out = append(out, '\n')
	return append(out, page[i:]...)
}

func (s *server) notFound(w http.ResponseWriter, r *http.Request) {
	nf := filepath.Join(s.out, "404.html")
	if _, err := os.Stat(nf); err == nil {
		s.serveHTML(w, nf, http.StatusNotFound)
		return
	}
	// No site yet. While the first build runs: the "building" page.
	s.mu.Lock()
	msg := s.lastErr
	building := s.good == 0 && s.lastErr == "" // no build has ended yet
	progress := s.progress
	id := s.buildID()
	s.mu.Unlock()
	if building {
		s.buildingPage(w, progress, id)
		return
	}
	// The first build failed: a bare page that shows the error and
	// reloads when a build succeeds.
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusNotFound)
	page := "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>bookgen</title></head><body><h1>Not found</h1>"
	if msg != "" {
		page += "<p>The book does not build yet:</p><pre>" + htmlEscape(msg) + "</pre>"
	}
	page += "</body></html>\n"
	_, _ = w.Write(inject([]byte(page), id))
}

// buildingPage answers while the first build runs and no site exists: 503
// with Retry-After (the page is not there yet), a page that says so and
// shows the progress, and the live-reload script, which reloads it into
// the book when the build lands. No inline script or style: the page obeys
// the site's Content-Security-Policy.
func (s *server) buildingPage(w http.ResponseWriter, progress, id string) {
	if progress == "" {
		progress = "Loading the book…"
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Retry-After", "2")
	w.WriteHeader(http.StatusServiceUnavailable)
	page := "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">" +
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">" +
		"<title>Building the book… · bookgen</title></head>\n<body>\n" +
		"<main id=\"bookgen-building\">\n<h1>Building the book…</h1>\n" +
		"<p>bookgen checks every example (it compiles, vets and tests them and runs each transcript) " +
		"before it writes a page. The first build on a fresh clone takes a few minutes; later ones are cached. " +
		"This page turns into the book when the build is done.</p>\n" +
		"<p id=\"bookgen-progress\" role=\"status\" aria-live=\"polite\">" + htmlEscape(progress) + "</p>\n" +
		"</main>\n</body></html>\n"
	_, _ = w.Write(inject([]byte(page), id))
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// events streams Server-Sent Events to one browser tab.
func (s *server) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	c := &client{ev: make(chan event, 8), progress: make(chan string, 1)}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return
	}
	s.clients[c] = true
	hello := event{"hello", s.buildID()}
	lastErr := s.lastErr
	if s.progress != "" && s.good == 0 {
		c.progress <- s.progress
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.clients[c] {
			delete(s.clients, c)
		}
		s.mu.Unlock()
	}()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, "retry: 1000\n\n")
	writeEvent(w, hello)
	if lastErr != "" {
		writeEvent(w, event{"build-error", lastErr})
	}
	fl.Flush()
	keepAlive := time.NewTicker(25 * time.Second)
	defer keepAlive.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case ev, ok := <-c.ev:
			if !ok {
				return
			}
			writeEvent(w, ev)
			fl.Flush()
		case p := <-c.progress:
			writeEvent(w, event{"progress", p})
			fl.Flush()
		case <-keepAlive.C:
			_, _ = io.WriteString(w, ": keep-alive\n\n")
			fl.Flush()
		}
	}
}

// writeEvent writes ev in the text/event-stream format: a multi-line data
// field becomes one "data:" line per line.
func writeEvent(w io.Writer, ev event) {
	var b strings.Builder
	b.WriteString("event: " + ev.name + "\n")
	for _, l := range strings.Split(ev.data, "\n") {
		b.WriteString("data: " + l + "\n")
	}
	b.WriteString("\n")
	_, _ = io.WriteString(w, b.String())
}

// changeLine is the log line naming what a rebuild follows: the first
// changed file that exists after the quiet period ("bookgen: changed:
// book/ch.md and 2 more"), then the files that are gone ("removed:
// book/old.md"). "" when changed is empty (the first build, an event
// overflow).
func changeLine(root string, changed []string) string {
	var present, gone []string
	for _, p := range changed {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err == nil {
			present = append(present, p)
		} else {
			gone = append(gone, p)
		}
	}
	list := func(ps []string) string {
		if len(ps) > 1 {
			return fmt.Sprintf("%s and %d more", ps[0], len(ps)-1)
		}
		return ps[0]
	}
	var parts []string
	if len(present) > 0 {
		parts = append(parts, "changed: "+list(present))
	}
	if len(gone) > 0 {
		parts = append(parts, "removed: "+list(gone))
	}
	if len(parts) == 0 {
		return ""
	}
	return "bookgen: " + strings.Join(parts, "; ")
}
