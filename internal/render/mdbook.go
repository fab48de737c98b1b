package render

import (
	"html"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/util"

	"github.com/ownership-book/ownership/internal/markdown"
)

// This file holds the HTML of the Markdown that mdBook reads beyond
// CommonMark and GFM (https://rust-lang.github.io/mdBook/format/markdown.html);
// internal/markdown parses it.

// renderBlockquote writes a block quote, with an admonition's classes and
// title when it is one.
func (nr *nodeRenderer) blockquote(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	kind := attrString(node, markdown.AttrAdmonition)
	if !entering {
		_, _ = w.WriteString("</blockquote>\n")
		return ast.WalkContinue, nil
	}
	if kind == "" {
		_, _ = w.WriteString("<blockquote>\n")
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString(`<blockquote class="blockquote-tag blockquote-tag-` + kind + `">` + "\n")
	_, _ = w.WriteString(`<p class="blockquote-tag-title">` + html.EscapeString(markdown.AdmonitionTitle(kind)) + "</p>\n")
	return ast.WalkContinue, nil
}

// image writes an image with its description's plain text as alt, as
// CommonMark asks ("the plain string content of the image description"),
// raw HTML kept as text as cmark and mdBook keep it: goldmark writes a hard
// line break in it as a literal "<br>" and drops raw HTML.
func (nr *nodeRenderer) image(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.Image)
	_, _ = w.WriteString(`<img src="`)
	_, _ = w.Write(util.EscapeHTML(util.URLEscape(n.Destination, true)))
	_, _ = w.WriteString(`" alt="`)
	_, _ = w.WriteString(html.EscapeString(altText(n, src)))
	_ = w.WriteByte('"')
	if n.Title != nil {
		_, _ = w.WriteString(` title="`)
		_, _ = w.Write(util.EscapeHTML(n.Title))
		_ = w.WriteByte('"')
	}
	_ = w.WriteByte('>')
	return ast.WalkSkipChildren, nil
}

// definitionTerm writes a definition list's term with its id and a
// permalink, as mdBook gives terms ids and links like headings.
func (nr *nodeRenderer) definitionTerm(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	id, _ := node.AttributeString("id")
	ids, _ := id.([]byte)
	if entering {
		_, _ = w.WriteString("<dt")
		if len(ids) > 0 {
			_, _ = w.WriteString(` id="` + html.EscapeString(string(ids)) + `"`)
		}
		_ = w.WriteByte('>')
		return ast.WalkContinue, nil
	}
	if len(ids) > 0 {
		_, _ = w.WriteString(`<a class="anchor" href="#` + html.EscapeString(string(ids)) + `" aria-label="Link to this term">#</a>`)
	}
	_, _ = w.WriteString("</dt>\n")
	return ast.WalkContinue, nil
}
