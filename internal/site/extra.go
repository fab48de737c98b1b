package site

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"html/template"
	"io"
	"net/url"
	"path"
	"strings"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/render"
)

// SearchLib is the folder of the vendored search library inside the theme
// (theme/vendor/) and inside the site's assets/vendor/; its name carries the
// version, so the site may cache it forever.
const SearchLib = "minisearch-7.2.0"

// SearchDoc is one entry of the search index (assets/search.<hash>.json): a
// heading's section of a chapter. Field names are short because the index
// is downloaded whole the first time a reader opens search.
type SearchDoc struct {
	ID     int      `json:"id"`
	Title  string   `json:"t"` // the heading's text (the chapter title for text before the first heading)
	Crumbs []string `json:"b"` // part title (if any), numbered chapter title
	URL    string   `json:"u"` // relative to the site root, with "#anchor" for a section
	Text   string   `json:"x"` // the section's plain text
}

// searchIndex builds the index: one entry per section of every chapter,
// in reading order (see writeSearchIndex).
func searchIndex(b *book.Book, pages []*render.Page) ([]byte, error) {
	var buf bytes.Buffer
	if err := writeSearchIndex(&buf, b, pages); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeSearchIndex writes the index to w: a JSON array of SearchDoc, one
// per section of every chapter in reading order, then a newline ("null"
// when no chapter is searched). It is encoded one entry at a time, so
// that the index of a large book (hundreds of megabytes of JSON at 25,000
// chapters) is never held in memory whole.
func writeSearchIndex(w io.Writer, b *book.Book, pages []*render.Page) error {
	parts := partTitles(b.Items, "", map[*book.Item]string{})
	parents := parentTitles(b.Items, nil, map[*book.Item][]string{})
	var entry bytes.Buffer
	enc := json.NewEncoder(&entry)
	enc.SetEscapeHTML(false)
	n := 0
	for i, ch := range b.Chapters {
		if !b.Config.SearchEnabled(ch.Path) {
			continue // [output.html.search.chapter] "path/" = { enable = false }
		}
		crumbs := []string{}
		if p := parts[ch]; p != "" {
			crumbs = append(crumbs, p)
		}
		crumbs = append(crumbs, parents[ch]...)
		// The chapter's SUMMARY.md title, as the sidebar names it and as
		// mdBook's breadcrumbs do (Chapter.name), not its # heading.
		crumbs = append(crumbs, strings.TrimSpace(numberString(ch.Number)+" "+ch.Title))
		for k, s := range pages[i].Sections {
			u := htmlPath(ch.Path)
			if s.Anchor != "" {
				u += "#" + s.Anchor
			}
			text, err := pages[i].SectionText(k)
			if err != nil {
				return err
			}
			entry.Reset()
			if err := enc.Encode(SearchDoc{ID: n, Title: s.Title, Crumbs: crumbs, URL: u, Text: text}); err != nil {
				return err
			}
			sep := ","
			if n == 0 {
				sep = "["
			}
			if _, err := io.WriteString(w, sep); err != nil {
				return err
			}
			if _, err := w.Write(bytes.TrimSuffix(entry.Bytes(), []byte("\n"))); err != nil {
				return err
			}
			n++
		}
	}
	end := "]\n"
	if n == 0 {
		end = "null\n"
	}
	_, err := io.WriteString(w, end)
	return err
}

// parentTitles maps every chapter to the titles of the chapters it is nested
// under, outermost first ("1. Ownership", "1.2. Epochs"), as mdBook's search
// breadcrumbs name a chapter's parents (Chapter.parent_names).
func parentTitles(items []*book.Item, above []string, out map[*book.Item][]string) map[*book.Item][]string {
	for _, it := range items {
		if it.Kind != book.KindChapter {
			continue
		}
		out[it] = above
		if len(it.Children) > 0 {
			next := append(above[:len(above):len(above)], strings.TrimSpace(numberString(it.Number)+" "+it.Title))
			parentTitles(it.Children, next, out)
		}
	}
	return out
}

// partTitles maps every chapter to the part title above it ("" before the
// first part title).
func partTitles(items []*book.Item, cur string, out map[*book.Item]string) map[*book.Item]string {
	for _, it := range items {
		switch it.Kind {
		case book.KindPartTitle:
			cur = it.Title
		case book.KindChapter:
			out[it] = cur
			partTitles(it.Children, cur, out)
		}
	}
	return out
}

// sitemap returns sitemap.xml (https://www.sitemaps.org/protocol.html) for
// a book with a site URL: the site root and every chapter page. It has no
// <lastmod>, so that the same book gives the same file.
func sitemap(b *book.Book) ([]byte, error) {
	type loc struct {
		Loc string `xml:"loc"`
	}
	type urlset struct {
		XMLName xml.Name `xml:"urlset"`
		NS      string   `xml:"xmlns,attr"`
		URLs    []loc    `xml:"url"`
	}
	base := b.Config.SiteURL
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	set := urlset{NS: "http://www.sitemaps.org/schemas/sitemap/0.9", URLs: []loc{{base}}}
	for _, ch := range b.Chapters {
		set.URLs = append(set.URLs, loc{base + (&url.URL{Path: htmlPath(ch.Path)}).EscapedPath()})
	}
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	enc := xml.NewEncoder(&buf)
	enc.Indent("", "  ")
	if err := enc.Encode(set); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// printID is the id of chapter p's section in print.html: "stream/takeover.md"
// is "stream-takeover"; an element "x" of that chapter becomes
// "stream-takeover--x". printIDs makes the ids of a whole book unique.
func printID(p string) string {
	return strings.ReplaceAll(strings.TrimSuffix(p, ".md"), "/", "-")
}

// printIDs maps the site path of every chapter (htmlPath) to the id of its
// section in print.html: printID of its path, with "-2", "-3", ... added
// when that id is already taken by an earlier chapter ("a/b.md" and
// "a-b.md") or by the page template ("content.md" and <main id="content">).
func printIDs(chapters []*book.Item) map[string]string {
	ids := map[string]string{}
	used := map[string]bool{}
	for _, ch := range chapters {
		base := printID(ch.Path)
		id := base
		for n := 2; used[id] || render.Reserved(id); n++ {
			id = fmt.Sprintf("%s-%d", base, n)
		}
		used[id] = true
		ids[htmlPath(ch.Path)] = id
	}
	return ids
}

// svgRefAttrs are the SVG attributes whose url(#id) value refers to an
// element of the page (a figure's masks and arrowheads).
var svgRefAttrs = []string{"mask", "marker-start", "marker-mid", "marker-end", "clip-path", "filter", "fill", "stroke"}

// printChapter rewrites the HTML of chapter ch for print.html, which sits at
// the site root: ids get the chapter's prefix (and so do the url(#id)
// references of figures' SVG attributes), links to chapters become
// links to their sections in the same page, other relative URLs are made
// relative to the root.
func printChapter(ch *book.Item, html []byte, chapters map[string]string) []byte {
	sitePath := htmlPath(ch.Path)
	prefix := chapters[sitePath]
	return replaceAttrs(html, func(name, v []byte, out []byte) []byte {
		switch n := string(name); {
		case n == "id":
			out = append(out, prefix...)
			out = append(out, "--"...)
			return append(out, v...)
		case n == "href" || n == "src":
			return append(out, printURL(string(v), prefix, sitePath, chapters)...)
		}
		// The ids moved, so a figure's url(#id) references move too.
		if id, ok := bytes.CutPrefix(v, []byte("url(#")); ok && bytes.HasSuffix(id, []byte(")")) {
			out = append(out, "url(#"...)
			out = append(out, prefix...)
			out = append(out, "--"...)
			return append(out, id...)
		}
		return append(out, v...)
	})
}

// replaceAttrs copies html, passing the value of every id, href and src
// attribute, and of the SVG attributes that may hold url(#id)
// (svgRefAttrs), written as ` name="value"`, through f, which appends the
// new value to out.
func replaceAttrs(html []byte, f func(name, value, out []byte) []byte) []byte {
	out := make([]byte, 0, len(html)+len(html)/8)
	last := 0
	eachAttr(html, append([]string{"id", "href", "src"}, svgRefAttrs...), func(name string, _, vs, ve int) {
		out = append(out, html[last:vs]...)
		out = f([]byte(name), html[vs:ve], out)
		last = ve
	})
	return append(out, html[last:]...)
}

// printURL maps one href or src value of a chapter at sitePath.
func printURL(v, prefix, sitePath string, chapters map[string]string) string {
	if v == "#" {
		return "#" + prefix // the top of the page: the chapter's section
	}
	if strings.HasPrefix(v, "#") {
		return "#" + prefix + "--" + v[1:]
	}
	raw := strings.ReplaceAll(v, "&amp;", "&")
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "" || u.Host != "" || strings.HasPrefix(v, "/") {
		return v
	}
	if u.Path == "" {
		if u.RawQuery == "" {
			return v // "" stays ""
		}
		// "?q" or "?q#x": the same chapter.
		if u.Fragment != "" {
			return "#" + prefix + "--" + u.EscapedFragment()
		}
		return "#" + prefix
	}
	target := path.Join(path.Dir(sitePath), u.Path)
	if strings.HasSuffix(u.Path, "/") && target != "/" {
		target += "/" // a folder stays a folder ("a/" is not "a")
	}
	if p, ok := chapters[target]; ok {
		if u.Fragment != "" {
			return "#" + p + "--" + u.EscapedFragment()
		}
		return "#" + p
	}
	return template.HTMLEscapeString((&url.URL{Path: target, RawQuery: u.RawQuery, Fragment: u.Fragment}).String())
}

// hasH1 reports whether a rendered chapter has a level-1 heading.
func hasH1(pg *render.Page) bool {
	for _, h := range pg.Headings {
		if h.Level == 1 {
			return true
		}
	}
	return false
}

// writePrint writes print.html to w: every chapter in reading order, each
// in a <section> whose id is printID of its path, spliced into the page as
// it is made (see executeSpliced), so that the whole book is never held in
// memory: at 4,000 chapters it is 150 MB, three times over when the page
// was put together in memory.
func writePrint(w io.Writer, tmpl *template.Template, b *book.Book, pages []*render.Page, a assets, pc *printCache) error {
	d, body := printParts(b, pages, a, pc)
	return executeSpliced(w, tmpl, d, body, "print.html")
}

// printParts returns print.html's page data, its content left empty, and
// a function that writes the content: every chapter in a <section>.
func printParts(b *book.Book, pages []*render.Page, a assets, pc *printCache) (*pageData, func(io.Writer) error) {
	chapters := printIDs(b.Chapters)
	var sections [][]byte
	if pc != nil {
		sections = pc.sections(b, pages, chapters)
	}
	d := common(b, "", a)
	d.Title = "The whole book"
	d.IsPrint = true
	d.TOC = toc(b.Items, nil, "")
	for i := range d.TOC {
		printTOC(&d.TOC[i], chapters)
	}
	d.Description = b.Config.Description
	if b.Config.SiteURL != "" {
		d.Canonical = b.Config.SiteURL + "print.html"
	}
	body := func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		for i, ch := range b.Chapters {
			fmt.Fprintf(bw, "<section class=\"print-chapter\" id=\"%s\" aria-label=\"%s\">\n",
				template.HTMLEscapeString(chapters[htmlPath(ch.Path)]), template.HTMLEscapeString(pages[i].Title))
			if !hasH1(pages[i]) {
				// As mdBook's print page does, a chapter without a level-1
				// heading gets its title, so that the printed book shows
				// where each chapter starts.
				fmt.Fprintf(bw, "<h1 class=\"print-title\">%s</h1>\n", template.HTMLEscapeString(pages[i].Title))
			}
			if sections != nil {
				bw.Write(sections[i])
			} else {
				body, err := pages[i].Body()
				if err != nil {
					return err
				}
				bw.Write(printChapter(ch, body, chapters))
			}
			bw.WriteString("</section>\n")
		}
		return bw.Flush()
	}
	return d, body
}

// printTOC points the sidebar of print.html at the sections of the page.
func printTOC(e *tocEntry, chapters map[string]string) {
	if p, ok := chapters[e.URL]; ok {
		e.URL = "#" + p
	}
	for i := range e.Children {
		printTOC(&e.Children[i], chapters)
	}
}
