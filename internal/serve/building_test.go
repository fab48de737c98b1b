package serve

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ownership-book/ownership/internal/build"
	"github.com/ownership-book/ownership/internal/verify"
)

// TestFirstBuildServesBuildingPage runs serve with a first build that
// takes as long as the test wants (as the first build of a fresh clone
// takes minutes): the server must answer at once with the "building"
// page, which shows the build's progress and receives it as events, and
// then reloads into the book when the build lands. Issue 9: "serve
// already says serving on ... but answers nothing until the build ends".
func TestFirstBuildServesBuildingPage(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "book"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "book", "ch.md"), []byte("the book"), 0o644); err != nil {
		t.Fatal(err)
	}
	progressed, release := make(chan struct{}), make(chan struct{})
	slowBuild := func(ctx context.Context, opt build.Options) (*build.Result, error) {
		since := time.Now()
		opt.Verify.Progress(verify.Progress{Done: 3, Total: 64, Running: []string{"go test ./examples/stream/node"}, Since: []time.Time{since}})
		close(progressed)
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		opt.Verify.Progress(verify.Progress{Done: 64, Total: 64})
		return fakeBuild(ctx, opt)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var log strings.Builder
	go func() {
		done <- Run(ctx, ln, Options{Build: build.Options{Root: root}, BuildFunc: slowBuild, Log: &safeWriter{w: &log}})
	}()
	defer func() {
		cancel()
		<-done
	}()
	base := "http://" + ln.Addr().String()
	client := &http.Client{Timeout: 5 * time.Second}
	<-progressed

	// During the build: the building page, at once, with the progress.
	resp, err := client.Get(base + "/")
	if err != nil {
		t.Fatalf("GET / during the first build: %v (the server must answer at once)", err)
	}
	body := readBody(t, resp)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("GET / during the first build: %d, Retry-After %q; want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	for _, want := range []string{"Building the book", `id="bookgen-progress"`, "3 of 64 checks done; running go test ./examples/stream/node", `<script src="/__bookgen/live.js" data-build="`} {
		if !strings.Contains(body, want) {
			t.Errorf("building page lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "style=") || strings.Contains(body, "<script>") {
		t.Errorf("building page has inline style or script (the CSP forbids them):\n%s", body)
	}
	if resp, err := client.Get(base + "/ownership.html"); err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("GET /ownership.html during the first build: %v %v, want the building page", resp, err)
	} else {
		resp.Body.Close()
	}

	// The events stream says hello and then the progress.
	req, _ := http.NewRequest("GET", base+EventsPath, nil)
	es, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer es.Body.Close()
	ev := &sse{r: bufio.NewReader(es.Body)}
	if name, _ := ev.next(t); name != "hello" {
		t.Fatalf("first event %q, want hello", name)
	}
	if name, data := ev.next(t); name != "progress" || !strings.Contains(data, "3 of 64 checks done") {
		t.Fatalf("event %q %q, want the progress", name, data)
	}

	// The build lands: the tab is told to reload, and gets the book.
	close(release)
	for {
		name, _ := ev.next(t)
		if name == "reload" {
			break
		}
		if name != "progress" {
			t.Fatalf("event %q after the build, want reload", name)
		}
	}
	resp, err = client.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	if body := readBody(t, resp); resp.StatusCode != 200 || !strings.Contains(body, "the book") {
		t.Errorf("GET / after the first build: %d %q", resp.StatusCode, body)
	}
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	var b strings.Builder
	if _, err := bufio.NewReader(resp.Body).WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
