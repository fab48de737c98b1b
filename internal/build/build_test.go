package build

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/render"
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
	writeFiles(t, root, files)
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

// TestMdBookBook builds a book laid out as mdBook's user guide is, in its
// original layout (book.toml at the root, chapters in src/, no go.mod,
// mdBook's output folder book/ beside them) and once its files are moved
// into book/ beside go.mod: an mdBook book.toml (keys bookgen does not read
// come back as warnings, not errors), README chapters, a 404.md, a
// redirect and includes of every kind. Both give the same site, and
// mdBook's output folder is left alone.
func TestMdBookBook(t *testing.T) {
	chapters := map[string]string{
		"SUMMARY.md":       "# Summary\n\n[Introduction](README.md)\n\n- [Guide](guide/README.md)\n    - [Reading\n      books](guide/reading.md)\n",
		"README.md":        "# Introduction\n\nSee [reading](guide/reading.html#reading-books) and the [guide](guide/README.md).\n\n> [!TIP]\n> Use search.\n",
		"guide/README.md":  "# Guide\n\n```rust\n{{#rustdoc_include ../ex.rs:body}}\n```\n",
		"guide/reading.md": "{{#title Reading}}\n# Reading books {#reading-books .x}\n\n{{#include ../ex.rs::}}\n",
		"ex.rs":            "fn main() {\n    // ANCHOR: body\n    println!(\"hi\");\n    // ANCHOR_END: body\n}\n",
		"404.md":           "# Lost\n\n[Home](README.md)\n",
	}
	toml := func(src string) string {
		return "[book]\ntitle = \"X\"\n" + src + "\n[output.html]\nsite-url = \"/x/\"\nmathjax-support = true\n\n[output.html.redirect]\n\"/old.html\" = \"guide/index.html\"\n"
	}
	for _, layout := range []struct {
		name, dir, conf, src string
		goMod                bool
	}{
		{"mdBook's", "src", "book.toml", "src = \"src\"\n", false},
		{"mdBook's, src unset", "src", "book.toml", "", false},
		{"moved into book/", "book", "book/book.toml", "", true},
	} {
		t.Run(layout.name, func(t *testing.T) {
			root := t.TempDir()
			files := map[string]string{layout.conf: toml(layout.src)}
			for name, data := range chapters {
				files[layout.dir+"/"+name] = data
			}
			if layout.goMod {
				files["go.mod"] = "module example.com/x\n\ngo 1.26\n"
			} else {
				files["book/index.html"] = "mdBook's output"
			}
			writeFiles(t, root, files)
			if got, err := FindRoot(filepath.Join(root, layout.dir, "guide")); err != nil || got != root {
				t.Errorf("FindRoot = %q, %v; want %s", got, err, root)
			}
			opt := Options{Root: root}
			opt.Verify.CacheDir = t.TempDir()
			opt.Verify.GoCmd = filepath.Join(t.TempDir(), "no-go") // no go process may start
			res, err := Build(t.Context(), opt)
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			if res.Out != filepath.Join(root, "site") {
				t.Errorf("site written to %s", res.Out)
			}
			var warnings []string
			for _, w := range res.Warnings {
				warnings = append(warnings, w.Error())
			}
			all := strings.Join(warnings, "\n")
			line := 7
			if layout.src == "" {
				line = 6
			}
			if want := fmt.Sprintf("%s:%d: key output.html.mathjax-support is not used by bookgen", layout.conf, line); !strings.Contains(all, want) {
				t.Errorf("warnings lack %q:\n%s", want, all)
			}
			if strings.Contains(all, "src =") {
				t.Errorf("src warned about:\n%s", all)
			}
			for file, want := range map[string]string{
				"index.html":         `<blockquote class="blockquote-tag blockquote-tag-tip">`,
				"guide/index.html":   `println`,
				"guide/reading.html": `<title>Reading · X</title>`,
				"404.html":           `<a href="/x/index.html">Home</a>`,
				"old.html":           `url=guide/index.html`,
				"_redirects":         "/x/old.html /x/guide/index.html 301",
			} {
				data, err := os.ReadFile(filepath.Join(res.Out, filepath.FromSlash(file)))
				if err != nil || !strings.Contains(string(data), want) {
					t.Errorf("%s lacks %q (%v)", file, want, err)
				}
			}
			if data, _ := os.ReadFile(filepath.Join(res.Out, "guide", "index.html")); strings.Contains(string(data), "fn main") {
				t.Errorf("guide/index.html shows the rustdoc_include's hidden lines")
			}
			for _, gone := range []string{"README.html", "guide/README.html", "sitemap.xml", "book.toml", "src"} {
				if _, err := os.Stat(filepath.Join(res.Out, filepath.FromSlash(gone))); err == nil {
					t.Errorf("%s was written", gone)
				}
			}
			if !layout.goMod {
				entries, _ := os.ReadDir(filepath.Join(root, "book"))
				data, _ := os.ReadFile(filepath.Join(root, "book", "index.html"))
				if len(entries) != 1 || string(data) != "mdBook's output" {
					t.Errorf("mdBook's output folder book/ was changed: %d files, index.html %q", len(entries), data)
				}
			}
		})
	}
}

