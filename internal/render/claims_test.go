package render

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ownership-book/ownership/internal/verify"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

func TestRelPath(t *testing.T) {
	for _, c := range []struct{ from, to, want string }{
		{"book", "book/ownership.md", "ownership.md"},
		{"book/ref", "book/ownership.md", "../ownership.md"},
		{"book", "examples/x/x_test.go", "../examples/x/x_test.go"},
		{"book/a/b", "examples/x/x_test.go", "../../../examples/x/x_test.go"},
		{"book/a", "book/a/c.md", "c.md"},
	} {
		if got := relPath(c.from, c.to); got != c.want {
			t.Errorf("relPath(%q, %q) = %q, want %q", c.from, c.to, got, c.want)
		}
	}
}

// TestEscapeMarkdown renders escaped text in a table cell and gets the
// text back, with no link, emphasis, code or cell break made of it.
func TestEscapeMarkdown(t *testing.T) {
	md := goldmark.New(goldmark.WithExtensions(extension.Table))
	for _, s := range []string{
		"a | b", "*not emphasis*", "`code`", "[x](y)", "<b>bold</b>", "epoch e' > e.", `back\slash`, "x_y_z", "#1 & 2",
	} {
		var b strings.Builder
		src := "| h |\n| --- |\n| " + escapeMarkdown(s) + " |\n"
		if err := md.Convert([]byte(src), &b); err != nil {
			t.Fatal(err)
		}
		html := b.String()
		i := strings.Index(html, "<td>")
		j := strings.Index(html, "</td>")
		if i < 0 || j < i {
			t.Fatalf("%q: no cell in %s", s, html)
		}
		cell := strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&", "&quot;", `"`).Replace(html[i+4 : j])
		if cell != s {
			t.Errorf("escapeMarkdown(%q) renders as %q", s, cell)
		}
	}
}

// TestClaimLinksAndTable renders passing claim links (ids in page order,
// the function's lines, the badge) and the table of checks on a nested
// page: one row per claim, relative links, no ids on the table's links,
// a link to a check that did not pass left as a plain link, and a
// directive inside a code block left alone.
func TestClaimLinksAndTable(t *testing.T) {
	b := testBook(t)
	must(t, os.WriteFile(filepath.Join(b.Root, "examples", "stream", "state_test.go"), []byte("package stream\n"), 0o644))
	claims := []verify.Claim{
		{File: "book/ownership.md", Line: 3, Chapter: "ownership.md", ChapterTitle: "Ownership", ID: "check-TestA", Text: "Epochs | rise.",
			Target: "examples/stream/state_test.go", Func: "TestA", Package: "./examples/stream", StartLine: 5, EndLine: 9, Passed: true},
		{File: "book/ownership.md", Line: 3, Chapter: "ownership.md", ChapterTitle: "Ownership", ID: "check-TestB", Text: "Epochs | rise.",
			Target: "examples/stream/state_test.go", Func: "TestB", Package: "./examples/stream", StartLine: 11, EndLine: 12, Passed: true},
		{File: "book/ownership.md", Line: 4, Chapter: "ownership.md", ChapterTitle: "Ownership", ID: "check-TestA-2", Text: "Again, the record&rsquo;s.",
			Target: "examples/stream/state_test.go", Func: "TestA", Package: "./examples/stream", StartLine: 5, EndLine: 9, Passed: true},
	}
	r := New(b)
	r.SetClaims(claims)
	pg, err := r.Render(doc(b, 1, "# O\n\nEpochs | rise ([A](../examples/stream/state_test.go#TestA), [B](../examples/stream/state_test.go#TestB)).\nAgain ([A](../examples/stream/state_test.go#TestA)). Not run: [C](../examples/stream/state_test.go#TestC).\n"))
	must(t, err)
	html := string(pg.HTML)
	for _, want := range []string{
		`href="https://github.com/o/r/blob/main/examples/stream/state_test.go#L5-L9" title="TestA passed in this build: go test -run '^TestA$' ./examples/stream" class="check" id="check-TestA">A<span class="check-badge"`,
		`class="check" id="check-TestB">B<span`,
		`class="check" id="check-TestA-2">A<span`,
		`<a href="https://github.com/o/r/blob/main/examples/stream/state_test.go#TestC">C</a>`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("ownership page lacks %s\n%s", want, html)
		}
	}

	deep, err := r.Render(doc(b, 2, "# Deep\n\n{{#checks}}\n\n```text\n{{#checks}}\n```\n"))
	must(t, err)
	html = string(deep.HTML)
	if n := strings.Count(html, "<tr>"); n != 3 {
		t.Errorf("table has %d rows, want a header and 2 claims:\n%s", n, html)
	}
	for _, want := range []string{
		`<td>Epochs | rise.</td>`,
		`<a href="../ownership.html#check-TestA">Ownership</a>`,
		`<a href="../ownership.html#check-TestA-2">Ownership</a>`,
		`<table class="checks-table">`,
		`<td>Again, the record’s.</td>`, // the typographer's entity, decoded once
		// names break after / and _ and before an inner capital,
		// with no character a copy would keep
		`<code>Test<wbr>A</code><span class="check-badge"`,
		`<code>Test<wbr>B</code><span class="check-badge"`,
		`<td><code>examples/<wbr>stream</code></td>`,
		`<span class="cl">{{#checks}}`, // in a code block: left alone
	} {
		if !strings.Contains(html, want) {
			t.Errorf("deep page lacks %s\n%s", want, html)
		}
	}
	if strings.Contains(html, `id="check-`) {
		t.Errorf("the table's links have ids:\n%s", html)
	}
	if strings.Count(html, `class="checks-table"`) != 1 {
		t.Errorf("want one table of checks with its class:\n%s", html)
	}
	if len(deep.Links) != 2 || deep.Links[0].Target != "ownership.md" || deep.Links[0].Fragment != "check-TestA" {
		t.Errorf("links to check: %+v", deep.Links)
	}
}

// require-mutants holds verified claims to a killed mutant; a render
// without SetClaims (nothing verified, so no claim is shown as checked)
// has none, and renders the page. With the claims set, the same page is
// refused at the claim's line.
func TestRequireMutantsOnlyForVerifiedClaims(t *testing.T) {
	b := testBook(t)
	b.Config.RequireMutants = []string{"ownership.md"}
	must(t, os.WriteFile(filepath.Join(b.Root, "examples", "stream", "state_test.go"), []byte("package stream\n"), 0o644))
	md := "# O\n\nEpochs rise ([A](../examples/stream/state_test.go#TestA)).\n"
	if _, err := New(b).Render(doc(b, 1, md)); err != nil {
		t.Errorf("render without claims: %v, want the page", err)
	}
	r := New(b)
	r.SetClaims([]verify.Claim{{File: "book/ownership.md", Line: 3, Chapter: "ownership.md", ChapterTitle: "Ownership", ID: "check-TestA", Text: "Epochs rise.",
		Target: "examples/stream/state_test.go", Func: "TestA", Package: "./examples/stream", StartLine: 1, EndLine: 1, Passed: true}})
	_, err := r.Render(doc(b, 1, md))
	if err == nil || !strings.Contains(err.Error(), "claim TestA names no mutant that its check kills") {
		t.Errorf("render with a verified claim and no mutant: %v, want the require-mutants error", err)
	}
}

// TestWordBreaks: a check's or package's name may break after "/" and
// "_" and before a capital that ends a lower-case run or a number, and
// nowhere inside an upper-case run (HTTP, ID).
func TestWordBreaks(t *testing.T) {
	for in, want := range map[string]string{
		"TestFenceRejectsStale":      "Test<wbr>Fence<wbr>Rejects<wbr>Stale",
		"examples/stream/owner":      "examples/<wbr>stream/<wbr>owner",
		"TestHTTPServer/stale_epoch": "Test<wbr>HTTPServer/<wbr>stale_<wbr>epoch",
		"Test2Voters":                "Test2<wbr>Voters",
		"a<b>":                       "a&lt;b&gt;",
		"trailing/":                  "trailing/",
		"":                           "",
	} {
		if got := wordBreaks(in); got != want {
			t.Errorf("wordBreaks(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestClaimLinksKeepTheirOwnMutants links one check twice in a chapter,
// each claim with mutants of its own: each link's badge and title must
// count and name its own claim's killed mutants, not the other's.
func TestClaimLinksKeepTheirOwnMutants(t *testing.T) {
	b := testBook(t)
	must(t, os.WriteFile(filepath.Join(b.Root, "examples", "stream", "state_test.go"), []byte("package stream\n"), 0o644))
	mutant := func(name string) verify.Mutant {
		return verify.Mutant{Name: name, Dir: "examples/stream/testdata/mutants/" + name, Killed: true}
	}
	claims := []verify.Claim{
		{File: "book/ownership.md", Line: 3, Chapter: "ownership.md", ChapterTitle: "Ownership", ID: "check-TestA", Text: "Epochs rise.",
			Target: "examples/stream/state_test.go", Func: "TestA", Package: "./examples/stream", StartLine: 5, EndLine: 9, Passed: true,
			Mutants: []verify.Mutant{mutant("one")}},
		{File: "book/ownership.md", Line: 5, Chapter: "ownership.md", ChapterTitle: "Ownership", ID: "check-TestA-2", Text: "Fences hold.",
			Target: "examples/stream/state_test.go", Func: "TestA", Package: "./examples/stream", StartLine: 5, EndLine: 9, Passed: true,
			Mutants: []verify.Mutant{mutant("two"), mutant("three")}},
	}
	r := New(b)
	r.SetClaims(claims)
	pg, err := r.Render(doc(b, 1, "# O\n\nEpochs rise ([A](../examples/stream/state_test.go#TestA)).\n\nFences hold ([A](../examples/stream/state_test.go#TestA)).\n"))
	must(t, err)
	html := string(pg.HTML)
	for _, want := range []string{
		`it fails with mutant one" class="check" id="check-TestA">A<span class="check-badge" aria-hidden="true">✓ kills 1</span>`,
		`it fails with mutant two, three" class="check" id="check-TestA-2">A<span class="check-badge" aria-hidden="true">✓ kills 2</span>`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %s\n%s", want, html)
		}
	}
}
