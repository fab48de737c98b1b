package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ownership-book/ownership/internal/build"
)

// TestANSIEscapesStripped builds testdata/ansi, whose program colours its
// output with terminal escapes: the plain transcript matches, the page
// holds no escape, and --bless writes the chapter without them.
func TestANSIEscapesStripped(t *testing.T) {
	root := copyFixture(t, "ansi")
	out := filepath.Join(t.TempDir(), "site")
	cache := t.TempDir()
	if _, err := buildBook(t, root, out, cache); err != nil {
		t.Fatalf("build: %v", err)
	}
	page, err := os.ReadFile(filepath.Join(out, "ch.html"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsRune(string(page), 0x1b) || !strings.Contains(string(page), "fenced") {
		t.Errorf("ch.html holds an escape or lacks the output")
	}

	ch := filepath.Join(root, "book", "ch.md")
	src, err := os.ReadFile(ch)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ch, []byte(strings.Replace(string(src), "epoch 2: fenced", "epoch 2: stale", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	opt := build.Options{Root: root}
	opt.Verify.CacheDir = cache
	opt.Verify.Bless = true
	if _, err := build.Test(t.Context(), opt); err != nil {
		t.Fatalf("test --bless: %v", err)
	}
	blessed, err := os.ReadFile(ch)
	if err != nil {
		t.Fatal(err)
	}
	if string(blessed) != string(src) {
		t.Errorf("blessed chapter:\n%q\nwant\n%q", blessed, src)
	}
}

// TestTimeoutOutputIsBounded builds testdata/long-line, whose transcript
// command prints one 2.4 MB line and hangs: the timeout is reported at the
// command's line with an excerpt of the output cut to a few kilobytes,
// saying how much was cut.
func TestTimeoutOutputIsBounded(t *testing.T) {
	root := copyFixture(t, "long-line")
	_, err := buildBook(t, root, filepath.Join(t.TempDir(), "site"), t.TempDir())
	if err == nil {
		t.Fatal("the build succeeded")
	}
	var b strings.Builder
	build.PrintError(&b, err)
	out := b.String()
	if !strings.HasPrefix(out, "book/ch.md:4: $ go run ./examples/longline: timeout after 2s") {
		t.Errorf("report starts %.200q", out)
	}
	if len(out) > 16<<10 || !strings.Contains(out, "more bytes on this line)") {
		t.Errorf("report is %d bytes (want a bounded excerpt saying what was cut):\n%.400s", len(out), out)
	}
}

// TestStagingFoldersIgnoredByGit checks that the staging folders a killed
// build can leave beside an output folder (".site.new-N", ".public.new-N.old",
// also under a nested output) are ignored by git, so that git status
// does not list them before the next build removes them.
func TestStagingFoldersIgnoredByGit(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".site.new-123/index.html", ".public.new-42.old/ch.html", "out/.book.new-7/x"} {
		cmd := exec.Command("git", "check-ignore", "-q", p)
		cmd.Dir = root
		if err := cmd.Run(); err != nil {
			t.Errorf("git check-ignore %s: %v (not ignored)", p, err)
		}
	}
	cmd := exec.Command("git", "check-ignore", "-q", "book/.site.new-notes.md")
	cmd.Dir = root
	if cmd.Run() == nil {
		t.Error("book/.site.new-notes.md is ignored: the pattern is too wide")
	}
}