// writeFiles writes files (slash paths relative to root) under root.
func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFindRootLayouts checks which folder FindRoot takes, walking up from
// a start folder: bookgen's layout (go.mod and book/SUMMARY.md or
// book/book.toml), mdBook's (book.toml, go.mod optional), not mdBook's
// output folder book/ (no SUMMARY.md, no book.toml) and not the book/
// folder of bookgen's layout for an mdBook book of its own.
func TestFindRootLayouts(t *testing.T) {
	for _, tt := range []struct {
		name  string
		files []string
		start string // relative to the temporary folder
		root  string // "" when FindRoot must fail with ErrNoRoot
	}{
		{"bookgen's", []string{"r/go.mod", "r/book/SUMMARY.md"}, "r/book/sub", "r"},
		{"bookgen's from book/ holding book.toml", []string{"r/go.mod", "r/book/book.toml", "r/book/SUMMARY.md"}, "r/book", "r"},
		{"bookgen's with src", []string{"r/go.mod", "r/book/book.toml", "r/book/src/SUMMARY.md"}, "r/book/src", "r"},
		{"mdBook's without go.mod", []string{"r/book.toml", "r/src/SUMMARY.md"}, "r/src", "r"},
		{"mdBook's with go.mod", []string{"r/go.mod", "r/book.toml", "r/src/SUMMARY.md"}, "r/src", "r"},
		{"mdBook's from its output folder", []string{"r/book.toml", "r/src/SUMMARY.md", "r/book/index.html", "r/book/css/x.css"}, "r/book/css", "r"},
		{"mdBook's output beside go.mod is no bookgen book", []string{"r/go.mod", "r/book.toml", "r/src/SUMMARY.md", "r/book/index.html"}, "r/book", "r"},
		// mdBook builds a book without book.toml with its defaults
		// (MDBook::load takes Config::default()).
		{"mdBook's without book.toml", []string{"r/src/SUMMARY.md", "r/src/a.md"}, "r/src", "r"},
		{"mdBook's without book.toml beside go.mod", []string{"r/go.mod", "r/src/SUMMARY.md"}, "r", "r"},
		{"book/SUMMARY.md without go.mod", []string{"r/book/SUMMARY.md"}, "r/book", ""},
		{"nothing", []string{"r/x/y.md"}, "r/x", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			files := map[string]string{}
			for _, f := range tt.files {
				files[f] = "x\n"
			}
			writeFiles(t, tmp, files)
			if err := os.MkdirAll(filepath.Join(tmp, filepath.FromSlash(tt.start)), 0o755); err != nil {
				t.Fatal(err)
			}
			got, err := FindRoot(filepath.Join(tmp, filepath.FromSlash(tt.start)))
			if tt.root == "" {
				if !errors.Is(err, ErrNoRoot) {
					t.Errorf("FindRoot = %q, %v; want ErrNoRoot", got, err)
				}
				return
			}
			if want := filepath.Join(tmp, tt.root); err != nil || got != want {
				t.Errorf("FindRoot = %q, %v; want %s", got, err, want)
			}
		})
	}
}

