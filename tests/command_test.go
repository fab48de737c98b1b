package tests

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// bookgen builds cmd/bookgen once per test binary and returns its path.
func bookgen(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "bookgen-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "bookgen")
		out, err := exec.Command("go", "build", "-o", binPath, "../cmd/bookgen").CombinedOutput()
		if err != nil {
			binErr = errors.New(string(out))
		}
	})
	if binErr != nil {
		t.Fatalf("building bookgen: %v", binErr)
	}
	return binPath
}

func runBookgen(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bookgen(t), args...)
	cmd.Dir = dir
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

// TestCommand runs the bookgen binary: errors print as file:line with exit
// status 1; build writes the site and prints one summary line; test writes
// no site; test --bless rewrites a wrong transcript; the root is found from a
// subfolder.
func TestCommand(t *testing.T) {
	t.Parallel()
	bad := copyFixture(t, "unknown-anchor")
	_, stderr, code := runBookgen(t, bad, "build")
	if code != 1 || !strings.HasPrefix(stderr, "book/ch.md:4: ") {
		t.Errorf("bad book: exit %d, stderr %q; want 1 and book/ch.md:4: ...", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(bad, "site")); !os.IsNotExist(err) {
		t.Error("a failed build created site/")
	}

	good := copyFixture(t, "good")
	_, stderr, code = runBookgen(t, filepath.Join(good, "book", "nested"), "test")
	if code != 0 {
		t.Fatalf("bookgen test: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(good, "site")); !os.IsNotExist(err) {
		t.Error("bookgen test wrote site/")
	}
	stdout, stderr, code := runBookgen(t, good, "build", "-o", "public")
	if code != 0 {
		t.Fatalf("bookgen build: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "3 pages") {
		t.Errorf("summary line = %q", stdout)
	}
	if _, err := os.Stat(filepath.Join(good, "public", "greet.html")); err != nil {
		t.Error(err)
	}

	// --bless takes the real output into the chapter; then the book passes.
	wrong := copyFixture(t, "wrong-transcript")
	if _, _, code := runBookgen(t, wrong, "test"); code != 1 {
		t.Fatalf("wrong transcript: exit %d, want 1", code)
	}
	stdout, stderr, code = runBookgen(t, wrong, "test", "--bless")
	if code != 0 {
		t.Fatalf("bookgen test --bless: exit %d\n%s", code, stderr)
	}
	// It names every transcript it rewrote, for the author to review.
	if want := "bookgen: rewrote book/ch.md:5: go run ./examples/epoch (1 lines -> 1 lines)\n"; !strings.HasPrefix(stdout, want) {
		t.Errorf("test --bless printed %q, want it to start with %q", stdout, want)
	}
	if stdout, _, _ = runBookgen(t, wrong, "test", "--bless"); !strings.Contains(stdout, "no transcript changed") {
		t.Errorf("second test --bless printed %q, want \"no transcript changed\"", stdout)
	}
	ch, err := os.ReadFile(filepath.Join(wrong, "book", "ch.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ch), "$ go run ./examples/epoch\nepoch 4\n") {
		t.Errorf("blessed chapter:\n%s", ch)
	}
	if _, stderr, code := runBookgen(t, wrong, "test"); code != 0 {
		t.Errorf("after --bless: exit %d\n%s", code, stderr)
	}

	_, stderr, code = runBookgen(t, t.TempDir(), "build")
	if code != 1 || !strings.Contains(stderr, "no repository root") {
		t.Errorf("outside a repository: exit %d, %q", code, stderr)
	}
	_, _, code = runBookgen(t, good, "frobnicate")
	if code != 2 {
		t.Errorf("unknown command: exit %d, want 2", code)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// TestBuildInterrupted sends SIGINT to bookgen build while it runs a
// transcript command that never ends: the build stops promptly with status
// 130, says it was interrupted (not "context canceled"), leaves the
// previous site as it was and no temporary folder beside it, and leaves no
// process behind.
func TestBuildInterrupted(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":                "module example.com/hang\n\ngo 1.26\n",
		"book/SUMMARY.md":       "# Summary\n\n- [Chapter](ch.md)\n",
		"book/ch.md":            "# Chapter\n\n```console timeout=2m\n$ go run ./examples/hang\ndone\n```\n",
		"examples/hang/main.go": "// Command hang never finishes.\npackage main\n\nimport \"time\"\n\nfunc main() { time.Sleep(time.Hour) }\n",
		"out/.bookgen-site":     "",
		"out/index.html":        "previous site",
	}
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stale := hangPIDs(nil)
	cmd := exec.Command(bookgen(t), "build", "-o", "out")
	cmd.Dir = dir
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the transcript's program runs (its binary is built by
	// go run under a go-build folder and named hang). Without /proc, give
	// it a few seconds instead.
	_, noProc := os.Stat("/proc/self/comm")
	if noProc != nil {
		time.Sleep(5 * time.Second)
	}
	deadline := time.Now().Add(60 * time.Second)
	var ours map[string]bool
	for noProc == nil && len(ours) == 0 {
		ours = hangPIDs(stale)
		if len(ours) > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the transcript never started; stderr: %s", e.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	start := time.Now()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var err error
	select {
	case err = <-waited:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("bookgen build did not stop within 30s of SIGINT")
	}
	t.Logf("stopped %v after SIGINT", time.Since(start).Round(time.Millisecond))
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("exit: %v, want status 130", err)
	}
	if !strings.Contains(e.String(), "bookgen: interrupted;") || strings.Contains(e.String(), "context canceled") {
		t.Errorf("stderr = %q, want it to say the build was interrupted", e.String())
	}
	if got, err := os.ReadFile(filepath.Join(dir, "out", "index.html")); err != nil || string(got) != "previous site" {
		t.Errorf("previous site changed: %q, %v", got, err)
	}
	entries, _ := os.ReadDir(dir)
	for _, en := range entries {
		if strings.HasPrefix(en.Name(), ".out.") {
			t.Errorf("left behind: %s", en.Name())
		}
	}
	deadline = time.Now().Add(10 * time.Second)
	for noProc == nil && len(stillRunning(ours)) > 0 {
		if time.Now().After(deadline) {
			t.Error("the transcript's program still runs after bookgen stopped")
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// hangPIDs returns the processes whose executable is named hang (the
// program of TestBuildInterrupted's transcript) and that are not in
// before: another test's or an earlier run's hang is not this build's.
func hangPIDs(before map[string]bool) map[string]bool {
	out := map[string]bool{}
	procs, _ := filepath.Glob("/proc/[0-9]*/comm")
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil && strings.TrimSpace(string(b)) == "hang" {
			if pid := filepath.Base(filepath.Dir(p)); !before[pid] {
				out[pid] = true
			}
		}
	}
	return out
}

// stillRunning returns the processes of pids that still run.
func stillRunning(pids map[string]bool) []string {
	var out []string
	for pid := range pids {
		if _, err := os.Stat(filepath.Join("/proc", pid)); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// TestInterruptDuringLongStage sends SIGINT to bookgen build while it
// parses a 31 MB chapter, work that does not look at the build's context
// for many seconds (15 s here before the watch): the process still ends
// within a few seconds with status 130 and says why, and a second SIGINT
// ends it at once. The previous site is kept either way.
func TestInterruptDuringLongStage(t *testing.T) {
	var ch strings.Builder
	ch.WriteString("# Ch\n\n")
	words := []string{"epoch", "fence", "*holder*", "token", "[link](#ch)", "`code`", "claim", "voter", "leader", "term"}
	x := uint32(1)
	for range 150000 {
		for j := range 30 {
			x = x*1664525 + 1013904223
			if j > 0 {
				ch.WriteByte(' ')
			}
			ch.WriteString(words[int(x>>8)%len(words)])
		}
		ch.WriteString("\n\n")
	}
	dir := t.TempDir()
	for name, data := range map[string]string{
		"go.mod":            "module example.com/big\n\ngo 1.26\n",
		"book/SUMMARY.md":   "# Summary\n\n- [Ch](ch.md)\n",
		"book/ch.md":        ch.String(),
		"out/.bookgen-site": "",
		"out/index.html":    "previous site",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name    string
		signals int
		within  time.Duration
		says    string
	}{
		{"one SIGINT", 1, 6 * time.Second, "bookgen: interrupted; the running stage did not stop within 1s, exiting without it"},
		{"two SIGINTs", 2, 2 * time.Second, "bookgen: interrupted again; exiting now"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bookgen(t), "build", "-o", "out")
			cmd.Dir = dir
			var e bytes.Buffer
			cmd.Stderr = &e
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waited := make(chan error, 1)
			go func() { waited <- cmd.Wait() }()
			time.Sleep(2500 * time.Millisecond) // loading, expanding, parsing
			start := time.Now()
			for i := range tc.signals {
				if i > 0 {
					time.Sleep(100 * time.Millisecond)
				}
				if err := cmd.Process.Signal(os.Interrupt); err != nil {
					t.Fatal(err)
				}
			}
			var err error
			select {
			case err = <-waited:
			case <-time.After(tc.within):
				cmd.Process.Kill()
				<-waited
				t.Fatalf("bookgen build still ran %v after SIGINT; stderr: %s", tc.within, e.String())
			}
			t.Logf("stopped %v after the first SIGINT", time.Since(start).Round(time.Millisecond))
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 130 {
				t.Errorf("exit: %v, want status 130; stderr: %s", err, e.String())
			}
			if !strings.Contains(e.String(), tc.says) {
				t.Errorf("stderr = %q, want %q", e.String(), tc.says)
			}
			if got, err := os.ReadFile(filepath.Join(dir, "out", "index.html")); err != nil || string(got) != "previous site" {
				t.Errorf("previous site changed: %q, %v", got, err)
			}
		})
	}
}

// lockedBuffer is a bytes.Buffer that a test reads while a process
// writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestInterruptDuringLayout sends SIGINT while d2 lays out a figure that
// takes it far longer than a second (a chain of 40 nodes with 80 random
// labelled edges: dagre needs tens of seconds), once the build has said
// it is drawing it. The build must end within a second or two with
// status 130 and keep the previous site: the layout runs where the build
// can abandon it.
func TestInterruptDuringLayout(t *testing.T) {
	var fig strings.Builder
	const n = 40
	for i := 0; i+1 < n; i++ {
		fmt.Fprintf(&fig, "n%d -> n%d\n", i, i+1)
	}
	x := uint32(1)
	for i := range 2 * n {
		x = x*1664525 + 1013904223
		a := int(x>>8) % n
		x = x*1664525 + 1013904223
		c := int(x>>8) % n
		fmt.Fprintf(&fig, "n%d -> n%d: edge %d\n", a, c, i)
	}
	dir := t.TempDir()
	for name, data := range map[string]string{
		"go.mod":            "module example.com/fig\n\ngo 1.26\n",
		"book/book.toml":    "[bookgen]\nfigure-timeout = \"10m\"\n",
		"book/SUMMARY.md":   "# Summary\n\n- [Ch](ch.md)\n",
		"book/ch.md":        "# Ch\n\n```d2\n" + fig.String() + "```\n",
		"out/.bookgen-site": "",
		"out/index.html":    "previous site",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bookgen(t), "build", "-o", "out")
	cmd.Dir = dir
	var e lockedBuffer
	cmd.Stderr = &e
	cmd.Stdout = &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(e.String(), "drawing d2 figure at book/ch.md:3") {
		select {
		case err := <-waited:
			t.Fatalf("bookgen build ended before it said it was drawing the figure: %v\n%s", err, e.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-waited
			t.Fatalf("bookgen build never said it was drawing the figure:\n%s", e.String())
		}
	}
	start := time.Now()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-waited:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		<-waited
		t.Fatalf("bookgen build still ran 5s after SIGINT during a layout; output: %s", e.String())
	}
	t.Logf("stopped %v after SIGINT", time.Since(start).Round(time.Millisecond))
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("exit: %v, want status 130; output: %s", err, e.String())
	}
	if !strings.Contains(e.String(), "bookgen: interrupted") {
		t.Errorf("output = %q, want it to say the build was interrupted", e.String())
	}
	if got, err := os.ReadFile(filepath.Join(dir, "out", "index.html")); err != nil || string(got) != "previous site" {
		t.Errorf("previous site changed: %q, %v", got, err)
	}
}
