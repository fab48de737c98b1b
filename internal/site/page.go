package site

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/render"
)

// tocEntry is one line of the sidebar.
type tocEntry struct {
	Kind   string // "chapter", "part" or "separator"
	Number string // "2.1." for numbered chapters, "" otherwise
	// Title is the entry's title as HTML: a chapter's inline Markdown
	// rendered (book.Item.TitleHTML), a part title escaped.
	Title    template.HTML
	URL      string // relative to the page, "" for a draft
	Current  bool
	Draft    bool
	Children []tocEntry
}

// navLink is a previous or next link.
type navLink struct{ URL, Title string }

// pageData is what theme/page.html receives.
type pageData struct {
	Lang        string
	BookTitle   string
	Title       string // the chapter's title
	Description string // for <meta name="description">
	Canonical   string // absolute URL of the page, "" without a site URL
	Authors     string
	Repository  string
	EditURL     string // "" without an edit URL template
	Root        string // relative path to the site root: "", "../", ...
	CSS, JS     string // asset URLs, relative to the page
	ThemeJS     string // the script that sets the remembered theme before the first paint
	// RunJS is the script of the run panels (theme/run.js), "" on a page
	// without any.
	RunJS       string
	SearchIndex string // the search index (JSON), relative to the page
	SearchLib   string // the search library, relative to the page
	IsIndex     bool
	// FragmentRedirects is the JSON object of the page's
	// [output.html.redirect] keys with a #fragment ({"#old":
	// "new.html#x"}, see fragmentMap), "" when none; theme.js sends a
	// reader who arrives with one of them on.
	FragmentRedirects string
	IsPrint           bool // print.html: the whole book
	IsNotFound        bool // 404.html
	// LongTOC is set for chapters with at least LongChapter headings of
	// level 2 and 3: they get an in-page table of contents at the top too
	// (shown where the "On this page" column does not fit).
	LongTOC bool
	TOC     []tocEntry
	// Sidebar is the sidebar already rendered (see sidebars), for themes
	// whose page.html writes {{.Sidebar}}; TOC is then nil.
	Sidebar    template.HTML
	Lead       template.HTML // the chapter's body up to its first </h1>, when LongTOC
	Content    template.HTML // the (rest of the) body
	Prev, Next *navLink
	OnThisPage []render.Heading // level 2 and 3 headings
}

// page renders chapter i of b at the site path of the Markdown path mdPath
// ("index.md" for the site's index).
func page(tmpl *template.Template, sb *sidebars, b *book.Book, pages []*render.Page, i int, mdPath string, a assets) ([]byte, error) {
	ch := b.Chapters[i]
	pg := pages[i]
	sitePath := htmlPath(mdPath)
	isIndex := sitePath == "index.html" && htmlPath(ch.Path) != "index.html"
	if isIndex && strings.Contains(ch.Path, "/") {
		// The first chapter lives in a folder: its relative links only work
		// there, so the index sends the reader to it.
		return redirect(htmlPath(ch.Path), ch.Title), nil
	}
	root := relRoot(sitePath)
	d := common(b, root, a)
	d.Title = pg.Title
	d.IsIndex = isIndex
	d.FragmentRedirects = fragmentMap(b, sitePath)
	if sb != nil {
		html, ok, err := sb.html(root, ch)
		if err != nil {
			return nil, templateError(err, sitePath)
		}
		d.Sidebar = html
		if !ok {
			d.TOC = toc(b.Items, ch, root)
		}
	} else {
		d.TOC = toc(b.Items, ch, root)
	}
	body, err := pg.Body()
	if err != nil {
		return nil, err
	}
	d.Content = template.HTML(body)
	d.Description = describe(pg.Summary, b.Config.Description)
	if isIndex && b.Config.Description != "" {
		d.Description = b.Config.Description
	}
	if b.Config.SiteURL != "" {
		if isIndex {
			d.Canonical = b.Config.SiteURL
		} else {
			d.Canonical = b.Config.SiteURL + sitePath
		}
	}
	if t := b.Config.EditURLTemplate; t != "" && ch.File() != "" {
		d.EditURL = strings.ReplaceAll(t, "{path}", ch.File())
	}
	if i > 0 {
		p := b.Chapters[i-1]
		d.Prev = &navLink{URL: root + htmlPath(p.Path), Title: p.Title}
	}
	if i+1 < len(b.Chapters) {
		n := b.Chapters[i+1]
		d.Next = &navLink{URL: root + htmlPath(n.Path), Title: n.Title}
	}
	if len(pg.Files) > 0 && a.runJS != "" {
		d.RunJS = root + a.runJS
	}
	for _, h := range pg.Headings {
		if (h.Level == 2 || h.Level == 3) && h.ID != "" {
			d.OnThisPage = append(d.OnThisPage, h)
		}
	}
	d.LongTOC = len(d.OnThisPage) >= LongChapter
	if d.LongTOC {
		// The in-page table of contents goes below the chapter's title.
		if i := bytes.Index(body, []byte("</h1>")); i >= 0 {
			d.Lead = template.HTML(body[:i+len("</h1>")])
			d.Content = template.HTML(body[i+len("</h1>"):])
		}
	}
	return execute(tmpl, d, sitePath)
}