// TestMdBookTranscriptWithoutGoMod checks that an mdBook book without
// go.mod whose chapter runs a Go program fails at the transcript's line,
// saying go.mod is missing, without starting a go process, and leaves the
// last good site.
func TestMdBookTranscriptWithoutGoMod(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"book.toml":      "[book]\ntitle = \"X\"\n",
		"src/SUMMARY.md": "- [A](a.md)\n- [B](b/b.md)\n",
		"src/a.md":       "# A\n\n```go\nx := 1\n```\n",
		"src/b/b.md":     "# B\n\n```go\npackage main\n\nfunc main() {}\n```\n",
	})
	opt := Options{Root: root}
	opt.Verify.CacheDir = t.TempDir()
	opt.Verify.GoCmd = filepath.Join(t.TempDir(), "no-go")
	if _, err := Build(t.Context(), opt); err == nil || !strings.Contains(err.Error(), "src/b/b.md:3: a go block that is a whole file") || !strings.Contains(err.Error(), "no go.mod in") {
		t.Fatalf("Build: %v; want the whole-file go block refused for want of go.mod", err)
	}
	// A fragment parses in process: without the whole file, it builds.
	writeFiles(t, root, map[string]string{"src/b/b.md": "# B\n"})
	if _, err := Build(t.Context(), opt); err != nil {
		t.Fatalf("Build: %v", err)
	}
	// A console block is a transcript only in a book with a go.mod: without
	// one it is shown as it is...
	writeFiles(t, root, map[string]string{"src/b/b.md": "# B\n\nRun it:\n\n```console\n$ go run ./examples/hello\nhello\n```\n"})
	if _, err := Build(t.Context(), opt); err != nil {
		t.Fatalf("Build: %v; want the console block of a book without go.mod shown as it is", err)
	}
	// ...unless the author opts it in, or the book asks for strictness.
	for _, files := range []map[string]string{
		{"src/b/b.md": "# B\n\nRun it:\n\n```console transcript\n$ go run ./examples/hello\nhello\n```\n"},
		{"book.toml": "[book]\ntitle = \"X\"\n\n[bookgen]\nstrict-console = true\n", "src/b/b.md": "# B\n\nRun it:\n\n```console\n$ go run ./examples/hello\nhello\n```\n"},
	} {
		writeFiles(t, root, files)
		_, err := Build(t.Context(), opt)
		if err == nil || !strings.HasPrefix(err.Error(), "src/b/b.md:6: $ go run ./examples/hello: a transcript's commands run in a Go module, but there is no go.mod in "+root+" or above") {
			t.Fatalf("Build: %v; want the transcript refused at src/b/b.md:6 for want of go.mod", err)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "site", "b", "b.html")); err != nil {
		t.Errorf("the last good site is gone: %v", err)
	}
}

// TestIncludedFrom: a problem at a line of an included file (here a broken
// link in an included Markdown file, and a warning in an included listing)
// names, in its detail, every chapter line that includes that line, so
// that an author with hundreds of listings finds the chapter. mdBook
// reports such problems against the chapter; bookgen gives both.
func TestIncludedFrom(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"book.toml":      "[book]\ntitle = \"X\"\n\n[bookgen]\nbroken-links = \"error\"\n",
		"src/SUMMARY.md": "- [A](a.md)\n- [B](b.md)\n",
		"src/a.md":       "# A\n\n{{#include part.md}}\n",
		"src/b.md":       "# B\n\nText.\n\n{{#include part.md}}\n",
		"src/part.md":    "Part.\n[gone](gone.md)\n",
	})
	_, err := Build(context.Background(), Options{Root: root, Out: filepath.Join(t.TempDir(), "site")})
	errs := diag.All(err)
	if len(errs) == 0 {
		t.Fatalf("built, want the broken link: %v", err)
	}
	for _, e := range errs {
		if e.File != "src/part.md" || e.Line != 2 {
			t.Errorf("error at %s:%d, want src/part.md:2: %v", e.File, e.Line, e)
			continue
		}
		if want := "included from src/a.md:3, src/b.md:5"; !strings.HasPrefix(e.Detail, want) {
			t.Errorf("detail %q, want it to start with %q", e.Detail, want)
		}
	}
}

