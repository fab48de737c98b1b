package site

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/render"
	"github.com/ownership-book/ownership/theme"
)

// testBook is a book of an introduction, a part title, a numbered chapter
// with a nested one, a draft and a separator; pages are hand-made.
func testBook(t *testing.T) (*book.Book, []*render.Page) {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "book", "img"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "book", "img", "d.svg"), []byte("<svg/>"), 0o644); err != nil {
		t.Fatal(err)
	}
	intro := &book.Item{Kind: book.KindChapter, Title: "Introduction", Path: "introduction.md"}
	part := &book.Item{Kind: book.KindPartTitle, Title: "Enforcing one writer"}
	own := &book.Item{Kind: book.KindChapter, Section: book.Numbered, Title: "Ownership", Path: "ownership.md", Number: []int{1}}
	deep := &book.Item{Kind: book.KindChapter, Section: book.Numbered, Title: "Takeover", Path: "stream/takeover.md", Number: []int{1, 1}}
	draft := &book.Item{Kind: book.KindChapter, Section: book.Numbered, Title: "Raft", Number: []int{2}, Draft: true}
	sep := &book.Item{Kind: book.KindSeparator}
	own.Children = []*book.Item{deep}
	b := &book.Book{
		Root: root,
		Dir:  filepath.Join(root, "book"),
		Src:  "book", ConfigFile: book.ConfigFile, SummaryFile: book.SummaryFile,
		Config: book.Config{
			Title:           "Ownership",
			Authors:         []string{"A", "B"},
			Description:     "A book.",
			Language:        "en",
			SiteURL:         "https://example.org/",
			Repository:      "https://github.com/o/r",
			EditURLTemplate: "https://github.com/o/r/edit/main/{path}",
		},
		Items:    []*book.Item{intro, part, own, draft, sep},
		Chapters: []*book.Item{intro, own, deep},
	}
	pages := []*render.Page{
		{HTML: []byte(`<h1 id="introduction">Introduction</h1><p><a href="ownership.html#rule">rule</a></p>`), Title: "Introduction",
			Headings: []render.Heading{{Level: 1, ID: "introduction", Text: "Introduction"}},
			Links:    []render.Link{{Target: "ownership.md", Fragment: "rule", File: "book/introduction.md", Line: 3}},
			Summary:  "Why one writer."},
		{HTML: []byte(`<h1 id="ownership">Ownership</h1><h2 id="rule">The rule</h2>`), Title: "Ownership: epochs",
			Headings: []render.Heading{{Level: 1, ID: "ownership", Text: "Ownership"}, {Level: 2, ID: "rule", Text: "The rule"}}},
		{HTML: []byte(`<h1 id="takeover">Takeover</h1>`), Title: "Takeover",
			Headings: []render.Heading{{Level: 1, ID: "takeover", Text: "Takeover"}}},
	}
	return b, pages
}

