package render

import (
	"bytes"
	"fmt"
	"html"
	"regexp"
	"sort"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
	xhtml "golang.org/x/net/html"

	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/expand"
)

// The site is deployed with a Content-Security-Policy (netlify.toml:
// default-src 'self'; script-src 'self'; style-src 'self'; frame-ancestors
// 'none' ...) that bookgen serve sends too. Raw HTML in a chapter that the
// policy blocks would be published and then silently do nothing in
// readers' browsers, so the renderer warns about it, naming the line,
// in a repository whose netlify.toml sets a policy (book.Book.CSP); a
// plain mdBook book served without one gets no such warning.
var (
	rawScriptRE  = regexp.MustCompile(`(?i)<script\b[^>]*>`)
	rawSrcRE     = regexp.MustCompile(`(?i)\bsrc\s*=\s*["']?([^"'\s>]+)`)
	rawIframeRE  = regexp.MustCompile(`(?i)<(iframe|frame|object|embed)\b`)
	rawStyleRE   = regexp.MustCompile(`(?i)<style\b`)
	rawStyleAtRE = regexp.MustCompile(`(?i)<[a-z][^>]*\sstyle\s*=`)
	rawHandlerRE = regexp.MustCompile(`(?i)<[a-z][^>]*\son[a-z]+\s*=`)
	rawJSURLRE   = regexp.MustCompile(`(?i)\b(?:href|src|action|formaction)\s*=\s*["']?\s*javascript:`)
)

// rawHTMLWarnings returns a warning for each construct of the raw HTML
// text (an HTML block or inline HTML starting at byte offset off of the
// expanded chapter) that the deployed Content-Security-Policy blocks.
func rawHTMLWarnings(d *expand.Doc, raw string, off int, lines lineIndex) []*diag.Error {
	var out []*diag.Error
	warn := func(at int, format string, args ...any) {
		file, line := origin(d, lines.line(off+at))
		out = append(out, &diag.Error{File: file, Line: line, Msg: fmt.Sprintf(format, args...)})
	}
	for _, m := range rawScriptRE.FindAllStringIndex(raw, -1) {
		tag := raw[m[0]:m[1]]
		switch src := rawSrcRE.FindStringSubmatch(tag); {
		case src == nil:
			warn(m[0], "raw HTML <script> in a chapter: the site's Content-Security-Policy (script-src 'self', netlify.toml) blocks inline scripts, so it will not run; put the script in the theme (theme/book.js)")
		case isExternal(src[1]) || strings.HasPrefix(src[1], "//"):
			warn(m[0], "raw HTML <script src=%q> loads a script from another site: the site's Content-Security-Policy (script-src 'self', netlify.toml) blocks it", src[1])
		default:
			warn(m[0], "raw HTML <script src=%q> in a chapter: scripts belong to the theme (theme/book.js), where every page gets them and the Content-Security-Policy allows them", src[1])
		}
	}
	for _, m := range rawIframeRE.FindAllStringSubmatchIndex(raw, -1) {
		warn(m[0], "raw HTML <%s> in a chapter: the site's Content-Security-Policy (default-src 'self', object-src 'none', netlify.toml) blocks embedding other sites, so it will show nothing", strings.ToLower(raw[m[2]:m[3]]))
	}
	for _, m := range rawStyleRE.FindAllStringIndex(raw, -1) {
		warn(m[0], "raw HTML <style> in a chapter: the site's Content-Security-Policy (style-src 'self', netlify.toml) blocks inline styles; put the rules in the theme (theme/book.css)")
	}
	for _, m := range rawStyleAtRE.FindAllStringIndex(raw, -1) {
		warn(m[0], "raw HTML style=\"...\" attribute: the site's Content-Security-Policy (style-src 'self', netlify.toml) ignores it; use a class styled in theme/book.css")
	}
	for _, m := range rawHandlerRE.FindAllStringIndex(raw, -1) {
		warn(m[0], "raw HTML event handler attribute (onclick=...): the site's Content-Security-Policy (script-src 'self', netlify.toml) blocks it, so it will not run")
	}
	for _, m := range rawJSURLRE.FindAllStringIndex(raw, -1) {
		warn(m[0], "javascript: URL in raw HTML: the site's Content-Security-Policy (script-src 'self', netlify.toml) blocks it, so it will do nothing")
	}
	return out
}