// LongChapter is how many level-2 and level-3 headings make a chapter long
// enough for an in-page table of contents at its top.
const LongChapter = 4

// common fills the fields every page shares.
func common(b *book.Book, root string, a assets) *pageData {
	lang := b.Config.Language
	if lang == "" {
		lang = "en"
	}
	title := b.Config.Title
	if title == "" {
		title = b.Title
	}
	return &pageData{
		Lang:        lang,
		BookTitle:   title,
		Authors:     strings.Join(b.Config.Authors, ", "),
		Repository:  b.Config.Repository,
		Root:        root,
		CSS:         root + a.css,
		JS:          root + a.js,
		ThemeJS:     root + a.themeJS,
		SearchIndex: root + a.search,
		SearchLib:   root + a.searchLib,
	}
}

// notFound renders 404.html. It is served for any missing path, so its links
// are absolute from the site URL's path ("/" when unset or servedAtRoot).
func notFound(tmpl *template.Template, b *book.Book, a assets, servedAtRoot bool, nf *render.Page) ([]byte, error) {
	root := "/"
	if !servedAtRoot {
		root = sitePath(b)
	}
	d := common(b, root, a)
	d.Title = "Page not found"
	d.IsNotFound = true
	d.TOC = toc(b.Items, nil, root)
	d.Description = b.Config.Description
	first := b.Chapters[0]
	if nf != nil {
		// The book's own 404 page (mdBook's src/404.md), written for
		// the site root: its relative links are made absolute.
		d.Title = nf.Title
		d.Content = template.HTML(absolutize(nf.HTML, root))
		return execute(tmpl, d, "404.html")
	}
	d.Content = template.HTML(fmt.Sprintf(
		"<h1 id=\"page-not-found\">Page not found</h1>\n<p>There is no page at this address. It may have moved when the book was reorganised.</p>\n<p>Start from <a href=\"%s\">%s</a>, or pick a chapter from the list.</p>\n",
		template.HTMLEscapeString(root+htmlPath(first.Path)), template.HTMLEscapeString(first.Title)))
	return execute(tmpl, d, "404.html")
}

// absolutize prefixes every relative href and src of html (rendered for a
// page at the site root) with root, the site's path ("/book/").
func absolutize(html []byte, root string) []byte {
	return replaceAttrs(html, func(name, v, out []byte) []byte {
		s := string(v)
		u, err := url.Parse(strings.ReplaceAll(s, "&amp;", "&"))
		if string(name) == "id" || err != nil || u.Scheme != "" || u.Host != "" || s == "" || strings.HasPrefix(s, "#") || strings.HasPrefix(s, "/") {
			return append(out, v...)
		}
		return append(append(out, root...), strings.TrimPrefix(s, "./")...)
	})
}

