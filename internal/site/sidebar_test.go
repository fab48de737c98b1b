package site

import (
	"fmt"
	"html/template"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/render"
	"github.com/ownership-book/ownership/theme"
)

// bigBook is a book of n chapters, every tenth in a folder one level down
// and every seventh with a nested chapter.
func bigBook(t testing.TB, n int) (*book.Book, []*render.Page) {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "book"), 0o755); err != nil {
		t.Fatal(err)
	}
	b := &book.Book{Root: root, Dir: filepath.Join(root, "book"), Config: book.Config{Title: "Big"}}
	var pages []*render.Page
	add := func(it *book.Item) {
		b.Chapters = append(b.Chapters, it)
		id := strings.TrimSuffix(filepath.Base(it.Path), ".md")
		pages = append(pages, &render.Page{HTML: []byte(`<h1 id="` + id + `">` + it.Title + `</h1>`), Title: it.Title,
			Headings: []render.Heading{{Level: 1, ID: id, Text: it.Title}}})
	}
	for i := 1; len(b.Chapters) < n; i++ {
		p := fmt.Sprintf("c%04d.md", i)
		if i%10 == 0 {
			p = fmt.Sprintf("part/c%04d.md", i)
		}
		it := &book.Item{Kind: book.KindChapter, Section: book.Numbered, Title: fmt.Sprintf("Chapter <%d>", i), Path: p, Number: []int{i}}
		b.Items = append(b.Items, it)
		add(it)
		if i%7 == 0 && len(b.Chapters) < n {
			sub := &book.Item{Kind: book.KindChapter, Section: book.Numbered, Title: fmt.Sprintf("Sub %d", i), Path: fmt.Sprintf("sub/s%04d.md", i), Number: []int{i, 1}}
			it.Children = []*book.Item{sub}
			add(sub)
		}
	}
	return b, pages
}

var ariaCurrent = regexp.MustCompile(`<a href="([^"]*)" aria-current="page">`)

// TestSidebarRenderedOnceMatchesPerPage checks that the sidebar rendered
// once per depth (sidebars) gives each page exactly what executing the
// theme's "toc" template for that page gives: the same HTML, with only the
// page's own link marked current, at every folder depth.
func TestSidebarRenderedOnceMatchesPerPage(t *testing.T) {
	b, pages := bigBook(t, 60)
	out := filepath.Join(t.TempDir(), "site")
	if _, err := Write(b, pages, out, Options{}); err != nil {
		t.Fatal(err)
	}
	tmpl := parseTheme(t)
	for _, ch := range b.Chapters {
		page := read(t, filepath.Join(out, filepath.FromSlash(htmlPath(ch.Path))))
		root := relRoot(htmlPath(ch.Path))
		var want strings.Builder
		if err := tmpl.ExecuteTemplate(&want, "toc", toc(b.Items, ch, root)); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(page, want.String()) {
			t.Fatalf("%s: the sidebar differs from the per-page rendering", ch.Path)
		}
		m := ariaCurrent.FindAllStringSubmatch(page, -1)
		if len(m) != 1 || m[0][1] != root+htmlPath(ch.Path) {
			t.Errorf("%s: current links %v, want one to %s", ch.Path, m, root+htmlPath(ch.Path))
		}
	}
}

// TestLargeBookSharesItsSidebar checks that past InlineSidebarMax chapters
// the pages load one shared sidebar script instead of carrying the whole
// sidebar, that the script holds every chapter, and that readers without
// JavaScript get a table of contents page linking every chapter.
func TestLargeBookSharesItsSidebar(t *testing.T) {
	b, pages := bigBook(t, InlineSidebarMax+1)
	out := filepath.Join(t.TempDir(), "site")
	res, err := Write(b, pages, out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var script string
	for _, f := range res.Files {
		if strings.HasPrefix(f, "assets/toc.") && strings.HasSuffix(f, ".js") {
			script = f
		}
	}
	if script == "" {
		t.Fatalf("no assets/toc.*.js among %d files", len(res.Files))
	}
	js := read(t, filepath.Join(out, script))
	contents := read(t, filepath.Join(out, "toc.html"))
	for _, ch := range b.Chapters {
		u := htmlPath(ch.Path)
		if !strings.Contains(js, `href=\"`+u+`\"`) {
			t.Fatalf("%s: no link to %s", script, u)
		}
		if !strings.Contains(contents, `href="`+u+`"`) {
			t.Fatalf("toc.html: no link to %s", u)
		}
	}
	deep := b.Chapters[len(b.Chapters)-1]
	for _, ch := range []*book.Item{b.Chapters[0], deep} {
		page := read(t, filepath.Join(out, filepath.FromSlash(htmlPath(ch.Path))))
		root := relRoot(htmlPath(ch.Path))
		if n := strings.Count(page, `class="chapter-item"`); n != 0 {
			t.Errorf("%s carries %d sidebar entries, want none (shared)", ch.Path, n)
		}
		if !strings.Contains(page, `<script src="`+root+script+`"></script>`) {
			t.Errorf("%s does not load %s%s", ch.Path, root, script)
		}
		if !strings.Contains(page, `<noscript><p class="toc-noscript"><a href="`+root+`toc.html">`) {
			t.Errorf("%s has no link to the table of contents for readers without JavaScript", ch.Path)
		}
	}
}

// TestSmallBookInlinesItsSidebar checks that up to InlineSidebarMax
// chapters every page carries the whole sidebar and no script is written.
func TestSmallBookInlinesItsSidebar(t *testing.T) {
	b, pages := bigBook(t, InlineSidebarMax)
	out := filepath.Join(t.TempDir(), "site")
	res, err := Write(b, pages, out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Files {
		if strings.HasPrefix(f, "assets/toc.") || f == "toc.html" {
			t.Errorf("a book of %d chapters got %s", InlineSidebarMax, f)
		}
	}
	page := read(t, filepath.Join(out, htmlPath(b.Chapters[0].Path)))
	if n := strings.Count(page, `class="chapter-item"`); n != len(b.Chapters) {
		t.Errorf("first page carries %d sidebar entries, want %d", n, len(b.Chapters))
	}
}

// parseTheme parses the embedded theme's page template.
func parseTheme(t testing.TB) *template.Template {
	t.Helper()
	text, err := fs.ReadFile(theme.FS, "page.html")
	if err != nil {
		t.Fatal(err)
	}
	return template.Must(template.New("page.html").Parse(string(text)))
}
