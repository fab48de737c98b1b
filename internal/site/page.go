package site

import (
	"bytes"
	"fmt"
	"html/template"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/render"
)

// tocEntry is one line of the sidebar.
type tocEntry struct {
	Kind     string // "chapter", "part" or "separator"
	Number   string // "2.1." for numbered chapters, "" otherwise
	Title    string
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
	SearchIndex string // the search index (JSON), relative to the page
	SearchLib   string // the search library, relative to the page
	IsIndex     bool
	IsPrint     bool // print.html: the whole book
	IsNotFound  bool // 404.html
	// LongTOC is set for chapters with at least LongChapter headings of
	// level 2 and 3: they get an in-page table of contents at the top too
	// (shown where the "On this page" column does not fit).
	LongTOC    bool
	TOC        []tocEntry
	Lead       template.HTML // the chapter's body up to its first </h1>, when LongTOC
	Content    template.HTML // the (rest of the) body
	Prev, Next *navLink
	OnThisPage []render.Heading // level 2 and 3 headings
}

// page renders chapter i of b at the site path of the Markdown path mdPath
// ("index.md" for the site's index).
func page(tmpl *template.Template, b *book.Book, pages []*render.Page, i int, mdPath string, a assets) ([]byte, error) {
	ch := b.Chapters[i]
	pg := pages[i]
	sitePath := htmlPath(mdPath)
	isIndex := sitePath == "index.html" && ch.Path != "index.md"
	if isIndex && strings.Contains(ch.Path, "/") {
		// The first chapter lives in a folder: its relative links only work
		// there, so the index sends the reader to it.
		return redirect(htmlPath(ch.Path), ch.Title), nil
	}
	root := relRoot(sitePath)
	d := common(b, root, a)
	d.Title = pg.Title
	d.IsIndex = isIndex
	d.TOC = toc(b.Items, ch, root)
	d.Content = template.HTML(pg.HTML)
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
	for _, h := range pg.Headings {
		if (h.Level == 2 || h.Level == 3) && h.ID != "" {
			d.OnThisPage = append(d.OnThisPage, h)
		}
	}
	d.LongTOC = len(d.OnThisPage) >= LongChapter
	if d.LongTOC {
		// The in-page table of contents goes below the chapter's title.
		if i := bytes.Index(pg.HTML, []byte("</h1>")); i >= 0 {
			d.Lead = template.HTML(pg.HTML[:i+len("</h1>")])
			d.Content = template.HTML(pg.HTML[i+len("</h1>"):])
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
func notFound(tmpl *template.Template, b *book.Book, a assets, servedAtRoot bool) ([]byte, error) {
	root := "/"
	if u, err := url.Parse(b.Config.SiteURL); err == nil && u.Path != "" && !servedAtRoot {
		root = u.Path
		if !strings.HasSuffix(root, "/") {
			root += "/"
		}
	}
	d := common(b, root, a)
	d.Title = "Page not found"
	d.IsNotFound = true
	d.TOC = toc(b.Items, nil, root)
	d.Description = b.Config.Description
	first := b.Chapters[0]
	d.Content = template.HTML(fmt.Sprintf(
		"<h1 id=\"page-not-found\">Page not found</h1>\n<p>There is no page at this address. It may have moved when the book was reorganised.</p>\n<p>Start from <a href=\"%s\">%s</a>, or pick a chapter from the list.</p>\n",
		template.HTMLEscapeString(root+htmlPath(first.Path)), template.HTMLEscapeString(first.Title)))
	return execute(tmpl, d, "404.html")
}

func execute(tmpl *template.Template, d *pageData, sitePath string) ([]byte, error) {
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, d); err != nil {
		return nil, templateError(err, sitePath)
	}
	return buf.Bytes(), nil
}

// redirect is a page that sends the browser to target.
func redirect(target, title string) []byte {
	t := template.HTMLEscapeString(target)
	return []byte("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + template.HTMLEscapeString(title) +
		"</title><meta http-equiv=\"refresh\" content=\"0; url=" + t + "\"><link rel=\"canonical\" href=\"" + t +
		"\"></head><body><p><a href=\"" + t + "\">" + template.HTMLEscapeString(title) + "</a></p></body></html>\n")
}

// toc builds the sidebar for the page of chapter cur (nil: no current page).
func toc(items []*book.Item, cur *book.Item, root string) []tocEntry {
	var out []tocEntry
	for _, it := range items {
		switch it.Kind {
		case book.KindPartTitle:
			out = append(out, tocEntry{Kind: "part", Title: it.Title})
		case book.KindSeparator:
			out = append(out, tocEntry{Kind: "separator"})
		default:
			e := tocEntry{
				Kind:    "chapter",
				Number:  numberString(it.Number),
				Title:   it.Title,
				Current: it == cur,
				Draft:   it.Draft || it.Path == "",
			}
			if !e.Draft {
				e.URL = root + htmlPath(it.Path)
			}
			e.Children = toc(it.Children, cur, root)
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