// titleHTML returns the sidebar title of a chapter: its Markdown rendered,
// or its plain title escaped when the Item was not made by ParseSummary.
func titleHTML(it *book.Item) template.HTML {
	if it.TitleHTML != "" {
		return template.HTML(it.TitleHTML)
	}
	return template.HTML(template.HTMLEscapeString(it.Title))
}

// sitePath returns the path the site is served under ("/", "/book/"): the
// Config's SitePath, or the path of its SiteURL when SitePath is unset (a
// Config not made by book.ParseConfig).
func sitePath(b *book.Book) string {
	p := b.Config.SitePath
	if p == "" {
		if u, err := url.Parse(b.Config.SiteURL); err == nil {
			p = u.Path
		}
	}
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	if !strings.HasSuffix(p, "/") {
		p += "/"
	}
	return p
}

func execute(tmpl *template.Template, d *pageData, sitePath string) ([]byte, error) {
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, d); err != nil {
		return nil, templateError(err, sitePath)
	}
	return buf.Bytes(), nil
}

// redirect is a page at the site's root that sends the browser to target.
// It names the site's icon, so that the browser does not ask for
// favicon.ico (a 404) while it moves on.
func redirect(target, title string) []byte {
	t := template.HTMLEscapeString(target)
	return []byte("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + template.HTMLEscapeString(title) +
		"</title><link rel=\"icon\" href=\"favicon.svg\" type=\"image/svg+xml\"><meta http-equiv=\"refresh\" content=\"0; url=" + t + "\"><link rel=\"canonical\" href=\"" + t +
		"\"></head><body><p><a href=\"" + t + "\">" + template.HTMLEscapeString(title) + "</a></p></body></html>\n")
}

// toc builds the sidebar for the page of chapter cur (nil: no current page).
func toc(items []*book.Item, cur *book.Item, root string) []tocEntry {
	entries := tocWith(items, func(it *book.Item) string { return root + htmlPath(it.Path) })
	markCurrent(entries, items, cur)
	return entries
}

// markCurrent sets Current on the entry of cur; entries mirror items.
func markCurrent(entries []tocEntry, items []*book.Item, cur *book.Item) {
	k := 0
	for _, it := range items {
		if k >= len(entries) {
			return
		}
		if it.Kind != book.KindPartTitle && it.Kind != book.KindSeparator {
			entries[k].Current = it == cur
			markCurrent(entries[k].Children, it.Children, cur)
		}
		k++
	}
}

// tocWith builds the sidebar's entries with url giving each chapter's URL.
func tocWith(items []*book.Item, url func(*book.Item) string) []tocEntry {
	var out []tocEntry
	for _, it := range items {
		switch it.Kind {
		case book.KindPartTitle:
			out = append(out, tocEntry{Kind: "part", Title: template.HTML(template.HTMLEscapeString(it.Title))})
		case book.KindSeparator:
			out = append(out, tocEntry{Kind: "separator"})
		default:
			e := tocEntry{
				Kind:   "chapter",
				Number: numberString(it.Number),
				Title:  titleHTML(it),
				Draft:  it.Draft || it.Path == "",
			}
			if !e.Draft {
				e.URL = url(it)
			}
			e.Children = tocWith(it.Children, url)
			out = append(out, e)
		}
	}
	return out
}

// describe shortens a chapter's first paragraph to at most about 160
// characters, cut at a word; it returns fallback for an empty summary.
func describe(summary, fallback string) string {
	if summary == "" {
		return fallback
	}
	const max = 160
	if utf8.RuneCountInString(summary) <= max {
		return summary
	}
	r := []rune(summary)[:max]
	s := string(r)
	if i := strings.LastIndexByte(s, ' '); i > max/2 {
		s = s[:i]
	}
	return strings.TrimRight(s, " ,;:.") + "…"
}

