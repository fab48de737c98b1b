package render

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/expand"
)

// testBook builds a two-chapter book in a temporary repository with one
// example file, without going through book.Load.
func testBook(t testing.TB) *book.Book {
	t.Helper()
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, "examples", "stream"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "examples", "stream", "state.go"), []byte("package stream\n"), 0o644))
	must(t, os.MkdirAll(filepath.Join(root, "book", "part"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "book", "diagram.svg"), []byte("<svg/>"), 0o644))
	intro := &book.Item{Kind: book.KindChapter, Title: "Introduction", Path: "introduction.md"}
	own := &book.Item{Kind: book.KindChapter, Section: book.Numbered, Title: "Ownership", Path: "ownership.md", Number: []int{1}}
	deep := &book.Item{Kind: book.KindChapter, Section: book.Numbered, Title: "Deep", Path: "part/deep.md", Number: []int{1, 1}}
	own.Children = []*book.Item{deep}
	return &book.Book{
		Root:     root,
		Dir:      filepath.Join(root, "book"),
		Config:   book.Config{Title: "T", Repository: "https://github.com/o/r"},
		CSP:      "default-src 'self'; script-src 'self'; style-src 'self'",
		Items:    []*book.Item{intro, own},
		Chapters: []*book.Item{intro, own, deep},
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// doc makes an expand.Doc for chapter i whose lines all come from the
// chapter file itself.
func doc(b *book.Book, i int, md string) *expand.Doc {
	ch := b.Chapters[i]
	d := &expand.Doc{Chapter: ch, Markdown: []byte(md)}
	for n := range strings.Count(md, "\n") + 1 {
		d.Origins = append(d.Origins, expand.Origin{File: ch.File(), Line: n + 1})
	}
	return d
}

func TestHeadingsTitleAndPermalinks(t *testing.T) {
	b := testBook(t)
	pg, err := New(b).Render(doc(b, 1, "# Epochs and fencing\n\nText.\n\n## The rule {#rule}\n\nMore.\n\n## The rule\n"))
	if err != nil {
		t.Fatal(err)
	}
	if pg.Title != "Epochs and fencing" {
		t.Errorf("Title = %q", pg.Title)
	}
	want := []Heading{{1, "epochs-and-fencing", "Epochs and fencing"}, {2, "rule", "The rule"}, {2, "the-rule", "The rule"}}
	if len(pg.Headings) != len(want) {
		t.Fatalf("Headings = %+v", pg.Headings)
	}
	for i, h := range want {
		if pg.Headings[i] != h {
			t.Errorf("Headings[%d] = %+v, want %+v", i, pg.Headings[i], h)
		}
	}
	h := string(pg.HTML)
	if !strings.Contains(h, `<h2 id="rule">The rule<a class="anchor" href="#rule"`) {
		t.Errorf("no permalink in heading:\n%s", h)
	}
}

func TestTitleFallsBackToSummary(t *testing.T) {
	b := testBook(t)
	pg, err := New(b).Render(doc(b, 1, "Just text.\n"))
	if err != nil {
		t.Fatal(err)
	}
	if pg.Title != "Ownership" {
		t.Errorf("Title = %q, want the SUMMARY title", pg.Title)
	}
	if pg.Summary != "Just text." {
		t.Errorf("Summary = %q", pg.Summary)
	}
}

func TestCodeHighlightedWithClassesAndAttributesHidden(t *testing.T) {
	b := testBook(t)
	md := "```go hl_lines=2\npackage main\n\nfunc main() {}\n```\n\n```console timeout=2s\n$ go run ./examples/x\nepoch 3\n```\n"
	pg, err := renderChecked(b, doc(b, 1, md))
	if err != nil {
		t.Fatal(err)
	}
	h := string(pg.HTML)
	for _, want := range []string{
		`<pre class="chroma">`,
		`<span class="kn">package</span>`, // Go keyword, by class
		`<span class="gp">$</span>`,       // console prompt
		`<span class="line hl">`,          // hl_lines=2
		`data-lang="console"`,
	} {
		if !strings.Contains(h, want) {
			t.Errorf("missing %s in\n%s", want, h)
		}
	}
	for _, bad := range []string{"timeout", "hl_lines", "style="} {
		if strings.Contains(h, bad) {
			t.Errorf("page contains %q:\n%s", bad, h)
		}
	}
}

func TestIgnoredBlockIsMarked(t *testing.T) {
	b := testBook(t)
	pg, err := renderChecked(b, doc(b, 1, "```go ignore\nfunc broken( {\n```\n\n```go\nx := 1\n```\n"))
	if err != nil {
		t.Fatal(err)
	}
	h := string(pg.HTML)
	if n := strings.Count(h, IgnoreNote); n != 1 {
		t.Errorf("ignore note appears %d times, want 1:\n%s", n, h)
	}
	if !strings.Contains(h, `class="code-block ignored"`) {
		t.Errorf("ignored block not marked:\n%s", h)
	}
}

func TestLinksRewritten(t *testing.T) {
	b := testBook(t)
	md := strings.Join([]string{
		"[a](ownership.md) [b](ownership.md#rule) [c](part/deep.md)",
		"[d](../examples/stream/state.go) [e](../examples/stream) [f](#local)",
		"[g](https://example.com/x.md) [h](diagram.svg) ![i](diagram.svg) ![j](https://example.com/j.png)",
	}, "\n") + "\n"
	pg, err := New(b).Render(doc(b, 0, md))
	if err != nil {
		t.Fatal(err)
	}
	h := string(pg.HTML)
	for _, want := range []string{
		`href="ownership.html"`,
		`href="ownership.html#rule"`,
		`href="part/deep.html"`,
		`href="https://github.com/o/r/blob/main/examples/stream/state.go"`,
		`href="https://github.com/o/r/tree/main/examples/stream"`,
		`href="#local"`,
		`href="https://example.com/x.md"`,
		`href="diagram.svg"`,
	} {
		if !strings.Contains(h, want) {
			t.Errorf("missing %s in\n%s", want, h)
		}
	}
	wantLinks := []Link{
		{Target: "ownership.md", File: "book/introduction.md", Line: 1},
		{Target: "ownership.md", Fragment: "rule", File: "book/introduction.md", Line: 1},
		{Target: "part/deep.md", File: "book/introduction.md", Line: 1},
		{Target: "introduction.md", Fragment: "local", File: "book/introduction.md", Line: 2}, // its own line
	}
	if len(pg.Links) != len(wantLinks) {
		t.Fatalf("Links = %+v", pg.Links)
	}
	for i := range wantLinks {
		if pg.Links[i] != wantLinks[i] {
			t.Errorf("Links[%d] = %+v, want %+v", i, pg.Links[i], wantLinks[i])
		}
	}
}

func TestRelativeLinkFromNestedChapter(t *testing.T) {
	b := testBook(t)
	pg, err := New(b).Render(doc(b, 2, "[up](../ownership.md#x) [src](../../examples/stream/state.go)\n"))
	if err != nil {
		t.Fatal(err)
	}
	h := string(pg.HTML)
	if !strings.Contains(h, `href="../ownership.html#x"`) || !strings.Contains(h, `href="https://github.com/o/r/blob/main/examples/stream/state.go"`) {
		t.Errorf("nested links not rewritten:\n%s", h)
	}
}

func TestBadLinksNameFileAndLine(t *testing.T) {
	b := testBook(t)
	cases := map[string]string{
		"missing file":   "Intro.\n\nSee [x](../examples/nope.go).\n",
		"not chapter":    "Intro.\n\nSee [x](other.md).\n",
		"leaves repo":    "Intro.\n\nSee [x](../../outside.txt).\n",
		"image outside":  "Intro.\n\n![x](../examples/stream/state.go)\n",
		"image missing":  "Intro.\n\n![x](nope.png)\n",
		"folder no page": "Intro.\n\nSee [x](part/).\n",
	}
	for name, md := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := New(b).Render(doc(b, 0, md))
			es := diag.All(err)
			if err == nil || len(es) != 1 {
				t.Fatalf("err = %v, want one diag error", err)
			}
			e := es[0]
			if e.File != "book/introduction.md" || e.Line != 3 {
				t.Errorf("error at %s:%d, want book/introduction.md:3 (%v)", e.File, e.Line, e)
			}
		})
	}
}

