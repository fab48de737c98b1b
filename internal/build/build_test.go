package build

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/site"
	"github.com/ownership-book/ownership/internal/verify"
)

func TestFindRoot(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"go.mod", "book/book.toml"} {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	deep := filepath.Join(root, "examples", "x", "y")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, start := range []string{root, deep, filepath.Join(root, "book")} {
		got, err := FindRoot(start)
		if err != nil || got != root {
			t.Errorf("FindRoot(%s) = %q, %v; want %s", start, got, err, root)
		}
	}
	// go.mod alone is not a root: the search goes on upwards and fails.
	lone := t.TempDir()
	if err := os.WriteFile(filepath.Join(lone, "go.mod"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := FindRoot(lone); !errors.Is(err, ErrNoRoot) {
		t.Errorf("FindRoot(go.mod alone) err = %v, want ErrNoRoot", err)
	}
}

// TestBookTomlOptional checks that a repository whose book has SUMMARY.md
// but no book.toml is found and builds, as book.Load allows (mdBook's
// defaults apply).
func TestBookTomlOptional(t *testing.T) {
	root := writeRepo(t, map[string]string{
		"book/SUMMARY.md": "# Summary\n\n- [A](a.md)\n",
		"book/a.md":       "# A\n\nText.\n",
	})
	if err := os.Remove(filepath.Join(root, "book", "book.toml")); err != nil {
		t.Fatal(err)
	}
	got, err := FindRoot(filepath.Join(root, "book"))
	if err != nil || got != root {
		t.Fatalf("FindRoot without book.toml = %q, %v; want %s", got, err, root)
	}
	opt := Options{Root: got, Out: filepath.Join(t.TempDir(), "site")}
	opt.Verify.CacheDir = t.TempDir()
	if _, err := Build(t.Context(), opt); err != nil {
		t.Errorf("Build without book.toml: %v", err)
	}
}

func TestOutDir(t *testing.T) {
	if got := (Options{Root: "/r"}).OutDir(); got != "/r/site" {
		t.Errorf("default OutDir = %s", got)
	}
	if got := (Options{Root: "/r", Out: "public"}).OutDir(); got != "/r/public" {
		t.Errorf("relative OutDir = %s", got)
	}
	if got := (Options{Root: "/r", Out: "/tmp/x/"}).OutDir(); got != "/tmp/x" {
		t.Errorf("absolute OutDir = %s", got)
	}
}

func TestSummary(t *testing.T) {
	r := &Result{Pages: 1, Report: &verify.Report{Ran: 1, Cached: 30}, Elapsed: 1234567 * time.Microsecond}
	if got := r.Summary(); got != "1 page, 1 check run, 30 cached, 1.235s" {
		t.Errorf("Summary = %q", got)
	}
	r = &Result{Pages: 4}
	if got := r.Summary(); got != "4 pages, 0 checks run, 0 cached, 0s" {
		t.Errorf("Summary = %q", got)
	}
	// A rebuild in serve: parse checks are counted apart from the checks
	// that start a go process, and reused pages are told.
	rep := &verify.Report{Ran: 3, Cached: 5, Checks: []verify.Check{
		{Kind: "parse"}, {Kind: "parse"}, {Kind: "transcript"}, {Kind: "vet", Cached: true},
	}}
	r = &Result{Pages: 5, Rendered: 1, Reused: 4, Report: rep, Elapsed: 85 * time.Millisecond}
	if got := r.Summary(); got != "5 pages (1 rendered), 1 check run, 5 cached, 2 parsed, 85ms" {
		t.Errorf("Summary = %q", got)
	}
}

func TestPrintError(t *testing.T) {
	var b strings.Builder
	PrintError(&b, diag.List{
		{File: "book/a.md", Line: 3, Msg: "bad", Detail: "-x\n+y"},
		{File: "book/b.md", Line: 1, Msg: "worse"},
	})
	want := "book/a.md:3: bad\n    -x\n    +y\nbook/b.md:1: worse\n"
	if b.String() != want {
		t.Errorf("PrintError wrote %q, want %q", b.String(), want)
	}
}

// writeRepo writes a repository with go.mod, book/book.toml and the given
// files (paths relative to the root).
func writeRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	files["go.mod"] = "module example.com/x\n\ngo 1.26\n"
	files["book/book.toml"] = "[book]\ntitle = \"X\"\n"
	for name, data := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestRefusedBeforeVerify checks that a book the site stage cannot write
// (no chapters; a chapter named print.md, 404.md, or index.md when it is
// not the first) is refused at its SUMMARY.md line before any check runs:
// the chapter's transcript would fail if it were run.
func TestRefusedBeforeVerify(t *testing.T) {
	chapter := "# C\n\n```console\n$ go run ./examples/missing\nnever printed\n```\n"
	cases := []struct {
		name, summary, want string
	}{
		{"empty", "# Summary\n", "book/SUMMARY.md: the book has no chapters"},
		{"print", "# Summary\n\n- [A](a.md)\n- [Print](print.md)\n", "book/SUMMARY.md:4: chapter book/print.md would be written to print.html"},
		{"404", "# Summary\n\n- [A](a.md)\n- [Lost](404.md)\n", "book/SUMMARY.md:4: chapter book/404.md would be written to 404.html"},
		{"index", "# Summary\n\n- [A](a.md)\n- [Home](index.md)\n", "book/SUMMARY.md:4: chapter book/index.md would be written to index.html"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := writeRepo(t, map[string]string{
				"book/SUMMARY.md": tc.summary,
				"book/a.md":       chapter, "book/print.md": chapter, "book/404.md": chapter, "book/index.md": chapter,
			})
			opt := Options{Root: root}
			opt.Verify.CacheDir = t.TempDir()
			res, err := Test(t.Context(), opt)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("Test err = %v, want %q...", err, tc.want)
			}
			if res.Report != nil {
				t.Errorf("verification ran (%d checks) before the book was refused", res.Report.Ran)
			}
		})
	}
	// index.md as the first chapter is the front page, as in mdBook.
	root := writeRepo(t, map[string]string{
		"book/SUMMARY.md": "# Summary\n\n- [Home](index.md)\n",
		"book/index.md":   "# Home\n\nText.\n",
	})
	opt := Options{Root: root, Out: filepath.Join(t.TempDir(), "site")}
	opt.Verify.CacheDir = t.TempDir()
	if _, err := Build(t.Context(), opt); err != nil {
		t.Errorf("index.md first: %v", err)
	}
}

