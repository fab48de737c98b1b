package render

import (
	"fmt"
	"strings"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"

	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/expand"
)

// Raw HTML in a chapter is checked as mdBook 0.5 checks it while it builds
// its page (mdbook-html src/html/tree.rs: append_html, start_html_tag,
// end_html_tag, end_tag, finish_stack; src/html/tokenizer.rs; its tests
// tests/testsuite/rendering.rs busted_end_tag, unclosed_html_tags,
// unbalanced_html_tags, heading_with_unbalanced_html), each problem a
// warning at its line:
//
//   - malformed HTML: what html5ever's tokenizer reports as a parse error
//     (an end tag with attributes or a "/" before its ">", an attribute
//     given twice, a character a tag cannot hold where it stands, a tag or
//     comment the text ends in);
//   - an end tag that does not close the element open last ("unexpected
//     HTML end tag"; it closes nothing);
//   - a start tag whose element is still open when the Markdown element
//     around it ends (a heading, a paragraph, a list item: "while exiting
//     Heading(H3)"), or at the end of the chapter.
//
// mdBook keeps one stack of open elements, the Markdown ones and the raw
// HTML ones: a raw start tag is pushed (a void element such as <br>, or one
// written <x/>, is not), a raw end tag pops the top when it names it. The
// Markdown elements are pulldown-cmark's tags; goldmark's tree has the same
// containers, except a tight list item's text block (pulldown-cmark has
// none) and the list of footnote definitions (pulldown-cmark keeps each
// definition where it is written), which are not on the stack here. An
// HTML block is no element: a <div> opened in one block is closed by the
// </div> of a later one, as Markdown paragraphs between them are.
//
// bookgen writes the HTML as written (the browser's parser mends it as the
// HTML standard says); mdBook writes its own mended tree. That is the one
// difference, listed in manual/src/mdbook.md.

// htmlTokenKind is the kind of a token of raw HTML.
type htmlTokenKind int

const (
	htmlStartTag htmlTokenKind = iota
	htmlEndTag
)

// htmlToken is a start or end tag of raw HTML.
type htmlToken struct {
	kind        htmlTokenKind
	name        string // lower case
	selfClosing bool   // written <x/>
	at          int    // offset of its "<" in the text tokenized
}

// htmlProblem is a parse error of raw HTML, at an offset of its text.
type htmlProblem struct {
	at  int
	msg string
}

// tokenizeHTML splits raw HTML into its tags, reporting the parse errors
// of the HTML standard's tokenizer (§13.2.5) that html5ever reports, as
// mdBook reads them: script and style content is raw text, character
// references are not checked.
func tokenizeHTML(s string) ([]htmlToken, []htmlProblem) {
	var toks []htmlToken
	var probs []htmlProblem
	bad := func(at int, format string, args ...any) {
		probs = append(probs, htmlProblem{at, fmt.Sprintf(format, args...)})
	}
	i := 0
	for i < len(s) {
		lt := strings.IndexByte(s[i:], '<')
		if lt < 0 {
			break
		}
		at := i + lt
		i = at + 1
		if i >= len(s) {
			bad(at, "the text ends in a lone \"<\" (write &lt;)")
			break
		}
		c := s[i]
		switch {
		case c == '!':
			switch rest := s[i+1:]; {
			case strings.HasPrefix(rest, "--"):
				end := strings.Index(s[i+3:], "-->")
				if end < 0 {
					bad(at, "the comment \"<!--\" is never closed with \"-->\"")
					return toks, probs
				}
				i += 3 + end + 3
			case len(rest) >= 7 && strings.EqualFold(rest[:7], "doctype"), strings.HasPrefix(rest, "[CDATA["):
				end := strings.IndexByte(s[i:], '>')
				if end < 0 {
					return toks, probs
				}
				i += end + 1
			default:
				bad(at, "\"<!\" starts no comment (write \"<!--\" ... \"-->\")")
				if end := strings.IndexByte(s[i:], '>'); end >= 0 {
					i += end + 1
				} else {
					return toks, probs
				}
			}
		case c == '?':
			bad(at, "\"<?\" starts no tag (processing instructions are not HTML)")
			if end := strings.IndexByte(s[i:], '>'); end >= 0 {
				i += end + 1
			} else {
				return toks, probs
			}
		case c == '/':
			if i+1 >= len(s) {
				bad(at, "the text ends in \"</\"")
				return toks, probs
			}
			switch d := s[i+1]; {
			case isASCIILetter(d):
				t, next, p := readTag(s, at, i+1, htmlEndTag)
				probs = append(probs, p...)
				if next < 0 {
					return toks, probs
				}
				toks, i = append(toks, t), next
			case d == '>':
				bad(at, "\"</>\" is an end tag without a name")
				i += 2
			default:
				bad(at, "\"</\" is followed by %q, not a tag name", d)
				if end := strings.IndexByte(s[i:], '>'); end >= 0 {
					i += end + 1
				} else {
					return toks, probs
				}
			}
		case isASCIILetter(c):
			t, next, p := readTag(s, at, i, htmlStartTag)
			probs = append(probs, p...)
			if next < 0 {
				return toks, probs
			}
			toks, i = append(toks, t), next
			if (t.name == "script" || t.name == "style") && !t.selfClosing {
				// Raw text up to the element's end tag.
				end := indexEndTag(s[i:], t.name)
				if end < 0 {
					return toks, probs
				}
				i += end
			}
		default:
			bad(at, "\"<\" is followed by %q, not a tag name (write &lt; for a less-than sign)", c)
		}
	}
	return toks, probs
}

