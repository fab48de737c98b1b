package build

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// alsoRepo is a repository whose book lists manual/ in [bookgen]
// also-build; the manual's chapter shows a Go file, so a build that
// verified the manual has a compile check for it.
func alsoRepo(t *testing.T, manualChapter string) string {
	t.Helper()
	root := writeRepo(t, map[string]string{
		"book/SUMMARY.md":   "# Summary\n\n- [A](a.md)\n",
		"book/a.md":         "# A\n\nThe book.\n",
		"manual/book.toml":  "[book]\ntitle = \"Manual\"\n",
		"manual/SUMMARY.md": "# Summary\n\n- [Use](use.md)\n",
		"manual/use.md":     manualChapter,
	})
	writeFiles(t, root, map[string]string{"book/book.toml": "[book]\ntitle = \"X\"\n\n[bookgen]\nalso-build = [\"manual\"]\n"})
	return root
}

const goodManual = "# Use\n\n```go\npackage main\n\nfunc main() {}\n```\n"

// TestAlsoBuild checks [bookgen] also-build: BuildAll builds the main book
// into site/ and the manual (its own book.toml and SUMMARY.md in manual/)
// into site/manual/, with the manual's title, its Go block verified; and
// a failure in the manual fails the run at the manual's file and line
// before the main site is replaced (the last good site stays, manual
// included). Without also-build (Build alone, or the key removed) there is
// no site/manual/: the negative control.
func TestAlsoBuild(t *testing.T) {
	root := alsoRepo(t, goodManual)
	out := filepath.Join(t.TempDir(), "site")
	opt := Options{Root: root, Out: out}
	opt.Verify.CacheDir = t.TempDir()
	results, err := BuildAll(t.Context(), opt)
	if err != nil {
		t.Fatalf("BuildAll: %v", err)
	}
	if len(results) != 2 || results[1].Out != filepath.Join(out, "manual") {
		t.Fatalf("BuildAll gave %d results (want 2, the manual's into %s)", len(results), filepath.Join(out, "manual"))
	}
	if results[1].Report == nil || len(results[1].Report.Checks) == 0 {
		t.Errorf("the manual was built without verifying its Go block")
	}
	for _, f := range []string{"a.html", "manual/use.html", "manual/index.html"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("site: %v", err)
		}
	}
	page, _ := os.ReadFile(filepath.Join(out, "manual", "use.html"))
	if !strings.Contains(string(page), "Manual") {
		t.Errorf("site/manual/use.html does not carry the manual's title")
	}

	// A broken manual fails the whole run at its line; site/ is kept.
	writeFiles(t, root, map[string]string{
		"manual/use.md": "# Use\n\n```go\npackage main\n\nfunc main() { undefined() }\n```\n",
		"book/a.md":     "# A\n\nThe book, edited.\n",
	})
	_, err = BuildAll(t.Context(), opt)
	if err == nil || !strings.Contains(err.Error(), "manual/use.md:6:") {
		t.Fatalf("BuildAll of a broken manual: %v; want an error at manual/use.md:6", err)
	}
	if page, _ := os.ReadFile(filepath.Join(out, "a.html")); strings.Contains(string(page), "edited") {
		t.Errorf("a failing manual let the main site be replaced")
	}
	if _, err := os.Stat(filepath.Join(out, "manual", "use.html")); err != nil {
		t.Errorf("a failing manual removed the last good manual: %v", err)
	}
	if _, err := TestAll(t.Context(), opt); err == nil || !strings.Contains(err.Error(), "manual/use.md:6:") {
		t.Errorf("TestAll of a broken manual: %v; want an error at manual/use.md:6", err)
	}

	// Negative control: the key removed, the manual is neither built nor checked.
	writeFiles(t, root, map[string]string{"book/book.toml": "[book]\ntitle = \"X\"\n"})
	out2 := filepath.Join(t.TempDir(), "site")
	opt.Out = out2
	if results, err = BuildAll(t.Context(), opt); err != nil || len(results) != 1 {
		t.Fatalf("BuildAll without also-build: %d results, %v", len(results), err)
	}
	if _, err := os.Stat(filepath.Join(out2, "manual")); err == nil {
		t.Errorf("site/manual/ written without also-build")
	}
}

// TestAlsoBuildRefused checks the errors of also-build: a folder leaving
// the root, named twice, or without a book, and a main site that already
// has a file where the other book would go.
func TestAlsoBuildRefused(t *testing.T) {
	cases := []struct{ toml, want string }{
		{"also-build = [\"../x\"]", "book/book.toml:5: also-build \"../x\": give a folder of the repository"},
		{"also-build = [\"/abs\"]", "book/book.toml:5: also-build \"/abs\": give a folder of the repository"},
		{"also-build = [\"manual\", \"manual/\"]", "book/book.toml:5: also-build names \"manual/\" twice"},
		{"also-build = [\"nowhere\"]", "the book's source folder nowhere/ does not exist"},
	}
	for _, tc := range cases {
		root := alsoRepo(t, goodManual)
		writeFiles(t, root, map[string]string{"book/book.toml": "[book]\ntitle = \"X\"\n\n[bookgen]\n" + tc.toml + "\n"})
		opt := Options{Root: root, Out: filepath.Join(t.TempDir(), "site")}
		opt.Verify.CacheDir = t.TempDir()
		if _, err := BuildAll(t.Context(), opt); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: BuildAll: %v; want %q", tc.toml, err, tc.want)
		}
	}
	// The main book has a chapter at manual/x.md: its page is where the
	// manual's site would go.
	root := alsoRepo(t, goodManual)
	writeFiles(t, root, map[string]string{
		"book/SUMMARY.md":  "# Summary\n\n- [A](a.md)\n- [X](manual/x.md)\n",
		"book/manual/x.md": "# X\n",
	})
	opt := Options{Root: root, Out: filepath.Join(t.TempDir(), "site")}
	opt.Verify.CacheDir = t.TempDir()
	if _, err := BuildAll(t.Context(), opt); err == nil || !strings.Contains(err.Error(), "manual/x.html, where the other book would go") {
		t.Errorf("BuildAll with a clash: %v", err)
	}
}