// TestUnicodeAnchorsResolve builds a book whose links name headings written
// in Greek and Japanese, as written and percent-encoded: the ids follow
// mdBook (Unicode kept and lowercased), so the links resolve; a fragment
// in another case than the id's does not (browsers compare ids exactly).
func TestUnicodeAnchorsResolve(t *testing.T) {
	files := map[string]string{
		"book/SUMMARY.md": "# Summary\n\n- [A](a.md)\n- [B](b.md)\n",
		"book/a.md":       "# A\n\n[g](b.md#ελληνικά) [j](b.md#日本語) [e](b.md#%E6%97%A5%E6%9C%AC%E8%AA%9E) [s](#Épocas-y-fencing)\n\n## Épocas y fencing\n",
		"book/b.md":       "# B\n\n## Ελληνικά\n\n## 日本語\n",
	}
	root := writeRepo(t, files)
	opt := Options{Root: root, Out: filepath.Join(t.TempDir(), "site")}
	opt.Verify.CacheDir = t.TempDir()
	if _, err := Build(t.Context(), opt); err == nil || !strings.Contains(err.Error(), "book/a.md:3: link to book/a.md#Épocas-y-fencing") {
		t.Fatalf("Build err = %v, want the capital É fragment refused at book/a.md:3", err)
	}
	files["book/a.md"] = strings.Replace(files["book/a.md"], "#Épocas", "#épocas", 1)
	root = writeRepo(t, files)
	opt.Root = root
	res, err := Build(t.Context(), opt)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	page, err := os.ReadFile(filepath.Join(res.Out, "b.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{`id="ελληνικά"`, `id="日本語"`} {
		if !strings.Contains(string(page), id) {
			t.Errorf("b.html lacks %s", id)
		}
	}
}

// TestUnwritableOutputRefusedBeforeVerify checks that an output folder
// that cannot be created (here: a regular file stands where its parent
// should be; a read-only parent when not running as root) is reported as a
// *site.OutputError naming the folder, before any check runs: the
// chapter's transcript would fail if it were run.
func TestUnwritableOutputRefusedBeforeVerify(t *testing.T) {
	root := writeRepo(t, map[string]string{
		"book/SUMMARY.md": "# Summary\n\n- [A](a.md)\n",
		"book/a.md":       "# A\n\n```console\n$ go run ./examples/missing\nnever printed\n```\n",
	})
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	outs := []string{filepath.Join(file, "site")}
	if os.Geteuid() != 0 {
		ro := filepath.Join(dir, "ro")
		if err := os.Mkdir(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, filepath.Join(ro, "site"))
	} else {
		t.Log("running as root: the read-only parent case is not tried (root may write anywhere)")
	}
	for _, out := range outs {
		opt := Options{Root: root, Out: out}
		opt.Verify.CacheDir = t.TempDir()
		res, err := Build(t.Context(), opt)
		var oe *site.OutputError
		if !errors.As(err, &oe) || oe.Out != out || !strings.HasPrefix(err.Error(), "cannot write the site to "+out+": ") {
			t.Errorf("-o %s: err = %v, want a *site.OutputError naming the folder", out, err)
		}
		if res.Report != nil {
			t.Errorf("-o %s: verification ran before the output folder was refused", out)
		}
	}
}

// TestOutputInsideSourcesRefused checks that -o book/out (or a folder
// under examples/ or theme/) is refused before any check runs: the site
// would be copied into the next build as one of the book's files.
func TestOutputInsideSourcesRefused(t *testing.T) {
	root := writeRepo(t, map[string]string{
		"book/SUMMARY.md": "# Summary\n\n- [A](a.md)\n",
		"book/a.md":       "# A\n\n```console\n$ go run ./examples/missing\nnever printed\n```\n",
	})
	for _, out := range []string{"book/out", "examples/site", "theme/x/site"} {
		opt := Options{Root: root, Out: out}
		opt.Verify.CacheDir = t.TempDir()
		res, err := Build(t.Context(), opt)
		if err == nil || !strings.Contains(err.Error(), "is inside the sources") {
			t.Errorf("-o %s: err = %v, want it refused as inside the sources", out, err)
		}
		if res.Report != nil {
			t.Errorf("-o %s: verification ran before the output folder was refused", out)
		}
		if _, err := os.Stat(filepath.Join(root, out)); !os.IsNotExist(err) {
			t.Errorf("-o %s: folder created", out)
		}
	}
}