// TestNotFoundPageIsVerified checks that mdBook's src/404.md goes through
// verification with the chapters: a Go fragment on it is checked and
// shown (it was refused as "shown but never checked" when the page was
// rendered on its own), and a transcript on it fails at its line in
// src/404.md, without starting a go process.
func TestNotFoundPageIsVerified(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"book.toml":      "[book]\ntitle = \"X\"\n",
		"src/SUMMARY.md": "- [A](a.md)\n",
		"src/a.md":       "# A\n",
		"src/404.md":     "# Lost\n\n```go\nx := 1\n```\n",
	})
	opt := Options{Root: root}
	opt.Verify.CacheDir = t.TempDir()
	opt.Verify.GoCmd = filepath.Join(t.TempDir(), "no-go")
	res, err := Build(t.Context(), opt)
	if err != nil {
		t.Fatalf("Build: %v; want the 404 page's fragment checked and shown", err)
	}
	if data, err := os.ReadFile(filepath.Join(res.Out, "404.html")); err != nil || !strings.Contains(string(data), "x") || !strings.Contains(string(data), "code-block") {
		t.Errorf("404.html lacks the code block (%v)", err)
	}
	writeFiles(t, root, map[string]string{"src/404.md": "# Lost\n\n```go\nx := \n```\n"})
	if _, err := Build(t.Context(), opt); err == nil || !strings.Contains(err.Error(), "src/404.md:") {
		t.Errorf("Build: %v; want the broken fragment reported in src/404.md", err)
	}
	writeFiles(t, root, map[string]string{"src/404.md": "# Lost\n\n```console transcript\n$ go run ./examples/hello\nhello\n```\n"})
	if _, err := Test(t.Context(), opt); err == nil || !strings.HasPrefix(err.Error(), "src/404.md:4: $ go run ./examples/hello") {
		t.Errorf("Test: %v; want the 404 page's transcript checked at src/404.md:4", err)
	}
}

// TestKeepWarm checks that KeepWarm gives a build every cache a later
// build can reuse and keeps one already set.
func TestKeepWarm(t *testing.T) {
	mine := &render.Cache{}
	opt := Options{Renders: mine}
	opt.KeepWarm()
	if opt.Loads == nil || opt.Expands == nil || opt.Verify.Fragments == nil || opt.Incremental == nil {
		t.Errorf("KeepWarm left a cache unset: %+v", opt)
	}
	if opt.Renders != mine {
		t.Error("KeepWarm replaced a cache already set")
	}
}

// TestOneShotBuildSpoolsBodies builds one book as a one-shot build (whose
// rendered bodies go to a render.Spool and whose chapters' text is let go
// once rendered) and with a render.Cache (pages kept in memory, as serve
// keeps them): every file of the two sites must be the same, the spool file
// must be gone after the build, and the one-shot build must have kept no
// chapter text.
func TestOneShotBuildSpoolsBodies(t *testing.T) {
	files := map[string]string{
		"book/SUMMARY.md": "# Summary\n\n- [A](a.md)\n- [B](b.md)\n",
		"book/a.md":       "# A\n\nSee [the epochs](b.md#epochs) and <span id=\"raw\">a raw id</span>.\n\n```go\nfunc f() int { return 7 }\n```\n",
		"book/b.md":       "# B\n\n## Epochs\n\nBack to [A](a.md#raw).\n\n" + strings.Repeat("A paragraph about fencing tokens. ", 400) + "\n",
	}
	root := writeRepo(t, files)
	cache := t.TempDir()
	build := func(warm bool) (*Result, string) {
		opt := Options{Root: root, Out: filepath.Join(t.TempDir(), "site")}
		opt.Verify.CacheDir = cache
		if warm {
			// Pages kept in memory (a render.Cache, as serve has), but a
			// site written whole, as a one-shot build writes it.
			opt.Renders = &render.Cache{}
		}
		res, err := Build(t.Context(), opt)
		if err != nil {
			t.Fatalf("Build (warm %v): %v", warm, err)
		}
		return res, res.Out
	}
	res, oneShot := build(false)
	for _, ch := range res.Book.Chapters {
		if ch.Source != nil {
			t.Errorf("the one-shot build kept %s's text", ch.Path)
		}
	}
	_, warm := build(true)
	n := 0
	err := filepath.WalkDir(warm, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(warm, p)
		want, _ := os.ReadFile(p)
		got, err := os.ReadFile(filepath.Join(oneShot, rel))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s differs between the one-shot build and the warm one (%v): %s", rel, err, firstDiff(got, want))
		}
		n++
		return nil
	})
	if err != nil || n < 5 {
		t.Fatalf("compared %d files: %v", n, err)
	}
	left, _ := filepath.Glob(filepath.Join(cache, "bookgen-bodies-*"))
	if len(left) > 0 {
		t.Errorf("spool files left after the build: %v", left)
	}
}

// firstDiff returns the first line where got and want differ.
func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d is %q, want %q", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(g), len(w))
}