// htmlNodeText returns the raw text of an HTML block or inline HTML node
// and the offset of its first byte in src, or ok false for other nodes.
func htmlNodeText(n ast.Node, src []byte) (raw string, off int, ok bool) {
	var b strings.Builder
	off = -1
	add := func(start, stop int) {
		if off < 0 {
			off = start
		}
		// Keep offsets: pad the gaps between segments (a block
		// quote's "> ") with spaces, so that an offset in raw plus off
		// is the offset in src.
		for off+b.Len() < start {
			b.WriteByte(' ')
		}
		b.Write(src[start:stop])
	}
	switch n := n.(type) {
	case *ast.HTMLBlock:
		for i := 0; i < n.Lines().Len(); i++ {
			s := n.Lines().At(i)
			add(s.Start, s.Stop)
		}
		if n.HasClosure() {
			add(n.ClosureLine.Start, n.ClosureLine.Stop)
		}
	case *ast.RawHTML:
		for i := 0; i < n.Segments.Len(); i++ {
			s := n.Segments.At(i)
			add(s.Start, s.Stop)
		}
	default:
		return "", 0, false
	}
	if off < 0 {
		return "", 0, false
	}
	return b.String(), off, true
}

// isJavaScriptURL reports whether a Markdown link's destination runs
// script ("javascript:alert(1)", any case, leading blanks ignored), which
// the deployed Content-Security-Policy blocks.
func isJavaScriptURL(dest string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(dest)), "javascript:")
}

// htmlBlockText returns the text an HTML block shows: its character data
// with entities decoded, without tags and comments, and without the content
// of <script>, <style> and <template>, which is not text a reader reads
// (mdBook's search index skips script and style likewise).
func htmlBlockText(n ast.Node, src []byte) string {
	var raw bytes.Buffer
	for i := 0; i < n.Lines().Len(); i++ {
		seg := n.Lines().At(i)
		raw.Write(seg.Value(src))
	}
	if hb, ok := n.(*ast.HTMLBlock); ok && hb.HasClosure() {
		raw.Write(hb.ClosureLine.Value(src))
	}
	var out []string
	z := xhtml.NewTokenizer(&raw)
	skip := 0
	for {
		switch z.Next() {
		case xhtml.ErrorToken:
			return strings.Join(strings.Fields(strings.Join(out, " ")), " ")
		case xhtml.StartTagToken:
			if name, _ := z.TagName(); hiddenText[string(name)] {
				skip++
			}
		case xhtml.EndTagToken:
			if name, _ := z.TagName(); hiddenText[string(name)] && skip > 0 {
				skip--
			}
		case xhtml.TextToken:
			if skip == 0 {
				out = append(out, string(z.Text()))
			}
		}
	}
}

// hiddenText names the elements whose content is not text a reader reads.
var hiddenText = map[string]bool{"script": true, "style": true, "template": true}

// rawHref matches an <a> tag's href (or xlink:href) attribute: its name,
// and its value with the quotes as written.
var rawHref = regexp.MustCompile(`(?i)\s(href|xlink:href)\s*=\s*("[^"]*"|'[^']*'|[^\s"'=<>` + "`" + `]+)`)

// rawEdit replaces src[start:stop], which lies within one line of node, by
// text when the page is written.
type rawEdit struct {
	node        ast.Node
	start, stop int
	text        string
}