// TestFolderLinkNeedsIndex checks that a link to a folder under book/ is
// accepted only when the folder has a page on the site: a copied
// index.html, or a chapter index.md.
func TestFolderLinkNeedsIndex(t *testing.T) {
	b := testBook(t)
	must(t, os.WriteFile(filepath.Join(b.Dir, "part", "index.html"), []byte("<p>index</p>"), 0o644))
	pg, err := New(b).Render(doc(b, 0, "See [x](part/).\n"))
	if err != nil {
		t.Fatalf("folder with index.html: %v", err)
	}
	if !strings.Contains(string(pg.HTML), `<a href="part/">x</a>`) {
		t.Errorf("link to the folder changed:\n%s", pg.HTML)
	}
	b = testBook(t)
	must(t, os.MkdirAll(filepath.Join(b.Dir, "sub"), 0o755))
	idx := &book.Item{Kind: book.KindChapter, Title: "Sub", Path: "sub/index.md"}
	b.Chapters = append(b.Chapters, idx)
	if _, err := New(b).Render(doc(b, 0, "See [x](sub/).\n")); err != nil {
		t.Errorf("folder with an index.md chapter: %v", err)
	}
}

func TestErrorLineComesFromOrigin(t *testing.T) {
	b := testBook(t)
	d := doc(b, 0, "a\n\n[x](nope.md)\n")
	d.Origins[2] = expand.Origin{File: "examples/stream/README.md", Line: 40}
	_, err := New(b).Render(d)
	if got := err.Error(); !strings.HasPrefix(got, "examples/stream/README.md:40: ") {
		t.Errorf("err = %q", got)
	}
}

