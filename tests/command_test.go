package tests

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// bookgen builds cmd/bookgen once per test binary and returns its path.
func bookgen(t *testing.T) string {
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
