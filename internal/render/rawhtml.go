package render

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/yuin/goldmark/ast"

	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/expand"
)

// The site is deployed with a Content-Security-Policy (netlify.toml:
// default-src 'self'; script-src 'self'; style-src 'self'; frame-ancestors
// 'none' ...) that bookgen serve sends too. Raw HTML in a chapter that the
// policy blocks would be published and then silently do nothing in
// readers' browsers, so the renderer warns about it, naming the line.
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