func TestSections(t *testing.T) {
	b := testBook(t)
	pg, err := renderChecked(b, doc(b, 1, "# Title\n\nFirst *para*\nline two.\n\n## Fences {#f}\n\n- item\n\n```go\nx := 1\n```\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Section{
		{Title: "Title", Anchor: "title", Text: "First para line two."},
		{Title: "Fences", Anchor: "f", Text: "item x := 1"},
	}
	if len(pg.Sections) != len(want) {
		t.Fatalf("Sections = %+v", pg.Sections)
	}
	for i := range want {
		if pg.Sections[i] != want[i] {
			t.Errorf("Sections[%d] = %+v, want %+v", i, pg.Sections[i], want[i])
		}
	}
	if pg.Summary != "First para line two." {
		t.Errorf("Summary = %q", pg.Summary)
	}
}

func TestExtensions(t *testing.T) {
	b := testBook(t)
	md := "| a | b |\n|---|---|\n| 1 | 2 |\n\n~~old~~ \"quoted\"\n\n- [x] done\n\nTerm\n: Definition\n\nNote[^1].\n\n[^1]: The note.\n\nhttps://example.com\n"
	pg, err := New(b).Render(doc(b, 1, md))
	if err != nil {
		t.Fatal(err)
	}
	h := string(pg.HTML)
	for _, want := range []string{"<table>", "<del>old</del>", "&ldquo;quoted&rdquo;", `type="checkbox"`, "<dl>", `class="footnote-definition"`, `<a href="https://example.com">`} {
		if !strings.Contains(h, want) {
			t.Errorf("missing %s in\n%s", want, h)
		}
	}
}

// A column's alignment must not become a style attribute: the site's
// Content-Security-Policy (style-src 'self') blocks inline styles, so the
// alignment would be lost and the browser would report a violation.
func TestTableAlignmentWithoutInlineStyle(t *testing.T) {
	b := testBook(t)
	pg, err := New(b).Render(doc(b, 1, "| l | c | r |\n|:--|:-:|--:|\n| 1 | 2 | 3 |\n"))
	if err != nil {
		t.Fatal(err)
	}
	h := string(pg.HTML)
	if strings.Contains(h, "style=") {
		t.Errorf("inline style in\n%s", h)
	}
	for _, want := range []string{`<th align="left">l</th>`, `<th align="center">c</th>`, `<td align="right">3</td>`} {
		if !strings.Contains(h, want) {
			t.Errorf("missing %s in\n%s", want, h)
		}
	}
}

func TestDeterministic(t *testing.T) {
	b := testBook(t)
	md := "# A\n\n## B\n\nx[^n]\n\n[^n]: y\n\n```go\npackage p\n```\n\n## B\n"
	p1, err := renderChecked(b, doc(b, 1, md))
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		p2, err := renderChecked(b, doc(b, 1, md))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(p1.HTML, p2.HTML) {
			t.Fatalf("output differs:\n%s\n---\n%s", p1.HTML, p2.HTML)
		}
	}
}

func TestCSS(t *testing.T) {
	css := string(CSS())
	for _, want := range []string{".chroma .kn {", "[data-theme=dark] .chroma .kn {", "@media (prefers-color-scheme: dark)", ":root:not([data-theme=light]) .chroma"} {
		if !strings.Contains(css, want) {
			t.Errorf("CSS lacks %q", want)
		}
	}
	if !bytes.Equal(CSS(), []byte(css)) {
		t.Error("CSS not stable")
	}
}

