package book

import (
	"bytes"
	"html"
	"strings"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// PlainSegment returns the text of a Markdown text segment as a reader sees
// it: backslash escapes removed, entity and numeric character references
// decoded ("\\<title\\> &amp; &#42;" is "<title> & *").
func PlainSegment(v []byte) []byte {
	return util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(v)))
}

// titleMarkdown parses SUMMARY.md titles: CommonMark, no raw HTML.
var titleMarkdown = goldmark.New()

// inlineTitle reads the text between a SUMMARY.md link's brackets as inline
// Markdown and returns it as plain text and as HTML. The plain text is
// mdBook's (mdbook-summary's stringify_events): the text of text and code
// spans, a soft line break as a space, emphasis marks and escapes dropped.
// The HTML keeps emphasis, code and strikethrough for the sidebar; a title
// that does not parse as one paragraph of inline text, or that holds a link
// or raw HTML, gets its plain text, escaped, as HTML.
func inlineTitle(src string) (plain, htmlTitle string) {
	titleMemo.Lock()
	t, ok := titleMemo.m[src]
	titleMemo.Unlock()
	if ok {
		return t[0], t[1]
	}
	plain, htmlTitle = parseInlineTitle(src)
	titleMemo.Lock()
	if len(titleMemo.m) >= 20000 {
		clear(titleMemo.m)
	}
	titleMemo.m[src] = [2]string{plain, htmlTitle}
	titleMemo.Unlock()
	return plain, htmlTitle
}

// titleMemo remembers inlineTitle by its source: SUMMARY.md is parsed again
// on every rebuild (bookgen serve), and parsing a thousand titles with
// goldmark would cost milliseconds of each save-to-reload.
var titleMemo = struct {
	sync.Mutex
	m map[string][2]string
}{m: map[string][2]string{}}

func parseInlineTitle(src string) (plain, htmlTitle string) {
	source := []byte(src)
	doc := titleMarkdown.Parser().Parse(text.NewReader(source))
	para, ok := doc.FirstChild().(*ast.Paragraph)
	if !ok || para.NextSibling() != nil {
		t := unescape(src)
		return t, html.EscapeString(t)
	}
	var b strings.Builder
	simple := true
	_ = ast.Walk(para, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Text:
			b.Write(PlainSegment(n.Segment.Value(source)))
			if n.SoftLineBreak() || n.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(n.Value)
		case *ast.Link, *ast.AutoLink, *ast.Image, *ast.RawHTML:
			simple = false
			if l, ok := n.(*ast.AutoLink); ok {
				b.Write(l.Label(source))
			}
			if _, ok := n.(*ast.RawHTML); ok {
				return ast.WalkSkipChildren, nil
			}
		}
		return ast.WalkContinue, nil
	})
	plain = strings.Join(strings.Fields(b.String()), " ")
	if !simple {
		return plain, html.EscapeString(plain)
	}
	var out bytes.Buffer
	if err := titleMarkdown.Renderer().Render(&out, source, para); err != nil {
		return plain, html.EscapeString(plain)
	}
	h := strings.TrimSpace(out.String())
	h = strings.TrimSuffix(strings.TrimPrefix(h, "<p>"), "</p>")
	return plain, strings.Join(strings.Fields(h), " ")
}