// sidebars renders the sidebar once per depth of page in the site (the
// relative path to the root, "" or "../", ...) instead of once per page:
// the theme's "toc" template is executed with a marker in place of every
// chapter's URL, the output is cut at the markers, and each page joins the
// pieces with the real URLs, marking its own link aria-current="page".
// A book of N chapters thus costs N template walks per depth rather than
// N per page.
type sidebars struct {
	// script, when set, is the site path of the shared sidebar script
	// (see InlineSidebarMax) and contents that of the table of contents
	// page for readers without JavaScript.
	script, contents string

	tmpl   *template.Template
	items  []*book.Item
	chaps  []*book.Item // chapters in marker order
	mu     sync.Mutex
	byRoot map[string]*sidebarParts
}

// sidebarParts is one depth's sidebar: segs[k] is followed by the URL of
// chaps[marks[k]]; the last segment ends the sidebar.
type sidebarParts struct {
	segs  [][]byte
	marks []int
	href  []bool   // the marker k was a whole href="..." value
	urls  [][]byte // escaped URL per chapter index
}

// markerPrefix starts the placeholder URL of chapter k ("bookgen-toc-7.html").
// It is a relative URL of plain characters, so html/template writes it
// unchanged wherever the theme puts the URL.
const markerPrefix = "bookgen-toc-"

func newSidebars(tmpl *template.Template, items []*book.Item) *sidebars {
	s := &sidebars{tmpl: tmpl, items: items, byRoot: map[string]*sidebarParts{}}
	var walk func([]*book.Item)
	walk = func(its []*book.Item) {
		for _, it := range its {
			if it.Kind != book.KindPartTitle && it.Kind != book.KindSeparator && !(it.Draft || it.Path == "") {
				s.chaps = append(s.chaps, it)
			}
			walk(it.Children)
		}
	}
	walk(items)
	return s
}

// html returns the sidebar of a page at depth root whose chapter is cur, or
// ok == false when the theme's "toc" template does not write each URL once
// as it was given (then the page renders the sidebar itself).
func (s *sidebars) html(root string, cur *book.Item) (template.HTML, bool, error) {
	if s.script != "" {
		return template.HTML(`<script src="` + template.HTMLEscapeString(root+s.script) + `"></script>` +
			`<noscript><p class="toc-noscript"><a href="` + template.HTMLEscapeString(root+s.contents) + `">Table of contents</a></p></noscript>`), true, nil
	}
	p, err := s.parts(root)
	if err != nil || p == nil {
		return "", false, err
	}
	size := 0
	for _, seg := range p.segs {
		size += len(seg)
	}
	var b strings.Builder
	b.Grow(size + len(p.marks)*48)
	for k, seg := range p.segs {
		b.Write(seg)
		if k == len(p.marks) {
			break
		}
		i := p.marks[k]
		b.Write(p.urls[i])
		if p.href[k] && s.chaps[i] == cur {
			b.WriteString(`" aria-current="page`)
		}
	}
	return template.HTML(b.String()), true, nil
}

func (s *sidebars) parts(root string) (*sidebarParts, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.byRoot[root]; ok {
		return p, nil
	}
	p, err := s.build(root)
	if err != nil {
		return nil, err
	}
	s.byRoot[root] = p
	return p, nil
}

func (s *sidebars) build(root string) (*sidebarParts, error) {
	index := map[*book.Item]int{}
	for i, c := range s.chaps {
		index[c] = i
	}
	entries := tocWith(s.items, func(it *book.Item) string { return markerPrefix + strconv.Itoa(index[it]) + ".html" })
	var out bytes.Buffer
	if err := s.tmpl.ExecuteTemplate(&out, "toc", entries); err != nil {
		return nil, nil // the theme has no usable "toc": let the page render its sidebar
	}
	p := &sidebarParts{urls: make([][]byte, len(s.chaps))}
	esc := template.Must(template.New("href").Parse(`<a href="{{.}}">`))
	for i, c := range s.chaps {
		var b bytes.Buffer
		if err := esc.Execute(&b, root+htmlPath(c.Path)); err != nil {
			return nil, err
		}
		v := b.Bytes()
		p.urls[i] = v[len(`<a href="`) : len(v)-len(`">`)]
	}
	seen := make([]bool, len(s.chaps))
	rest := out.Bytes()
	for {
		j := bytes.Index(rest, []byte(markerPrefix))
		if j < 0 {
			break
		}
		k := j + len(markerPrefix)
		n := k
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		i, err := strconv.Atoi(string(rest[k:n]))
		if err != nil || i >= len(s.chaps) || seen[i] || !bytes.HasPrefix(rest[n:], []byte(".html")) {
			return nil, nil
		}
		seen[i] = true
		end := n + len(".html")
		p.segs = append(p.segs, rest[:j])
		p.marks = append(p.marks, i)
		p.href = append(p.href, bytes.HasSuffix(rest[:j], []byte(`href="`)) && bytes.HasPrefix(rest[end:], []byte(`"`)))
		rest = rest[end:]
	}
	p.segs = append(p.segs, rest)
	for _, ok := range seen {
		if !ok {
			return nil, nil
		}
	}
	return p, nil
}

