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
	_, _ = w.WriteString(`<p class="blockquote-tag-title"><svg viewbox="0 0 16 16" width="18" height="18">` + admonitionIcons[kind] + `</svg>` + html.EscapeString(markdown.AdmonitionTitle(kind)) + "</p>\n")
	return ast.WalkContinue, nil
}

// admonitionIcons are the paths of the icon mdBook 0.5 writes in an
// admonition's title, inside <svg viewbox="0 0 16 16" width="18"
// height="18"> (crates/mdbook-html/src/html/admonitions.rs). They are
// GitHub's Octicons (https://github.com/primer/octicons, MIT License:
// info, light-bulb, report, alert, stop), as in GitHub's own alerts.
// Inline SVG with presentation attributes only, so the site's
// Content-Security-Policy (no inline style or script) allows them;
// theme/book.css fills them with the title's color.
var admonitionIcons = map[string]string{
	"note":      `<path d="M0 8a8 8 0 1 1 16 0A8 8 0 0 1 0 8Zm8-6.5a6.5 6.5 0 1 0 0 13 6.5 6.5 0 0 0 0-13ZM6.5 7.75A.75.75 0 0 1 7.25 7h1a.75.75 0 0 1 .75.75v2.75h.25a.75.75 0 0 1 0 1.5h-2a.75.75 0 0 1 0-1.5h.25v-2h-.25a.75.75 0 0 1-.75-.75ZM8 6a1 1 0 1 1 0-2 1 1 0 0 1 0 2Z"></path>`,
	"tip":       `<path d="M8 1.5c-2.363 0-4 1.69-4 3.75 0 .984.424 1.625.984 2.304l.214.253c.223.264.47.556.673.848.284.411.537.896.621 1.49a.75.75 0 0 1-1.484.211c-.04-.282-.163-.547-.37-.847a8.456 8.456 0 0 0-.542-.68c-.084-.1-.173-.205-.268-.32C3.201 7.75 2.5 6.766 2.5 5.25 2.5 2.31 4.863 0 8 0s5.5 2.31 5.5 5.25c0 1.516-.701 2.5-1.328 3.259-.095.115-.184.22-.268.319-.207.245-.383.453-.541.681-.208.3-.33.565-.37.847a.751.751 0 0 1-1.485-.212c.084-.593.337-1.078.621-1.489.203-.292.45-.584.673-.848.075-.088.147-.173.213-.253.561-.679.985-1.32.985-2.304 0-2.06-1.637-3.75-4-3.75ZM5.75 12h4.5a.75.75 0 0 1 0 1.5h-4.5a.75.75 0 0 1 0-1.5ZM6 15.25a.75.75 0 0 1 .75-.75h2.5a.75.75 0 0 1 0 1.5h-2.5a.75.75 0 0 1-.75-.75Z"></path>`,
	"important": `<path d="M0 1.75C0 .784.784 0 1.75 0h12.5C15.216 0 16 .784 16 1.75v9.5A1.75 1.75 0 0 1 14.25 13H8.06l-2.573 2.573A1.458 1.458 0 0 1 3 14.543V13H1.75A1.75 1.75 0 0 1 0 11.25Zm1.75-.25a.25.25 0 0 0-.25.25v9.5c0 .138.112.25.25.25h2a.75.75 0 0 1 .75.75v2.19l2.72-2.72a.749.749 0 0 1 .53-.22h6.5a.25.25 0 0 0 .25-.25v-9.5a.25.25 0 0 0-.25-.25Zm7 2.25v2.5a.75.75 0 0 1-1.5 0v-2.5a.75.75 0 0 1 1.5 0ZM9 9a1 1 0 1 1-2 0 1 1 0 0 1 2 0Z"></path>`,
	"warning":   `<path d="M6.457 1.047c.659-1.234 2.427-1.234 3.086 0l6.082 11.378A1.75 1.75 0 0 1 14.082 15H1.918a1.75 1.75 0 0 1-1.543-2.575Zm1.763.707a.25.25 0 0 0-.44 0L1.698 13.132a.25.25 0 0 0 .22.368h12.164a.25.25 0 0 0 .22-.368Zm.53 3.996v2.5a.75.75 0 0 1-1.5 0v-2.5a.75.75 0 0 1 1.5 0ZM9 11a1 1 0 1 1-2 0 1 1 0 0 1 2 0Z"></path>`,
	"caution":   `<path d="M4.47.22A.749.749 0 0 1 5 0h6c.199 0 .389.079.53.22l4.25 4.25c.141.14.22.331.22.53v6a.749.749 0 0 1-.22.53l-4.25 4.25A.749.749 0 0 1 11 16H5a.749.749 0 0 1-.53-.22L.22 11.53A.749.749 0 0 1 0 11V5c0-.199.079-.389.22-.53Zm.84 1.28L1.5 5.31v5.38l3.81 3.81h5.38l3.81-3.81V5.31L10.69 1.5ZM8 4a.75.75 0 0 1 .75.75v3.5a.75.75 0 0 1-1.5 0v-3.5A.75.75 0 0 1 8 4Zm0 8a1 1 0 1 1 0-2 1 1 0 0 1 0 2Z"></path>`,
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