func TestParseInfo(t *testing.T) {
	ci := parseInfo(`go,ignore hl_lines="1 3-4" linenos timeout=2s`)
	if ci.Lang != "go" || !ci.Ignore || !ci.LineNos || len(ci.HLLines) != 2 || ci.HLLines[1] != [2]int{3, 4} {
		t.Errorf("parseInfo = %+v", ci)
	}
}

func TestCodeBlankEdgesTrimmedAndEntitiesDecoded(t *testing.T) {
	b := testBook(t)
	pg, err := renderChecked(b, doc(b, 1, "## Chubby's sequencer\n\n```go\n\n\n// Doc.\nvar x = 1\n\n```\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := pg.Headings[0].Text; got != "Chubby\u2019s sequencer" {
		t.Errorf("heading text = %q", got)
	}
	if !strings.Contains(string(pg.HTML), `<code><span class="line"><span class="cl"><span class="c1">// Doc.`) {
		t.Errorf("leading blank lines kept:\n%s", pg.HTML)
	}
}

func TestDedent(t *testing.T) {
	cases := map[string]string{
		"\tif x {\n\t\ty()\n\t}\n": "if x {\n\ty()\n}\n",
		"\tx\n\n\ty\n":             "x\n\ny\n",
		"x\n\ty\n":                 "x\n\ty\n",
		"  \ta\n  b\n":             "\ta\nb\n",
		"":                         "",
	}
	for in, want := range cases {
		if got := dedent(in); got != want {
			t.Errorf("dedent(%q) = %q, want %q", in, got, want)
		}
	}
	b := testBook(t)
	pg, err := renderChecked(b, doc(b, 1, "```console\n$ go run ./x\n    indented output\n```\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(pg.HTML), "    indented output") {
		t.Errorf("console output lost its indentation:\n%s", pg.HTML)
	}
}

func TestBlockFromExamplesGetsSourceAndTryLines(t *testing.T) {
	b := testBook(t)
	must(t, os.MkdirAll(filepath.Join(b.Root, "examples", "stream", "demo"), 0o755))
	must(t, os.WriteFile(filepath.Join(b.Root, "examples", "stream", "demo", "main.go"), []byte("// Demo.\npackage main\n\nfunc main() {}\n"), 0o644))
	md := "```go\npackage main\n\nfunc main() {}\n```\n\n```go\npackage stream\n```\n\n```go\nx := 1\n```\n"
	d := doc(b, 1, md)
	// Lines 2-4 come from the demo program, line 8 from the library.
	for i, line := range []int{2, 3, 4} {
		d.Origins[i+1] = expand.Origin{File: "examples/stream/demo/main.go", Line: line}
	}
	d.Origins[7] = expand.Origin{File: "examples/stream/state.go", Line: 1}
	pg, err := renderChecked(b, d)
	if err != nil {
		t.Fatal(err)
	}
	h := string(pg.HTML)
	for _, want := range []string{
		`Try it: <code>go run ./examples/stream/demo</code>`,
		`href="https://github.com/o/r/blob/main/examples/stream/demo/main.go#L2-L4"`,
		`Try it: <code>go test ./examples/stream</code>`,
		`href="https://github.com/o/r/blob/main/examples/stream/state.go#L1-L1"`,
	} {
		if !strings.Contains(h, want) {
			t.Errorf("missing %s in\n%s", want, h)
		}
	}
	if n := strings.Count(h, `class="code-source"`); n != 2 {
		t.Errorf("%d source lines, want 2 (the chapter's own block has none)", n)
	}
	if strings.Contains(h, "bookgen-") {
		t.Errorf("internal attribute leaked into the page:\n%s", h)
	}
}

func TestExternalLinksCollected(t *testing.T) {
	b := testBook(t)
	md := "# T\n\nSee [a](https://example.com/a) and <https://example.org/b>,\n[local](ownership.md) and [mail](mailto:x@y.z).\n"
	pg, err := New(b).Render(doc(b, 0, md))
	if err != nil {
		t.Fatal(err)
	}
	want := []ExternalLink{
		{URL: "https://example.com/a", File: "book/introduction.md", Line: 3},
		{URL: "https://example.org/b", File: "book/introduction.md", Line: 3},
	}
	if len(pg.External) != len(want) {
		t.Fatalf("external links %+v, want %+v", pg.External, want)
	}
	for i := range want {
		if pg.External[i] != want[i] {
			t.Errorf("external link %d: %+v, want %+v", i, pg.External[i], want[i])
		}
	}
}

// TestCacheReusesUnchangedPages renders a chapter twice through one Cache
// (the second time from it), then after an edit to the chapter and after
// the file it links to disappears (both render again; the second fails).
func TestCacheReusesUnchangedPages(t *testing.T) {
	b := testBook(t)
	c := &Cache{}
	md := "# Own\n\nSee [state](../examples/stream/state.go).\n"
	for i, want := range []struct{ rendered, reused int }{{1, 0}, {0, 1}} {
		r := New(b)
		r.Cache = c
		if _, err := r.Render(doc(b, 1, md)); err != nil {
			t.Fatal(err)
		}
		if r.Rendered != want.rendered || r.Reused != want.reused {
			t.Errorf("render %d: rendered %d, reused %d; want %+v", i, r.Rendered, r.Reused, want)
		}
	}
	r := New(b)
	r.Cache = c
	if _, err := r.Render(doc(b, 1, md+"\nMore.\n")); err != nil || r.Rendered != 1 {
		t.Errorf("after an edit: rendered %d, err %v; want a new rendering", r.Rendered, err)
	}
	must(t, os.Remove(filepath.Join(b.Root, "examples", "stream", "state.go")))
	r = New(b)
	r.Cache = c
	if _, err := r.Render(doc(b, 1, md)); err == nil {
		t.Errorf("a cached page was reused after the file it links to was removed (reused %d)", r.Reused)
	}
}

// TestUnicodeFragmentsDecoded checks that a link's #fragment is compared
// with heading ids as text, whether written as is or percent-encoded.
func TestUnicodeFragmentsDecoded(t *testing.T) {
	b := testBook(t)
	pg, err := New(b).Render(doc(b, 1, "## Ελληνικά\n\n[a](#Ελληνικά) [b](#%CE%95%CE%BB%CE%BB%CE%B7%CE%BD%CE%B9%CE%BA%CE%AC) [c](introduction.md#%CE%95%CE%BB)\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Ελληνικά", "Ελληνικά", "Ελ"}
	if len(pg.Links) != len(want) {
		t.Fatalf("links = %+v", pg.Links)
	}
	for i, l := range pg.Links {
		if l.Fragment != want[i] {
			t.Errorf("link %d: fragment %q, want %q", i, l.Fragment, want[i])
		}
	}
}

// TestLinkErrorsNameTheLinksLine checks that a bad link or image in the
// middle of a paragraph is reported at the line it is written on, not at
// the paragraph's first line (issue 9: ":21" for a link on line 23), and
// that links collected for the link check carry their own lines.
func TestLinkErrorsNameTheLinksLine(t *testing.T) {
	b := testBook(t)
	para := "Intro.\n\n" + // 1-2
		"A paragraph starts here,\n" + // 3
		"goes on,\n" + // 4
		"and links to %s on its third line.\n" // 5
	cases := map[string]string{
		"link":            "[a missing chapter](nope.md)",
		"code text":       "[`code`](../examples/nope.go)",
		"empty text":      "[](nope.md)",
		"image":           "![a missing picture](nope.png)",
		"at line start":   "\n[x](nope.md)",
		"after hard line": "\\\n[x](nope.md)",
	}
	for name, link := range cases {
		t.Run(name, func(t *testing.T) {
			md := fmt.Sprintf(para, link)
			want := 5
			if strings.HasPrefix(link, "\n") || strings.HasPrefix(link, "\\\n") {
				want = 6
			}
			_, err := New(b).Render(doc(b, 0, md))
			es := diag.All(err)
			if len(es) != 1 {
				t.Fatalf("err = %v, want one diag error", err)
			}
			if es[0].Line != want {
				t.Errorf("error at line %d, want %d (%v)", es[0].Line, want, es[0])
			}
		})
	}
	pg, err := New(b).Render(doc(b, 0, "Intro.\n\nFirst line,\nsecond [ch](ownership.md#x) and\n<https://example.org/b> third.\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pg.Links) != 1 || pg.Links[0].Line != 4 {
		t.Errorf("Links = %+v, want one at line 4", pg.Links)
	}
	if len(pg.External) != 1 || pg.External[0].Line != 5 {
		t.Errorf("External = %+v, want one at line 5", pg.External)
	}
}
