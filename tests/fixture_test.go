package tests

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/ownership-book/ownership/internal/build"
	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/verify"
)

// TestGoodFixture builds a small complete book twice and checks the site,
// the page details and that the second build is answered from the cache.
func TestGoodFixture(t *testing.T) {
	t.Parallel()
	root := copyFixture(t, "good")
	out := filepath.Join(t.TempDir(), "site")
	cache := t.TempDir()
	res, err := buildBook(t, root, out, cache)
	if err != nil {
		t.Fatalf("build failed:\n%v", err)
	}
	checkSite(t, res.Book, out)
	if res.Pages != 3 {
		t.Errorf("Pages = %d, want 3", res.Pages)
	}
	kinds := map[string]int{}
	for _, c := range res.Report.Checks {
		kinds[c.Kind]++
		if c.Cached {
			t.Errorf("first build: check %s %s came from an empty cache", c.Kind, c.Subject)
		}
	}
	if kinds["transcript"] != 1 {
		t.Errorf("checks by kind %v, want one transcript", kinds)
	}
	if res.Report.Ignored != 1 {
		t.Errorf("Ignored = %d, want 1", res.Report.Ignored)
	}

	greet := parseFile(t, filepath.Join(out, "greet.html"))
	body := text(greet.doc)
	for _, want := range []string{
		"func Greet(e int) string", // the include, in place
		"hello, epoch 3",           // the transcript's output
		"not compiled by bookgen",  // the go ignore note
	} {
		if !strings.Contains(body, want) {
			t.Errorf("greet.html lacks %q", want)
		}
	}
	for _, bad := range []string{"ANCHOR", "{{#include"} {
		if strings.Contains(body, bad) {
			t.Errorf("greet.html shows %q", bad)
		}
	}
	drafts := find(parseFile(t, filepath.Join(out, "index.html")).doc, func(n *html.Node) bool { return hasClass(n, "draft") })
	if len(drafts) != 1 || strings.TrimSpace(text(drafts[0])) != "2. Not written yet" {
		t.Errorf("draft entries: %d", len(drafts))
	}
	repo := find(parseFile(t, filepath.Join(out, "intro.html")).doc, func(n *html.Node) bool {
		return n.Data == "a" && attr(n, "href") == "https://github.com/example/good/blob/main/examples/greet/greet.go"
	})
	if len(repo) != 1 {
		t.Error("intro.html: the link to the example does not point to the repository")
	}

	// Claims: each link to a passing check points to the function's
	// lines, has its id and a badge; the table on the nested page lists
	// both, linking back to each.
	links := find(greet.doc, func(n *html.Node) bool { return n.Data == "a" && hasClass(n, "check") })
	wantLinks := map[string]string{
		"check-TestGreet":    "https://github.com/example/good/blob/main/examples/greet/greet_test.go#L8-L12",
		"check-ExampleGreet": "https://github.com/example/good/blob/main/examples/greet/greet_test.go#L14-L17",
	}
	for _, l := range links {
		if want := wantLinks[attr(l, "id")]; want == "" || attr(l, "href") != want {
			t.Errorf("claim link id=%q href=%q, want one of %v", attr(l, "id"), attr(l, "href"), wantLinks)
		}
		if b := find(l, func(n *html.Node) bool { return hasClass(n, "check-badge") }); len(b) != 1 {
			t.Errorf("claim link %s has %d badges", attr(l, "id"), len(b))
		}
		if !strings.Contains(text(l), "passed in this build") {
			t.Errorf("claim link %s: no accessible text saying it passed: %q", attr(l, "id"), text(l))
		}
	}
	if len(links) != 2 {
		t.Errorf("greet.html has %d claim links, want 2", len(links))
	}
	// Six kinds: vet, test, transcript, compile, parse, and wasm (the
	// transcript's program built for the browser).
	if kinds["test"] != 2 || kinds["wasm"] != 1 || len(kinds) != 6 {
		t.Errorf("checks by kind %v, want a test run per package, which the claims share, one wasm build, and no other run", kinds)
	}
	if n := len(res.Report.Claims); n != 2 || !res.Report.Claims[0].Passed || res.Report.Claims[1].Text != "epoch 4 is greeted" {
		t.Errorf("Report.Claims = %+v", res.Report.Claims)
	}
	deeper := parseFile(t, filepath.Join(out, "nested", "deeper.html"))
	rows := find(deeper.doc, func(n *html.Node) bool { return n.Data == "tr" })
	if len(rows) != 3 {
		t.Fatalf("deeper.html: table of checks has %d rows, want a header and 2", len(rows))
	}
	row := text(rows[1])
	for _, want := range []string{"Every greeting names its epoch (TestGreet", "Greeting", "examples/greet"} {
		if !strings.Contains(row, want) {
			t.Errorf("table row %q lacks %q", row, want)
		}
	}
	back := find(rows[1], func(n *html.Node) bool { return n.Data == "a" && attr(n, "href") == "../greet.html#check-TestGreet" })
	if len(back) != 1 {
		t.Errorf("table row does not link to ../greet.html#check-TestGreet")
	}
	if strings.Contains(text(deeper.doc), "{{#checks}}") {
		t.Error("deeper.html shows the directive")
	}

	// Nothing changed: no go process runs.
	res2, err := buildBook(t, root, out, cache)
	if err != nil {
		t.Fatal(err)
	}
	if r := ran(res2.Report); len(r) != 0 || res2.Report.Cached == 0 {
		t.Errorf("unchanged rebuild: %d cached, ran %v; want no go process", res2.Report.Cached, r)
	}
	// A prose edit: still no go process, and the page shows the edit.
	intro := filepath.Join(root, "book", "intro.md")
	src, err := os.ReadFile(intro)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(intro, append(src, "\nA new sentence about epochs.\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	res3, err := buildBook(t, root, out, cache)
	if err != nil {
		t.Fatal(err)
	}
	if r := ran(res3.Report); len(r) != 0 {
		t.Errorf("prose-only edit ran %v, want no go process", r)
	}
	if !strings.Contains(text(parseFile(t, filepath.Join(out, "intro.html")).doc), "A new sentence about epochs.") {
		t.Error("intro.html does not show the edit")
	}
}

// badFixtures are books that must not build. file and line are where the
// error must point; msg is a substring of its message.
var badFixtures = []struct {
	name   string
	file   string
	line   int
	msg    string
	mutate func(t *testing.T, root string)
}{
	{name: "missing-chapter", file: "book/SUMMARY.md", line: 4, msg: "book/missing.md does not exist"},
	{name: "bad-summary", file: "book/SUMMARY.md", line: 4, msg: "not a link"},
	{name: "include-missing", file: "book/ch.md", line: 4, msg: "examples/nope.go does not exist"},
	{name: "unknown-anchor", file: "book/ch.md", line: 4, msg: `anchor "nope" not found`},
	{name: "include-outside", file: "book/ch.md", line: 4, msg: "leaves the repository"},
	{name: "wrong-transcript", file: "book/ch.md", line: 5, msg: "differs from the transcript"},
	// The same wrong transcript nested where verify and render once
	// disagreed on what a code block is (verify's parser lacked the
	// definition lists, footnotes and CommonMark's <meta> rule render's
	// had): each must still be run and refused at its line.
	{name: "wrong-transcript", file: "book/ch.md", line: 6, msg: "differs from the transcript", mutate: writeChapter(
		"# Chapter\n\nEpoch\n: ```console\n  $ go run ./examples/epoch\n  epoch 3\n  ```\n")},
	{name: "wrong-transcript", file: "book/ch.md", line: 6, msg: "differs from the transcript", mutate: writeChapter(
		"# Chapter\n\n<meta itemprop=\"epoch\" content=\"3\"> The run:\n```console\n$ go run ./examples/epoch\nepoch 3\n```\n")},
	{name: "wrong-transcript", file: "book/ch.md", line: 9, msg: "differs from the transcript", mutate: writeChapter(
		"# Chapter\n\nThe epoch.[^run]\n\n[^run]: The run:\n\n    ```console\n    $ go run ./examples/epoch\n    epoch 3\n    ```\n")},
	{name: "bad-figure", file: "book/ch.md", line: 9, msg: "```d2 figure: connection missing destination"},
	{name: "wrong-figure", file: "book/ch.md", line: 6, msg: "differs from the figure"},
	{name: "no-compile", file: "examples/broken/broken.go", line: 6, msg: ""},
	{name: "test-fails", file: "examples/calc/calc_test.go", line: 7, msg: ""},
	{name: "hang", file: "book/ch.md", line: 4, msg: ""},
	{name: "bad-snippet", file: "book/ch.md", line: 7, msg: ""},
	{name: "claim-missing", file: "book/ch.md", line: 4, msg: "examples/calc/calc_test.go has no function TestNextNeverFalls"},
	{name: "claim-missing", file: "book/ch.md", line: 3, msg: "examples/calc/nope_test.go: the file does not exist", mutate: writeChapter(
		"# Chapter\n\nThe epoch after 3 is 4 ([TestNext](../examples/calc/nope_test.go#TestNext)).\n")},
	{name: "claim-missing", file: "book/ch.md", line: 3, msg: "is not a check", mutate: writeChapter(
		"# Chapter\n\nA helper ([helper](../examples/calc/calc_test.go#helper)).\n")},
	{name: "claim-missing", file: "book/ch.md", line: 3, msg: "has no // Output: comment", mutate: writeChapter(
		"# Chapter\n\nAn example ([ExampleNext](../examples/calc/calc_test.go#ExampleNext)).\n")},
	{name: "claim-missing", file: "book/ch.md", line: 3, msg: "claim TestSkipped was skipped", mutate: writeChapter(
		"# Chapter\n\nA skipped test ([TestSkipped](../examples/calc/calc_test.go#TestSkipped)).\n")},
	{name: "claim-ran-nothing", file: "book/ch.md", line: 3, msg: "claim TestAllSkipped checked nothing in go test ./examples/calc: every one of its subtests was skipped"},
	{name: "claim-ran-nothing", file: "book/ch.md", line: 4, msg: "claim FuzzNoSeeds ran no input in go test ./examples/calc: its seed corpus is empty"},
	{name: "claim-ran-nothing", file: "book/ch.md", line: 5, msg: "ExampleNext in examples/calc/calc_test.go has an empty // Output: comment"},
	{name: "claim-fails", file: "book/ch.md", line: 4, msg: "claim TestNext failed in go test ./examples/calc (alone: go test -run '^TestNext$' ./examples/calc)"},
	{name: "claim-fails", file: "book/ch.md", line: 4, msg: "Next(3) = 5, want 4"},
	{name: "bad-utf8", file: "book/ch.md", line: 3, msg: "invalid UTF-8", mutate: func(t *testing.T, root string) {
		bad := []byte("# Chapter\n\nAn epoch \xff\xfe is not text.\n")
		if err := os.WriteFile(filepath.Join(root, "book", "ch.md"), bad, 0o644); err != nil {
			t.Fatal(err)
		}
	}},
}

// TestFixtureWarnings builds books that mdBook builds despite a typo:
// bookgen builds them too, doing what mdBook does, and warns at the line
// (an anchor never closed is included to the end of the file, as mdBook's
// take_anchored_lines does).
func TestFixtureWarnings(t *testing.T) {
	for _, tt := range []struct {
		name, file string
		line       int
		msg        string
	}{
		{"unterminated-anchor", "book/ch.md", 4, "has no ANCHOR_END: a; included to the end of the file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := copyFixture(t, tt.name)
			res, err := buildBook(t, root, filepath.Join(t.TempDir(), "site"), t.TempDir())
			if err != nil {
				t.Fatalf("the build failed: %v", err)
			}
			found := false
			for _, w := range res.Warnings {
				found = found || (w.File == tt.file && w.Line == tt.line && strings.Contains(w.Msg, tt.msg))
			}
			if !found {
				t.Errorf("no warning at %s:%d containing %q; got %v", tt.file, tt.line, tt.msg, res.Warnings)
			}
		})
	}
}

// writeChapter replaces a fixture's book/ch.md.
func writeChapter(src string) func(t *testing.T, root string) {
	return func(t *testing.T, root string) {
		if err := os.WriteFile(filepath.Join(root, "book", "ch.md"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBadFixtures checks that each broken book fails with the right
// file:line and leaves a pre-existing output folder as it was.
func TestBadFixtures(t *testing.T) {
	for _, tt := range badFixtures {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := copyFixture(t, tt.name)
			if tt.mutate != nil {
				tt.mutate(t, root)
			}
			parent := t.TempDir()
			out := filepath.Join(parent, "site")
			if err := os.MkdirAll(out, 0o755); err != nil {
				t.Fatal(err)
			}
			sentinel := filepath.Join(out, "sentinel.txt")
			if err := os.WriteFile(sentinel, []byte("previous site"), 0o644); err != nil {
				t.Fatal(err)
			}

			_, err := buildBook(t, root, out, t.TempDir())
			if err == nil {
				t.Fatal("the build succeeded")
			}
			errs := diag.All(err)
			found := false
			for _, e := range errs {
				if e.File == tt.file && e.Line == tt.line && strings.Contains(e.Msg+"\n"+e.Detail, tt.msg) {
					found = true
				}
			}
			if !found {
				t.Errorf("no error at %s:%d containing %q; got:\n%v", tt.file, tt.line, tt.msg, err)
			}
			if data, err := os.ReadFile(sentinel); err != nil || string(data) != "previous site" {
				t.Errorf("the previous output changed: %q, %v", data, err)
			}
			entries, _ := os.ReadDir(parent)
			if len(entries) != 1 {
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				t.Errorf("leftovers beside the output folder: %v", names)
			}
		})
	}
}

// ran lists the checks of rep that started a go process: not answered by
// the cache, and not a fragment parse (done in-process by go/parser).
func ran(rep *verify.Report) []string {
	var out []string
	for _, c := range rep.Checks {
		if !c.Cached && c.Kind != "parse" {
			out = append(out, c.Kind+" "+c.Subject)
		}
	}
	return out
}

// TestBadFigureFailsTest checks that `bookgen test`, which writes no site,
// refuses a figure that does not draw at the same file:line as build.
func TestBadFigureFailsTest(t *testing.T) {
	t.Parallel()
	root := copyFixture(t, "bad-figure")
	opt := build.Options{Root: root}
	opt.Verify.CacheDir = t.TempDir()
	_, err := build.Test(context.Background(), opt)
	errs := diag.All(err)
	if len(errs) != 1 || errs[0].File != "book/ch.md" || errs[0].Line != 9 || !strings.Contains(errs[0].Msg, "connection missing destination") {
		t.Errorf("bookgen test: %v, want book/ch.md:9: ```d2 figure: connection missing destination", err)
	}
}