// rawLinks finds the href of every <a> tag of the raw HTML text raw (an
// HTML block or inline HTML at offset off of d's Markdown) and treats it as
// mdBook 0.5 does (mdbook-html src/html/tree.rs, fix_html_link): a link to
// a chapter's .md file is written to its page, "x.md#f" as "x.html#f".
// bookgen checks it like a Markdown link: the chapter link to check is
// added to pg.Links, an http(s) link to pg.External, and a broken one is
// a problem at its line (a warning where the book's broken links are
// warnings, else returned as an error). It returns the edits to make.
func (r *Renderer) rawLinks(d *expand.Doc, n ast.Node, raw string, off int, lines lineIndex, pg *Page) ([]rawEdit, []*diag.Error) {
	var edits []rawEdit
	var errs []*diag.Error
	z := xhtml.NewTokenizer(strings.NewReader(raw))
	pos := 0
	for {
		tt := z.Next()
		if tt == xhtml.ErrorToken {
			return edits, errs
		}
		tag := string(z.Raw())
		at := pos
		pos += len(tag)
		if tt != xhtml.StartTagToken && tt != xhtml.SelfClosingTagToken {
			continue
		}
		if name, _ := z.TagName(); string(name) != "a" {
			continue
		}
		for _, m := range rawHref.FindAllStringSubmatchIndex(tag, -1) {
			vs, ve := m[4], m[5]
			v := tag[vs:ve]
			if v[0] == '"' || v[0] == '\'' {
				v = v[1 : len(v)-1]
			}
			v = html.UnescapeString(v)
			file, line := origin(d, lines.line(off+at+vs))
			dest, lk, e := r.rewrite(d.Chapter.Path, v)
			if e != nil {
				e.File, e.Line = file, line
				if dest == "" || !r.book.Config.WarnBrokenLinks() {
					errs = append(errs, e)
					continue
				}
				pg.Warnings = append(pg.Warnings, e)
			}
			if dest != v && !strings.Contains(tag[vs:ve], "\n") {
				edits = append(edits, rawEdit{node: n, start: off + at + vs, stop: off + at + ve, text: `"` + html.EscapeString(dest) + `"`})
			}
			if isExternal(dest) && !r.book.Config.Unchecked(dest) {
				pg.External = append(pg.External, ExternalLink{URL: dest, File: file, Line: line})
			}
			if lk != nil {
				lk.File, lk.Line = file, line
				pg.Links = append(pg.Links, *lk)
			}
		}
	}
}

// applyRawEdits returns src with room for edits appended: each line of an
// HTML node that an edit falls in is copied, edited, to the end of src and
// the node's segment pointed there, so that the rest of the page, whose
// segments point into src, is written as before.
func applyRawEdits(src []byte, edits []rawEdit) []byte {
	if len(edits) == 0 {
		return src
	}
	out := append([]byte(nil), src...)
	edit := func(seg text.Segment) text.Segment {
		var mine []rawEdit
		for _, e := range edits {
			if e.start >= seg.Start && e.stop <= seg.Stop {
				mine = append(mine, e)
			}
		}
		if len(mine) == 0 {
			return seg
		}
		sort.Slice(mine, func(i, j int) bool { return mine[i].start < mine[j].start })
		start := len(out)
		at := seg.Start
		for _, e := range mine {
			out = append(out, src[at:e.start]...)
			out = append(out, e.text...)
			at = e.stop
		}
		out = append(out, src[at:seg.Stop]...)
		ns := text.NewSegmentPadding(start, len(out), seg.Padding)
		ns.ForceNewline = seg.ForceNewline
		return ns
	}
	done := map[ast.Node]bool{}
	for _, e := range edits {
		if done[e.node] {
			continue
		}
		done[e.node] = true
		var segs *text.Segments
		switch n := e.node.(type) {
		case *ast.HTMLBlock:
			segs = n.Lines()
			if n.HasClosure() {
				n.ClosureLine = edit(n.ClosureLine)
			}
		case *ast.RawHTML:
			segs = n.Segments
		}
		for i := 0; i < segs.Len(); i++ {
			segs.Set(i, edit(segs.At(i)))
		}
	}
	return out
}