// InlineSidebarMax is the number of chapters up to which every page carries
// the whole sidebar. A larger book's pages load it from one shared script
// (assets/toc.<hash>.js, cached by the browser), as mdBook's toc.js does,
// so that a page's size and the build's time per page do not grow with the
// book; without JavaScript such a page links to the table of contents page
// (toc.html) instead.
const InlineSidebarMax = 300

// sharedScript returns the script that writes the whole sidebar where it
// stands (inside <nav class="sidebar">): the sidebar rendered for the site
// root, its relative links prefixed with the page's data-root, the current
// page's link marked aria-current="page". It returns ok == false when the
// theme's sidebar cannot be rendered once (see html).
func (s *sidebars) sharedScript() ([]byte, bool, error) {
	p, err := s.parts("")
	if err != nil || p == nil {
		return nil, false, err
	}
	var b strings.Builder
	for k, seg := range p.segs {
		b.Write(seg)
		if k < len(p.marks) {
			b.Write(p.urls[p.marks[k]])
		}
	}
	html, err := json.Marshal(b.String())
	if err != nil {
		return nil, false, err
	}
	return []byte(`// The sidebar of this book, written by bookgen and shared by every page.
(function () {
  var script = document.currentScript, nav = script && script.parentNode;
  if (!nav) return;
  var root = document.body.getAttribute("data-root") || "";
  var t = document.createElement("template");
  t.innerHTML = ` + string(html) + `;
  var here = location.href.split("#")[0].split("?")[0];
  var index = /\/(index\.html)?$/.test(here) && root === "";
  var links = t.content.querySelectorAll("a[href]");
  for (var i = 0; i < links.length; i++) {
    var a = links[i], h = a.getAttribute("href");
    if (!/^(?:[a-z][a-z0-9+.-]*:|\/|#)/i.test(h)) a.setAttribute("href", root + h);
    // Links inside a template are not resolved against the page: resolve them here.
    if (new URL(a.getAttribute("href"), document.baseURI).href === here || (index && i === 0)) a.setAttribute("aria-current", "page");
  }
  nav.insertBefore(t.content, script);
})();
`), true, nil
}

// contentsPage is the table of contents for readers without JavaScript of
// a book whose sidebar is shared (InlineSidebarMax): the whole sidebar as
// the page's content.
func (s *sidebars) contentsPage(tmpl *template.Template, b *book.Book, a assets, name string) ([]byte, error) {
	d := common(b, relRoot(name), a)
	d.Title = "Table of contents"
	d.Description = b.Config.Description
	d.TOC = toc(b.Items, nil, relRoot(name))
	side, _, err := s.html(relRoot(name), nil)
	if err != nil {
		return nil, err
	}
	d.Sidebar = side
	var body bytes.Buffer
	body.WriteString("<h1 id=\"table-of-contents\">Table of contents</h1>\n")
	if err := tmpl.ExecuteTemplate(&body, "toc", d.TOC); err != nil {
		return nil, templateError(err, name)
	}
	d.Content = template.HTML(body.String())
	return execute(tmpl, d, name)
}
