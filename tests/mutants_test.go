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
)

// TestMutantKilled builds the mutants fixture, whose claim names a mutant
// its check kills: the claim's badge says so, the mutant's link goes to its
// diff after the chapter's text, the table of checks names it, the second
// build and a prose edit run no go process (the mutant run is cached).
func TestMutantKilled(t *testing.T) {
	t.Parallel()
	root := copyFixture(t, "mutants")
	out := filepath.Join(t.TempDir(), "site")
	cache := t.TempDir()
	res, err := buildBook(t, root, out, cache)
	if err != nil {
		t.Fatalf("build failed:\n%v", err)
	}
	kinds := map[string]int{}
	for _, c := range res.Report.Checks {
		kinds[c.Kind]++
	}
	if kinds["mutant"] != 1 {
		t.Errorf("checks by kind %v, want one mutant run", kinds)
	}
	if c := res.Report.Claims[0]; len(c.Mutants) != 1 || !c.Mutants[0].Killed || c.Mutants[0].Replaces != "examples/calc/calc.go" {
		t.Errorf("claim %s: mutants %+v, want off-by-two killed, replacing examples/calc/calc.go", c.Func, c.Mutants)
	}
	pg := parseFile(t, filepath.Join(out, "ch.html"))
	claim := find(pg.doc, func(n *html.Node) bool { return n.Data == "a" && attr(n, "id") == "check-TestNext" })
	if len(claim) != 1 || !strings.Contains(text(claim[0]), "✓ kills 1") || !strings.Contains(text(claim[0]), "fails with mutant off-by-two") {
		t.Errorf("claim link: %d found; its text should say it passed and kills off-by-two", len(claim))
	}
	mut := find(pg.doc, func(n *html.Node) bool { return n.Data == "a" && hasClass(n, "mutant") })
	if len(mut) != 1 || attr(mut[0], "href") != "#mutant-calc-off-by-two" || !strings.Contains(text(mut[0]), "killed") {
		t.Fatalf("mutant links: %d, want one to #mutant-calc-off-by-two marked killed", len(mut))
	}
	fig := find(pg.doc, func(n *html.Node) bool { return n.Data == "figure" && attr(n, "id") == "mutant-calc-off-by-two" })
	if len(fig) != 1 {
		t.Fatal("ch.html has no figure #mutant-calc-off-by-two")
	}
	diff := text(fig[0])
	for _, want := range []string{"-\treturn e + 1", "+\treturn e + 2", "--- examples/calc/calc.go", "+++ examples/calc/testdata/mutants/off-by-two/calc.go", "killed by TestNext"} {
		if !strings.Contains(diff, want) {
			t.Errorf("the diff lacks %q:\n%s", want, diff)
		}
	}
	rows := find(pg.doc, func(n *html.Node) bool { return n.Data == "tr" })
	if len(rows) != 3 || !strings.Contains(text(rows[0]), "Mutants killed") {
		t.Fatalf("table of checks: %d rows, want a header with \"Mutants killed\" and 2", len(rows))
	}
	if l := find(rows[1], func(n *html.Node) bool { return n.Data == "a" && attr(n, "href") == "ch.html#mutant-calc-off-by-two" }); len(l) != 1 {
		t.Errorf("row %q does not link the killed mutant's diff", text(rows[1]))
	}
	if !strings.Contains(text(rows[2]), "—") {
		t.Errorf("row %q: a claim without mutants shows —", text(rows[2]))
	}

	// Unchanged, then a prose edit: no go process runs, the mutant is
	// answered by the cache.
	for _, edit := range []bool{false, true} {
		if edit {
			ch := filepath.Join(root, "book", "ch.md")
			src, err := os.ReadFile(ch)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(ch, append(src, "\nA new sentence about epochs.\n"...), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		res, err := buildBook(t, root, out, cache)
		if err != nil {
			t.Fatal(err)
		}
		if r := ran(res.Report); len(r) != 0 {
			t.Errorf("rebuild (prose edit %v) ran %v, want no go process", edit, r)
		}
		if !res.Report.Claims[0].Mutants[0].Killed {
			t.Error("a cached mutant run is not killed")
		}
	}
}

// mutantChapter is the mutants fixture's chapter with its claim naming
// the mutant folder name (or, with name "", no mutant).
func mutantChapter(name string) func(t *testing.T, root string) {
	m := ", and the check sees a\nwrong step: [" + name + "](../examples/calc/testdata/mutants/" + name + "/)."
	if name == "" {
		m = "."
	}
	return writeChapter("# Chapter\n\n## Rules\n\nThe epoch after 3 is 4\n([TestNext](../examples/calc/calc_test.go#TestNext))" + m + "\n")
}

// badMutantFixtures are the mutants fixture's chapter and book broken:
// each must fail at file:line with msg, and each error must be the only
// one of the build.
var badMutantFixtures = []struct {
	name   string
	file   string
	line   int
	msg    string
	detail string // in the error's detail, when set
	mutate func(t *testing.T, root string)
}{
	{name: "survives", file: "book/ch.md", line: 6, mutate: mutantChapter("same"),
		msg:    "TestNext does not fail when mutant same is applied: the check cannot see what the claim says it checks",
		detail: "Its output under the mutant:\n=== RUN   TestNext\n--- PASS: TestNext"},
	{name: "does not compile", file: "examples/calc/testdata/mutants/broken/calc.go", line: 6, mutate: mutantChapter("broken"),
		msg: "mutant broken does not compile: undefined: step"},
	{name: "required, missing", file: "book/ch.md", line: 6, mutate: mutantChapter(""),
		msg: "claim TestNext names no mutant that its check kills; book.toml's require-mutants requires one for every claim in ch.md#rules"},
	{name: "drifted", file: "book/ch.md", line: 7, mutate: mutantChapter("drifted"),
		msg: "differs from examples/calc/calc.go in 1 place, 27 changed lines; a mutant changes one rule"},
	{name: "two files", file: "book/ch.md", line: 7, mutate: mutantChapter("two-files"),
		msg: "holds 2 .go files; a mutant is one .go file"},
	{name: "no such folder", file: "book/ch.md", line: 7, mutate: mutantChapter("nope"),
		msg: "the folder examples/calc/testdata/mutants/nope does not exist"},
	{name: "follows no claim", file: "book/ch.md", line: 5, mutate: writeChapter(
		"# Chapter\n\n## Rules\n\nA lone [off-by-two](../examples/calc/testdata/mutants/off-by-two/).\n"),
		msg: "follows no claim in its paragraph or table row"},
	{name: "section not found", file: "book/book.toml", line: 8, mutate: func(t *testing.T, root string) {
		if err := os.WriteFile(filepath.Join(root, "book", "book.toml"), []byte("[book]\ntitle = \"Fixture: mutants\"\n\n[output.html]\ngit-repository-url = \"https://github.com/example/mutants\"\n\n[bookgen]\nrequire-mutants = [\"ch.md#laws\"]\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}, msg: `require-mutants names ch.md#laws, but book/ch.md has no heading with id "laws"`},
	{name: "chapter not in SUMMARY.md", file: "book/book.toml", line: 8, mutate: func(t *testing.T, root string) {
		if err := os.WriteFile(filepath.Join(root, "book", "other.md"), []byte("# Other\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "book", "book.toml"), []byte("[book]\ntitle = \"Fixture: mutants\"\n\n[output.html]\ngit-repository-url = \"https://github.com/example/mutants\"\n\n[bookgen]\nrequire-mutants = [\"other.md\"]\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}, msg: "require-mutants names other.md, which is not a chapter of book/SUMMARY.md"},
}

// TestBadMutants checks that each broken use of mutants fails the build
// with one error, at the right place.
func TestBadMutants(t *testing.T) {
	for _, tt := range badMutantFixtures {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := copyFixture(t, "mutants")
			tt.mutate(t, root)
			_, err := buildBook(t, root, filepath.Join(t.TempDir(), "site"), t.TempDir())
			if err == nil {
				t.Fatal("the build succeeded")
			}
			errs := diag.All(err)
			if len(errs) != 1 || errs[0].File != tt.file || errs[0].Line != tt.line || !strings.Contains(errs[0].Msg, tt.msg) {
				t.Errorf("errors:\n%v\nwant one, %s:%d: ...%s...", err, tt.file, tt.line, tt.msg)
			} else if !strings.Contains(errs[0].Detail, tt.detail) {
				t.Errorf("detail:\n%s\nwant it to hold %q", errs[0].Detail, tt.detail)
			}
		})
	}
}

// TestRequireMutantsFailsTest checks that `bookgen test`, which writes no
// site, enforces require-mutants as build does: the fixture passes with its
// mutant linked and fails at the claim's line without it.
func TestRequireMutantsFailsTest(t *testing.T) {
	t.Parallel()
	for _, linked := range []bool{true, false} {
		root := copyFixture(t, "mutants")
		if !linked {
			mutantChapter("")(t, root)
		}
		opt := build.Options{Root: root}
		opt.Verify.CacheDir = t.TempDir()
		_, err := build.Test(context.Background(), opt)
		if linked {
			if err != nil {
				t.Fatalf("bookgen test of the fixture with its mutant: %v", err)
			}
			continue
		}
		errs := diag.All(err)
		if len(errs) != 1 || errs[0].File != "book/ch.md" || errs[0].Line != 6 || !strings.Contains(errs[0].Msg, "claim TestNext names no mutant that its check kills") {
			t.Errorf("bookgen test without the mutant: %v, want book/ch.md:6: claim TestNext names no mutant ...", err)
		}
	}
}