// readTag reads the tag whose "<" is at s[at] and whose name starts at
// s[i], returning it and the offset after its ">", or next -1 when the
// text ends inside it.
func readTag(s string, at, i int, kind htmlTokenKind) (t htmlToken, next int, probs []htmlProblem) {
	t = htmlToken{kind: kind, at: at}
	bad := func(format string, args ...any) {
		probs = append(probs, htmlProblem{at, fmt.Sprintf(format, args...)})
	}
	start := i
	for i < len(s) && !isHTMLSpace(s[i]) && s[i] != '/' && s[i] != '>' {
		i++
	}
	t.name = strings.ToLower(s[start:i])
	what := "<" + t.name
	if kind == htmlEndTag {
		what = "</" + t.name
	}
	eof := func() (htmlToken, int, []htmlProblem) {
		bad("the tag %s is never closed with \">\"", what)
		return t, -1, probs
	}
	seen := map[string]bool{}
	attrs := 0
	for {
		// Before an attribute name.
		for i < len(s) && isHTMLSpace(s[i]) {
			i++
		}
		if i >= len(s) {
			return eof()
		}
		switch s[i] {
		case '>':
			return finishTag(t, what, attrs, i+1, probs)
		case '/':
			i++
			if i >= len(s) {
				return eof()
			}
			if s[i] == '>' {
				t.selfClosing = true
				return finishTag(t, what, attrs, i+1, probs)
			}
			bad("in %s, \"/\" is followed by %q, not \">\"", what, s[i])
			continue
		}
		// An attribute name.
		ns := i
		if s[i] == '=' {
			bad("in %s, an attribute name starts with \"=\"", what)
			i++
		}
		for i < len(s) && !isHTMLSpace(s[i]) && s[i] != '/' && s[i] != '>' && s[i] != '=' {
			if c := s[i]; c == '"' || c == '\'' || c == '<' {
				bad("in %s, an attribute name holds %q", what, c)
			}
			i++
		}
		name := strings.ToLower(s[ns:i])
		attrs++
		if seen[name] {
			bad("in %s, the attribute %s is given twice (the second is dropped)", what, name)
		}
		seen[name] = true
		for i < len(s) && isHTMLSpace(s[i]) {
			i++
		}
		if i >= len(s) {
			return eof()
		}
		if s[i] != '=' {
			continue // an attribute without a value
		}
		i++
		for i < len(s) && isHTMLSpace(s[i]) {
			i++
		}
		if i >= len(s) {
			return eof()
		}
		switch q := s[i]; q {
		case '>':
			bad("in %s, the attribute %s has \"=\" and no value", what, name)
			return finishTag(t, what, attrs, i+1, probs)
		case '"', '\'':
			end := strings.IndexByte(s[i+1:], q)
			if end < 0 {
				return eof()
			}
			i += 1 + end + 1
			if i < len(s) && !isHTMLSpace(s[i]) && s[i] != '/' && s[i] != '>' {
				bad("in %s, the value of %s is followed by %q with no space before it", what, name, s[i])
			}
		default:
			for i < len(s) && !isHTMLSpace(s[i]) && s[i] != '>' {
				if c := s[i]; c == '"' || c == '\'' || c == '<' || c == '=' || c == '`' {
					bad("in %s, the unquoted value of %s holds %q (quote the value)", what, name, c)
				}
				i++
			}
		}
	}
}

// finishTag reports what is wrong with a whole end tag.
func finishTag(t htmlToken, what string, attrs, next int, probs []htmlProblem) (htmlToken, int, []htmlProblem) {
	if t.kind == htmlEndTag {
		if attrs > 0 {
			probs = append(probs, htmlProblem{t.at, fmt.Sprintf("the end tag %s> has attributes (html5ever: Attributes on an end tag)", what)})
		}
		if t.selfClosing {
			probs = append(probs, htmlProblem{t.at, fmt.Sprintf("the end tag %s/> ends in \"/>\" (html5ever: Self-closing end tag)", what)})
		}
	}
	return t, next, probs
}