func read(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestWriteLayout(t *testing.T) {
	b, pages := testBook(t)
	out := filepath.Join(t.TempDir(), "site")
	res, err := Write(b, pages, out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pages != 3 {
		t.Errorf("Pages = %d, want 3", res.Pages)
	}
	for _, f := range []string{"introduction.html", "ownership.html", "stream/takeover.html", "index.html", "404.html", "favicon.svg", "img/d.svg", Marker} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	var css, js int
	hashed := regexp.MustCompile(`^assets/book\.[0-9a-f]{8}\.(css|js)$`)
	for _, f := range res.Files {
		if m := hashed.FindStringSubmatch(f); m != nil {
			if m[1] == "css" {
				css++
			} else {
				js++
			}
		}
	}
	if css != 1 || js != 1 {
		t.Errorf("hashed assets: %d css, %d js in %v", css, js, res.Files)
	}

	deep := read(t, filepath.Join(out, "stream", "takeover.html"))
	for _, want := range []string{
		`<link rel="stylesheet" href="../assets/book.`,
		`<a href="../ownership.html"><strong>1.</strong> Ownership</a>`,
		`<a href="../stream/takeover.html" aria-current="page"><strong>1.1.</strong> Takeover</a>`,
		`<li class="part-title">Enforcing one writer</li>`,
		`<span class="draft" aria-disabled="true" title="Not written yet"><strong>2.</strong> Raft</span>`,
		`<li class="spacer" role="separator"></li>`,
		`class="pager-prev" href="../ownership.html"`,
		`href="https://github.com/o/r/edit/main/book/stream/takeover.md"`,
		`<title>Takeover · Ownership</title>`,
		`<link rel="canonical" href="https://example.org/stream/takeover.html">`,
	} {
		if !strings.Contains(deep, want) {
			t.Errorf("stream/takeover.html lacks %s", want)
		}
	}
	if strings.Contains(deep, "pager-next") {
		t.Error("last chapter has a next link")
	}
	own := read(t, filepath.Join(out, "ownership.html"))
	for _, want := range []string{
		`class="pager-prev" href="introduction.html"`,
		`class="pager-next" href="stream/takeover.html"`,
		`<li class="level-2"><a href="#rule">The rule</a></li>`,
		`<meta name="description" content="A book.">`,
	} {
		if !strings.Contains(own, want) {
			t.Errorf("ownership.html lacks %s", want)
		}
	}
	index := read(t, filepath.Join(out, "index.html"))
	if !strings.Contains(index, `<title>Ownership</title>`) || !strings.Contains(index, `<a href="ownership.html#rule">`) ||
		!strings.Contains(index, `<a href="introduction.html" aria-current="page">`) {
		t.Errorf("index.html is not the introduction:\n%s", index)
	}
	nf := read(t, filepath.Join(out, "404.html"))
	if !strings.Contains(nf, `href="/assets/book.`) || !strings.Contains(nf, `href="/introduction.html"`) {
		t.Errorf("404.html links are not absolute:\n%s", nf)
	}
}

func TestWriteIsDeterministic(t *testing.T) {
	b, pages := testBook(t)
	dir := t.TempDir()
	a, c := filepath.Join(dir, "a"), filepath.Join(dir, "c")
	ra, err := Write(b, pages, a, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Write(b, pages, c, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, f := range ra.Files {
		if !bytes.Equal([]byte(read(t, filepath.Join(a, f))), []byte(read(t, filepath.Join(c, f)))) {
			t.Errorf("%s differs between two builds", f)
		}
	}
}

func TestAssetNameFollowsContent(t *testing.T) {
	x := hashedName("book", ".css", []byte("a"))
	if x != hashedName("book", ".css", []byte("a")) || x == hashedName("book", ".css", []byte("b")) {
		t.Errorf("hashedName not a content hash: %s", x)
	}
}

func TestBrokenAnchorFailsAndKeepsOutput(t *testing.T) {
	b, pages := testBook(t)
	out := filepath.Join(t.TempDir(), "site")
	if _, err := Write(b, pages, out, Options{}); err != nil {
		t.Fatal(err)
	}
	sentinel := filepath.Join(out, "sentinel.txt")
	if err := os.WriteFile(sentinel, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	pages[0].Links[0].Fragment = "nope"
	_, err := Write(b, pages, out, Options{})
	es := diag.All(err)
	if len(es) != 1 || es[0].File != "book/introduction.md" || es[0].Line != 3 || !strings.Contains(es[0].Msg, "nope") {
		t.Fatalf("err = %v, want book/introduction.md:3 about #nope", err)
	}
	if read(t, sentinel) != "keep" {
		t.Error("sentinel changed")
	}
	entries, _ := os.ReadDir(filepath.Dir(out))
	if len(entries) != 1 {
		t.Errorf("leftovers beside the output: %v", entries)
	}
	// A good build replaces the folder.
	pages[0].Links[0].Fragment = "rule"
	if _, err := Write(b, pages, out, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sentinel); !os.IsNotExist(err) {
		t.Error("sentinel survived a successful build: folder not replaced")
	}
	entries, _ = os.ReadDir(filepath.Dir(out))
	if len(entries) != 1 {
		t.Errorf("leftovers beside the output: %v", entries)
	}
}

func TestRefusesForeignFolder(t *testing.T) {
	b, pages := testBook(t)
	out := filepath.Join(t.TempDir(), "notes")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "mine.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(b, pages, out, Options{}); err == nil || !strings.Contains(err.Error(), Marker) {
		t.Fatalf("err = %v, want a refusal", err)
	}
	if read(t, filepath.Join(out, "mine.txt")) != "x" {
		t.Error("foreign folder changed")
	}
	if _, err := Write(b, pages, filepath.Join(b.Root, "book"), Options{}); err == nil {
		t.Error("writing over book/ was accepted")
	}
}

func TestDescribe(t *testing.T) {
	long := strings.Repeat("word ", 60)
	d := describe(long, "x")
	if len([]rune(d)) > 161 || !strings.HasSuffix(d, "…") || strings.Contains(d, "wor…") {
		t.Errorf("describe = %q", d)
	}
	if describe("", "fallback") != "fallback" {
		t.Error("no fallback")
	}
}

func TestIndexRedirectsToNestedFirstChapter(t *testing.T) {
	b, pages := testBook(t)
	b.Chapters[0].Path = "start/introduction.md"
	pages[1].Links = nil
	pages[0].Links = nil
	out := filepath.Join(t.TempDir(), "site")
	if _, err := Write(b, pages, out, Options{}); err != nil {
		t.Fatal(err)
	}
	index := read(t, filepath.Join(out, "index.html"))
	if !strings.Contains(index, `<meta http-equiv="refresh" content="0; url=start/introduction.html">`) {
		t.Errorf("index.html does not send the reader to the first chapter:\n%s", index)
	}
	if _, err := os.Stat(filepath.Join(out, "start", "introduction.html")); err != nil {
		t.Error(err)
	}
}

// TestPrintSitemapAndSearchIndex checks the whole-book page, the sitemap
// and the search index of the test book.
func TestPrintSitemapAndSearchIndex(t *testing.T) {
	b, pages := testBook(t)
	pages[0].Sections = []render.Section{{Title: "Introduction", Anchor: "introduction", Text: "Why one writer."}}
	pages[1].Sections = []render.Section{{Title: "Ownership: epochs", Text: "Intro."}, {Title: "The rule", Anchor: "rule", Text: "Fence."}}
	pages[1].HTML = append(pages[1].HTML, []byte(`<p><a href="#rule">self</a> <img src="img/d.svg" alt=""></p>`)...)
	pages[2].HTML = append(pages[2].HTML, []byte(`<p><a href="../ownership.html">up</a> <a href="https://x.example/a.html">ext</a></p>`)...)
	out := filepath.Join(t.TempDir(), "site")
	res, err := Write(b, pages, out, Options{})
	if err != nil {
		t.Fatal(err)
	}

	pr := read(t, filepath.Join(out, "print.html"))
	for _, want := range []string{
		`<section class="print-chapter" id="introduction"`,
		`<section class="print-chapter" id="ownership"`,
		`<section class="print-chapter" id="stream-takeover"`,
		`<a href="#ownership--rule">rule</a>`,        // intro's link to another chapter's anchor
		`id="ownership--rule"`,                       // the anchor, prefixed
		`<a href="#ownership--rule">self</a>`,        // a link within a chapter
		`<a href="#ownership">up</a>`,                // a nested chapter's link to a chapter
		`<a href="https://x.example/a.html">ext</a>`, // external links stay
		`src="img/d.svg"`,
	} {
		if !strings.Contains(pr, want) {
			t.Errorf("print.html lacks %s", want)
		}
	}
	if strings.Index(pr, `id="introduction"`) > strings.Index(pr, `id="ownership"`) || strings.Index(pr, `id="ownership"`) > strings.Index(pr, `id="stream-takeover"`) {
		t.Error("print.html chapters are not in reading order")
	}

	sm := read(t, filepath.Join(out, "sitemap.xml"))
	for _, want := range []string{"<loc>https://example.org/</loc>", "<loc>https://example.org/ownership.html</loc>", "<loc>https://example.org/stream/takeover.html</loc>"} {
		if !strings.Contains(sm, want) {
			t.Errorf("sitemap.xml lacks %s:\n%s", want, sm)
		}
	}

	if got := read(t, filepath.Join(out, "robots.txt")); !strings.Contains(got, "Sitemap: https://example.org/sitemap.xml\n") {
		t.Errorf("robots.txt = %q", got)
	}

	var index string
	for _, f := range res.Files {
		if strings.HasPrefix(f, "assets/search.") && strings.HasSuffix(f, ".json") {
			index = f
		}
	}
	if index == "" {
		t.Fatalf("no search index among %v", res.Files)
	}
	var docs []SearchDoc
	indexData := read(t, filepath.Join(out, index))
	if err := json.Unmarshal([]byte(indexData), &docs); err != nil {
		t.Fatal(err)
	}
	// Written one entry at a time, the index is what encoding the whole
	// array gives, and its name is the hash of those bytes.
	var whole bytes.Buffer
	enc := json.NewEncoder(&whole)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(docs); err != nil {
		t.Fatal(err)
	}
	if whole.String() != indexData {
		t.Errorf("the index streamed is\n%s\nencoding it whole gives\n%s", indexData, whole.String())
	}
	if want := "assets/" + hashedName("search", ".json", []byte(indexData)); index != want {
		t.Errorf("search index named %s, want %s", index, want)
	}
	if left, _ := filepath.Glob(filepath.Join(out, "assets", ".*.partial")); len(left) > 0 {
		t.Errorf("partial files left in the site: %v", left)
	}
	want := []SearchDoc{
		{ID: 0, Title: "Introduction", Crumbs: []string{"Introduction"}, URL: "introduction.html#introduction", Text: "Why one writer."},
		{ID: 1, Title: "Ownership: epochs", Crumbs: []string{"Enforcing one writer", "1. Ownership"}, URL: "ownership.html", Text: "Intro."},
		{ID: 2, Title: "The rule", Crumbs: []string{"Enforcing one writer", "1. Ownership"}, URL: "ownership.html#rule", Text: "Fence."},
	}
	if fmt.Sprint(docs) != fmt.Sprint(want) {
		t.Errorf("search index\n got %+v\nwant %+v", docs, want)
	}

	// Every page loads theme.js in <head>, blocking (no defer, no async),
	// before the stylesheet: the remembered theme applies before the
	// first paint. The search index is referenced, not loaded.
	for _, p := range []string{"index.html", "ownership.html", "stream/takeover.html", "404.html", "print.html"} {
		h := read(t, filepath.Join(out, p))
		head := h[:strings.Index(h, "</head>")]
		th := regexp.MustCompile(`<script src="[^"]*assets/theme\.[0-9a-f]{8}\.js"></script>`).FindStringIndex(head)
		css := strings.Index(head, `rel="stylesheet"`)
		if th == nil || th[0] > css {
			t.Errorf("%s: theme.js is not a blocking script before the stylesheet in <head>", p)
		}
		if !strings.Contains(h, `data-search-index="`) || strings.Contains(head, "search.") {
			t.Errorf("%s: search index not referenced through data-search-index (or loaded eagerly)", p)
		}
		if regexp.MustCompile(`<script>|\sstyle="|\son[a-z]+="`).MatchString(h) {
			t.Errorf("%s: inline script, style or event handler (the CSP forbids them)", p)
		}
	}
}

// TestTemplateIDsAreReserved checks that every id the page template and the
// theme's scripts use is one render.Reserved keeps from headings, so that a
// heading such as "Help title" cannot give a page the same id twice.
func TestTemplateIDsAreReserved(t *testing.T) {
	ids := regexp.MustCompile(`\bid="([^"{]+)"|\.id = "([^"]+)"`)
	found := 0
	for _, name := range []string{"page.html", "book.js", "theme.js"} {
		data, err := fs.ReadFile(theme.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ids.FindAllStringSubmatch(string(data), -1) {
			found++
			id := m[1] + m[2]
			if strings.HasSuffix(id, "-") {
				id += "0" // "search-result-" + i
			}
			if !render.Reserved(id) {
				t.Errorf("theme/%s uses id %q, which render.ReservedIDs does not keep from headings", name, id)
			}
		}
	}
	live, err := os.ReadFile("../serve/live.js")
	if err != nil {
		t.Fatal(err)
	}
	liveIDs := ids.FindAllStringSubmatch(string(live), -1)
	for _, m := range liveIDs {
		if id := m[1] + m[2]; !render.Reserved(id) {
			t.Errorf("internal/serve/live.js uses id %q, which render.ReservedIDs does not keep from headings", id)
		}
	}
	// The template has several ids and live.js sets one; finding none means
	// the pattern no longer matches how they are written, not that all is well.
	if found < 5 || len(liveIDs) == 0 {
		t.Errorf("found %d ids in the theme and %d in live.js; the id pattern no longer matches them", found, len(liveIDs))
	}
	t.Logf("%d theme ids and %d live.js ids checked", found, len(liveIDs))
}

// copyTheme copies the embedded theme into root/theme, leaving out the
// files named in skip.
func copyTheme(t *testing.T, root string, skip ...string) {
	t.Helper()
	err := fs.WalkDir(theme.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || slices.Contains(skip, p) {
			return err
		}
		data, err := fs.ReadFile(theme.FS, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(root, "theme", filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestMissingThemeFileNamed checks that a theme/ folder missing one file
// fails the build with an error naming theme/<file> (the folder replaces the
// built-in theme as a whole) and leaves the output untouched.
func TestMissingThemeFileNamed(t *testing.T) {
	for _, missing := range []string{"theme.js", "book.css", "vendor/" + SearchLib + "/minisearch.js"} {
		b, pages := testBook(t)
		copyTheme(t, b.Root, missing)
		out := filepath.Join(t.TempDir(), "site")
		_, err := Write(b, pages, out, Options{})
		want := "theme/" + missing + ": missing: a theme/ folder with a page.html must hold the whole theme"
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("without theme/%s: err = %v, want %q...", missing, err, want)
		}
		var de *diag.Error
		if !errors.As(err, &de) || de.File != "theme/"+missing {
			t.Errorf("without theme/%s: err %v is not a *diag.Error naming the file", missing, err)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("without theme/%s: output written", missing)
		}
	}
	// The whole theme folder builds.
	b, pages := testBook(t)
	copyTheme(t, b.Root)
	if _, err := Write(b, pages, filepath.Join(t.TempDir(), "site"), Options{}); err != nil {
		t.Errorf("complete theme/: %v", err)
	}
}

// TestChapterPageCollisionNamesSummaryLine checks that a chapter whose page
// would overwrite a file copied from book/ is reported at its SUMMARY.md
// line.
func TestChapterPageCollisionNamesSummaryLine(t *testing.T) {
	b, pages := testBook(t)
	b.Chapters[1].Line = 5
	if err := os.WriteFile(filepath.Join(b.Dir, "ownership.html"), []byte("<p>old</p>"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Write(b, pages, filepath.Join(t.TempDir(), "site"), Options{})
	want := "book/SUMMARY.md:5: chapter book/ownership.md would be written to ownership.html, which another file of the site has"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err = %v, want %q...", err, want)
	}
}

// TestTemplateErrorNamesThemeLine checks that a broken theme/page.html is
// reported at its own line, as theme/page.html:N, both when it does not
// parse and when a page fails to execute it, and that nothing is written.
func TestTemplateErrorNamesThemeLine(t *testing.T) {
	for _, tc := range []struct{ insert, want string }{
		{"{{if}}", "theme/page.html:3: missing value for if"},
		{"{{.NoSuchField}}", "theme/page.html:3: writing "},
	} {
		b, pages := testBook(t)
		copyTheme(t, b.Root)
		p := filepath.Join(b.Root, "theme", "page.html")
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitN(string(src), "\n", 3)
		lines[2] = tc.insert + lines[2]
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "site")
		_, err = Write(b, pages, out, Options{})
		var de *diag.Error
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !errors.As(err, &de) || de.Line != 3 {
			t.Errorf("%s on line 3: err = %v, want a *diag.Error %q...", tc.insert, err, tc.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%s: output written", tc.insert)
		}
	}
}

// TestFailedWriteLeavesPreviousSite checks that a write that fails half way
// (as on a full disk; here a file and a folder of the same name) is an
// *OutputError naming the folder, leaves the previous site as it was and
// leaves no temporary folder beside it.
func TestFailedWriteLeavesPreviousSite(t *testing.T) {
	parent := t.TempDir()
	out := filepath.Join(parent, "site")
	if err := replaceDir(t.Context(), out, files{"index.html": []byte("old"), Marker: nil}); err != nil {
		t.Fatal(err)
	}
	// Many entries, so that some are written before the clash whatever
	// the map's order.
	broken := files{"a": []byte("file"), "a/b.html": []byte("in a folder a"), Marker: nil}
	for i := range 50 {
		broken[fmt.Sprintf("p%d.html", i)] = []byte("new")
	}
	err := replaceDir(t.Context(), out, broken)
	var oe *OutputError
	if !errors.As(err, &oe) || oe.Out != out {
		t.Fatalf("err = %v, want an *OutputError for %s", err, out)
	}
	if got, err := os.ReadFile(filepath.Join(out, "index.html")); err != nil || string(got) != "old" {
		t.Errorf("previous site changed: index.html = %q, %v", got, err)
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("beside the site: %v, want only site", names)
	}
}

// TestPrintIDsUnique checks that print.html gives every chapter's section
// an id of its own, also when two paths flatten to the same id ("a/b.md"
// and "a-b.md") or when a chapter's id would be one the page template uses
// ("content.md" and <main id="content">), that links to those chapters
// follow, and that a link to a folder keeps its trailing slash.
func TestPrintIDsUnique(t *testing.T) {
	b, _ := testBook(t)
	ab := &book.Item{Kind: book.KindChapter, Title: "AB", Path: "a/b.md"}
	adash := &book.Item{Kind: book.KindChapter, Title: "A-B", Path: "a-b.md"}
	content := &book.Item{Kind: book.KindChapter, Title: "Content", Path: "content.md"}
	b.Items = []*book.Item{ab, adash, content}
	b.Chapters = []*book.Item{ab, adash, content}
	if err := os.MkdirAll(filepath.Join(b.Dir, "img", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	pages := []*render.Page{
		{HTML: []byte(`<h1 id="x">AB</h1><p><a href="../a-b.html#x">dash</a> <a href="../content.html">content</a> <a href="../img/">folder</a></p>`), Title: "AB",
			Headings: []render.Heading{{Level: 1, ID: "x", Text: "AB"}},
			Links:    []render.Link{{Target: "a-b.md", Fragment: "x", File: "book/a/b.md", Line: 1}}},
		{HTML: []byte(`<h1 id="x">A-B</h1>`), Title: "A-B", Headings: []render.Heading{{Level: 1, ID: "x", Text: "A-B"}}},
		{HTML: []byte(`<h1 id="x">Content</h1>`), Title: "Content", Headings: []render.Heading{{Level: 1, ID: "x", Text: "Content"}}},
	}
	out := filepath.Join(t.TempDir(), "site")
	if _, err := Write(b, pages, out, Options{}); err != nil {
		t.Fatal(err)
	}
	pr := read(t, filepath.Join(out, "print.html"))
	ids := map[string]int{}
	for _, m := range regexp.MustCompile(`\sid="([^"]*)"`).FindAllStringSubmatch(pr, -1) {
		ids[m[1]]++
	}
	for id, n := range ids {
		if n > 1 {
			t.Errorf("print.html has id %q %d times", id, n)
		}
	}
	for _, want := range []string{
		`<section class="print-chapter" id="a-b"`, `<section class="print-chapter" id="a-b-2"`, `<section class="print-chapter" id="content-2"`,
		`<a href="#a-b-2--x">dash</a>`, `<a href="#content-2">content</a>`, `<a href="img/">folder</a>`,
	} {
		if !strings.Contains(pr, want) {
			t.Errorf("print.html lacks %s", want)
		}
	}
}

// TestPrintURLSamePage checks print.html's rewriting of links that stay on
// their chapter's page: "#" (the top) goes to the chapter's section, not to
// "#<chapter>--", which no element has; "?q" and "?q#x" to the section and
// its heading; "" stays as it is.
func TestPrintURLSamePage(t *testing.T) {
	chapters := map[string]string{"a/b.html": "a-b"}
	for v, want := range map[string]string{
		"#":        "#a-b",
		"#x":       "#a-b--x",
		"?q=1":     "#a-b",
		"?q=1#x":   "#a-b--x",
		"":         "",
		"c.png":    "a/c.png",
		"b.html#y": "#a-b--y",
	} {
		if got := printURL(v, "a-b", "a/b.html", chapters); got != want {
			t.Errorf("printURL(%q) = %q, want %q", v, got, want)
		}
	}
}

// TestNotFoundServedAtRoot checks 404.html's absolute links: from
// site-url's path for the deployed site, from "/" when the site is served
// at the root of its address (bookgen serve).
func TestNotFoundServedAtRoot(t *testing.T) {
	for _, tc := range []struct {
		atRoot bool
		want   string
	}{{false, `href="/book/assets/book.`}, {true, `href="/assets/book.`}} {
		b, pages := testBook(t)
		b.Config.SiteURL = "https://example.org/book/"
		out := filepath.Join(t.TempDir(), "site")
		if _, err := Write(b, pages, out, Options{ServedAtRoot: tc.atRoot}); err != nil {
			t.Fatal(err)
		}
		if nf := read(t, filepath.Join(out, "404.html")); !strings.Contains(nf, tc.want) {
			t.Errorf("ServedAtRoot %v: 404.html lacks %s", tc.atRoot, tc.want)
		}
	}
}
