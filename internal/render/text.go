package render

import (
	"html"
	"strings"
	"unicode"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/yuin/goldmark/ast"
)

// plainText returns the text of n's inline content, entities decoded and
// line breaks turned into spaces.
func plainText(n ast.Node, src []byte) string { return plainTextOf(n, src, " ", false) }

// idText is the text an id is made from: plainText, except that a hard
// line break counts as nothing (mdBook takes the text nodes of the
// rendered heading or term, and <br> is none).
func idText(n ast.Node, src []byte) string { return plainTextOf(n, src, "", false) }

// altText is an image's alt text: plainText, keeping raw HTML as written
// ("<em>x</em>"), as cmark and mdBook write an image description's plain
// string content. A line break that ends the description is a space at
// the end, as pulldown-cmark keeps it ("![a\nb\n](x.png)" is alt="a b ",
// mdBook's tests/testsuite/markdown/basic_markdown images.md); only white
// space at the start is dropped.
func altText(n ast.Node, src []byte) string {
	return strings.TrimLeftFunc(plainTextUntrimmed(n, src, " ", true), unicode.IsSpace)
}

// plainTextOf is plainText with hard line breaks written as hard, and raw
// HTML kept as text when raw is set.
func plainTextOf(n ast.Node, src []byte, hard string, raw bool) string {
	return strings.TrimSpace(plainTextUntrimmed(n, src, hard, raw))
}

// plainTextUntrimmed is plainTextOf with the white space at both ends kept.
func plainTextUntrimmed(n ast.Node, src []byte, hard string, raw bool) string {
	var b strings.Builder
	hidden := 0 // inside inline <script> or <style>: not text
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		if r, ok := c.(*ast.RawHTML); ok && raw {
			b.Write(r.Segments.Value(src))
			return ast.WalkSkipChildren, nil
		}
		if r, ok := c.(*ast.RawHTML); ok {
			tag := strings.ToLower(string(r.Segments.Value(src)))
			for name := range hiddenText {
				switch {
				case strings.HasPrefix(tag, "<"+name+">"), strings.HasPrefix(tag, "<"+name+" "):
					hidden++
				case strings.HasPrefix(tag, "</"+name) && hidden > 0:
					hidden--
				}
			}
			return ast.WalkSkipChildren, nil
		}
		if hidden > 0 {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.Text:
			// What the reader sees: "\<title\>" is "<title>",
			// "&amp;" is "&".
			b.Write(book.PlainSegment(c.Segment.Value(src)))
			switch {
			case c.HardLineBreak():
				b.WriteString(hard)
			case c.SoftLineBreak():
				b.WriteByte(' ')
			}
		case *ast.String:
			// Typographer output ("&rsquo;") is HTML; decode it.
			b.WriteString(html.UnescapeString(string(c.Value)))
		case *ast.AutoLink:
			b.Write(c.Label(src))
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// blockText returns the plain text of a block: its inline text, or its lines
// for code blocks.
func blockText(n ast.Node, src []byte) string {
	var parts []string
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c.(type) {
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			if fig := figureOf(c); fig != nil {
				parts = append(parts, fig.Text)
				return ast.WalkSkipChildren, nil
			}
			var b strings.Builder
			for i := 0; i < c.Lines().Len(); i++ {
				seg := c.Lines().At(i)
				b.Write(seg.Value(src))
			}
			parts = append(parts, b.String())
			return ast.WalkSkipChildren, nil
		case *ast.HTMLBlock:
			// Its text is the page's text too; a script's or a
			// style sheet's is not.
			if t := htmlBlockText(c, src); t != "" {
				parts = append(parts, t)
			}
			return ast.WalkSkipChildren, nil
		}
		if c.Type() == ast.TypeBlock && c.FirstChild() != nil && c.FirstChild().Type() == ast.TypeInline {
			parts = append(parts, plainText(c, src))
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return strings.Join(strings.Fields(strings.Join(parts, " ")), " ")
}

// sections splits the document's top-level blocks at headings and returns
// them with the first paragraph's text.
func sections(doc ast.Node, src []byte, title string) ([]Section, string) {
	cur := Section{Title: title}
	var out []Section
	var texts []string
	summary := ""
	flush := func() {
		cur.Text = strings.Join(texts, " ")
		if cur.Anchor != "" || cur.Text != "" {
			out = append(out, cur)
		}
		texts = nil
	}
	for c := doc.FirstChild(); c != nil; c = c.NextSibling() {
		if h, ok := c.(*ast.Heading); ok {
			flush()
			cur = Section{Title: plainText(h, src), Anchor: headingID(h)}
			continue
		}
		t := blockText(c, src)
		if t != "" {
			texts = append(texts, t)
		}
		if _, ok := c.(*ast.Paragraph); ok && summary == "" {
			summary = t
		}
	}
	flush()
	return out, summary
}