// indexEndTag returns the offset in s of the end tag </name (followed by
// white space, "/" or ">"), any case, or -1.
func indexEndTag(s, name string) int {
	for i := 0; ; {
		j := strings.Index(s[i:], "</")
		if j < 0 {
			return -1
		}
		k := i + j + 2
		if k+len(name) <= len(s) && strings.EqualFold(s[k:k+len(name)], name) &&
			(k+len(name) == len(s) || isHTMLSpace(s[k+len(name)]) || s[k+len(name)] == '/' || s[k+len(name)] == '>') {
			return i + j
		}
		i = k
	}
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isHTMLSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// voidElements have no end tag (mdBook's is_void_element).
var voidElements = map[string]bool{
	"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true, "img": true,
	"input": true, "link": true, "meta": true, "param": true, "source": true, "track": true, "wbr": true,
}

// openElement is an entry of the stack of open elements: a Markdown
// element (md set) or a raw HTML start tag.
type openElement struct {
	md   string // pulldown-cmark's name of the Markdown element ("Heading(H3)"), "" for raw HTML
	name string // the raw element's name
	off  int    // offset of its start tag in the expanded Markdown
}

// htmlWarnings checks the raw HTML of the parsed chapter doc (source src,
// the expanded Markdown of d) as mdBook 0.5 does, returning a warning at
// its line for each problem, in the order mdBook meets them.
func htmlWarnings(d *expand.Doc, doc ast.Node, src []byte, lines lineIndex) []*diag.Error {
	var out []*diag.Error
	warn := func(off int, format string, args ...any) {
		file, line := origin(d, lines.line(off))
		out = append(out, &diag.Error{File: file, Line: line, Msg: fmt.Sprintf(format, args...)})
	}
	var stack []openElement
	unclosed := func(e openElement, exiting string) {
		if exiting == "" {
			warn(e.off, "unclosed HTML tag <%s>: it is still open at the end of the chapter (mdBook warns of it and closes it)", e.name)
			return
		}
		warn(e.off, "unclosed HTML tag <%s> found while exiting %s: HTML tags must be closed before the Markdown element around them ends (mdBook closes it there)", e.name, exiting)
	}
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		switch n.(type) {
		case *ast.HTMLBlock, *ast.RawHTML:
			if !entering {
				return ast.WalkContinue, nil
			}
			raw, off, ok := htmlNodeText(n, src)
			if !ok {
				return ast.WalkContinue, nil
			}
			toks, probs := tokenizeHTML(raw)
			for _, p := range probs {
				warn(off+p.at, "malformed HTML: %s", p.msg)
			}
			for _, t := range toks {
				switch {
				case t.kind == htmlStartTag:
					if !voidElements[t.name] && !t.selfClosing {
						stack = append(stack, openElement{name: t.name, off: off + t.at})
					}
				case len(stack) > 0 && stack[len(stack)-1].md == "" && stack[len(stack)-1].name == t.name:
					stack = stack[:len(stack)-1]
				default:
					open := "no HTML element is open"
					if len(stack) > 0 {
						if top := stack[len(stack)-1]; top.md == "" {
							open = fmt.Sprintf("the element open last is <%s>", top.name)
						} else {
							open = fmt.Sprintf("the element open last is Markdown's %s", top.md)
						}
					}
					warn(off+t.at, "unexpected HTML end tag </%s>: %s; check that the HTML tags are balanced (mdBook ignores it)", t.name, open)
				}
			}
			return ast.WalkSkipChildren, nil
		case *ast.Image, *ast.CodeSpan, *ast.FencedCodeBlock, *ast.CodeBlock:
			// mdBook reads an image's alt text as text; code holds no HTML.
			return ast.WalkSkipChildren, nil
		case *ast.Document, *ast.TextBlock, *east.FootnoteList:
			return ast.WalkContinue, nil
		}
		if !n.HasChildren() {
			return ast.WalkContinue, nil
		}
		md := markdownTagName(n)
		if entering {
			stack = append(stack, openElement{md: md})
			return ast.WalkContinue, nil
		}
		for len(stack) > 0 && stack[len(stack)-1].md == "" {
			unclosed(stack[len(stack)-1], md)
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 {
			stack = stack[:len(stack)-1]
		}
		return ast.WalkContinue, nil
	})
	for i := len(stack) - 1; i >= 0; i-- {
		if stack[i].md == "" {
			unclosed(stack[i], "")
		}
	}
	return out
}

// markdownTagName names Markdown element n as pulldown-cmark's TagEnd
// does in mdBook's warning ("Heading(H3)", "Paragraph", "Item").
func markdownTagName(n ast.Node) string {
	switch n := n.(type) {
	case *ast.Heading:
		return fmt.Sprintf("Heading(H%d)", n.Level)
	case *ast.Paragraph:
		return "Paragraph"
	case *ast.ListItem:
		return "Item"
	case *ast.List:
		return fmt.Sprintf("List(%v)", n.IsOrdered())
	case *ast.Blockquote:
		return "BlockQuote"
	case *ast.Emphasis:
		if n.Level == 2 {
			return "Strong"
		}
		return "Emphasis"
	case *ast.Link:
		return "Link"
	case *east.Strikethrough:
		return "Strikethrough"
	case *east.Table:
		return "Table"
	case *east.TableHeader:
		return "TableHead"
	case *east.TableRow:
		return "TableRow"
	case *east.TableCell:
		return "TableCell"
	case *east.Footnote:
		return "FootnoteDefinition"
	case *east.DefinitionList:
		return "DefinitionList"
	case *east.DefinitionTerm:
		return "DefinitionListTitle"
	case *east.DefinitionDescription:
		return "DefinitionListDefinition"
	}
	return n.Kind().String()
}
