package markdown

import (
	"bytes"
	"regexp"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// This file holds the Markdown that mdBook reads beyond CommonMark and GFM
// (https://rust-lang.github.io/mdBook/format/markdown.html): heading
// attributes, definition lists with an indented ":", and GitHub's alerts
// ("admonitions"), and CommonMark's HTML block rule for <meta>. The
// renderer's side of them (the HTML written for an admonition or a term)
// is internal/render's.

// mdBook is the goldmark extension for mdBook's Markdown, less the
// Features turned off.
type mdBook struct{ f Features }

func (e mdBook) Extend(m goldmark.Markdown) {
	if !e.f.NoDefinitionLists {
		m.Parser().AddOptions(
			parser.WithBlockParsers(
				// goldmark's definition list, accepting a ":" indented by
				// up to three spaces ("term\n  : definition"), as
				// pulldown-cmark (mdBook's parser) does.
				util.Prioritized(indentedColon{extension.NewDefinitionListParser()}, 101),
				util.Prioritized(indentedColon{extension.NewDefinitionDescriptionParser()}, 102),
			),
			parser.WithASTTransformers(util.Prioritized(joinTerms{}, 102)),
		)
	}
	m.Parser().AddOptions(parser.WithASTTransformers(
		util.Prioritized(headingAttributes{}, 100),
		// Before goldmark's footnote transformer (999) drops them.
		util.Prioritized(footnoteDefs{}, 998),
	))
	if !e.f.NoAdmonitions {
		m.Parser().AddOptions(parser.WithASTTransformers(util.Prioritized(admonitions{}, 101)))
	}
	m.Renderer().AddOptions(renderer.WithNodeRenderers(
		util.Prioritized(extension.NewDefinitionListHTMLRenderer(), 500),
	))
}

// commonMarkHTMLBlock is goldmark's HTML block parser with CommonMark's
// list of block tags: goldmark still counts <meta> among start condition
// 6's names, which CommonMark removed in 0.29 (meta is used inline, as in
// schema.org markup). A <meta> line is an HTML block only by condition 7: a
// complete tag alone on its line, not interrupting a paragraph; otherwise
// it is inline HTML in a paragraph, as mdBook (pulldown-cmark) reads it.
type commonMarkHTMLBlock struct{ parser.BlockParser }

var metaLineRE = regexp.MustCompile(`(?i)^ {0,3}<meta(?:[\s/>]|$)`)
var metaTagRE = regexp.MustCompile(`(?i)^ {0,3}<meta(?:\s+[^<>]*)?/?>\s*$`)

func (p commonMarkHTMLBlock) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	line, _ := reader.PeekLine()
	if metaLineRE.Match(line) {
		if !metaTagRE.Match(line) {
			return nil, parser.NoChildren
		}
		if last := pc.LastOpenedBlock().Node; last != nil && last.Kind() == ast.KindParagraph {
			return nil, parser.NoChildren
		}
	}
	return p.BlockParser.Open(parent, reader, pc)
}

// newParser is goldmark's default parser with commonMarkHTMLBlock in place
// of its HTML block parser.
func newParser() parser.Parser {
	var blocks []util.PrioritizedValue
	for _, b := range parser.DefaultBlockParsers() {
		if b.Value == parser.NewHTMLBlockParser() { // goldmark's one instance
			b.Value = commonMarkHTMLBlock{b.Value.(parser.BlockParser)}
		}
		blocks = append(blocks, b)
	}
	return parser.NewParser(parser.WithBlockParsers(blocks...),
		parser.WithInlineParsers(parser.DefaultInlineParsers()...),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
	)
}

// indentedColon lets a definition list parser open on a ":" indented by
// one to three spaces.
type indentedColon struct{ parser.BlockParser }

func (p indentedColon) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	// The description parser measures the list's content column from
	// the ":": take off the indentation the list parser added (below).
	shifts := colonShifts(pc)
	if l, ok := parent.(*east.DefinitionList); ok {
		if shift := shifts[l]; shift > 0 {
			l.Offset -= shift
			defer func() { l.Offset += shift }()
		}
	}
	ind, off := pc.BlockIndent(), pc.BlockOffset()
	if ind == 0 || ind >= 4 || off <= 0 {
		n, st := p.BlockParser.Open(parent, reader, pc)
		if l, ok := n.(*east.DefinitionList); ok {
			shifts[l] = 0
		}
		return n, st
	}
	// goldmark's parsers expect the ":" at the reader's position: step
	// over the indentation, and step back when they do not open.
	line, seg := reader.Position()
	reader.Advance(off)
	pc.SetBlockOffset(0)
	pc.SetBlockIndent(0)
	n, st := p.BlockParser.Open(parent, reader, pc)
	if l, ok := n.(*east.DefinitionList); ok {
		// The list measured its content column from the ":"; the
		// line's columns start off before it.
		l.Offset += off
		shifts[l] = off
	}
	if n == nil {
		reader.SetPosition(line, seg)
		pc.SetBlockOffset(off)
		pc.SetBlockIndent(ind)
	}
	return n, st
}

// colonShiftKey keeps, for one parse, how far each definition list's last
// ":" was indented.
var colonShiftKey = parser.NewContextKey()

func colonShifts(pc parser.Context) map[*east.DefinitionList]int {
	m, _ := pc.Get(colonShiftKey).(map[*east.DefinitionList]int)
	if m == nil {
		m = map[*east.DefinitionList]int{}
		pc.Set(colonShiftKey, m)
	}
	return m
}

// joinTerms makes the lines before a definition one term, as
// pulldown-cmark (mdBook's parser) reads "a\nb\\\nc\n: d": goldmark makes
// a term of each line (PHP Markdown Extra's rule); the lines are joined with
// a soft line break, or a hard one where a line ends with a backslash.
type joinTerms struct{}

func (joinTerms) Transform(doc *ast.Document, reader text.Reader, pc parser.Context) {
	src := reader.Source()
	var lists []*east.DefinitionList
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if l, ok := n.(*east.DefinitionList); ok && entering {
			lists = append(lists, l)
		}
		return ast.WalkContinue, nil
	})
	for _, l := range lists {
		loosenDefinitions(l)
		for c := l.FirstChild(); c != nil; c = c.NextSibling() {
			first, ok := c.(*east.DefinitionTerm)
			if !ok {
				continue
			}
			for next, ok := first.NextSibling().(*east.DefinitionTerm); ok; next, ok = first.NextSibling().(*east.DefinitionTerm) {
				if t, ok := first.LastChild().(*ast.Text); ok {
					if v := t.Segment.Value(src); len(v) > 0 && v[len(v)-1] == '\\' {
						t.Segment = t.Segment.WithStop(t.Segment.Stop - 1)
						t.SetHardLineBreak(true)
					} else {
						t.SetSoftLineBreak(true)
					}
				}
				for k := next.FirstChild(); k != nil; {
					after := k.NextSibling()
					first.AppendChild(first, k)
					k = after
				}
				for i := 0; i < next.Lines().Len(); i++ {
					first.Lines().Append(next.Lines().At(i))
				}
				l.RemoveChild(l, next)
			}
		}
	}
}

// loosenDefinitions makes every definition of a term loose (its text in
// <p>) when the term's first one is, as pulldown-cmark does for
// "term\n\n: a\n: b": goldmark decides for each definition on its own,
// by the blank line before it.
func loosenDefinitions(l *east.DefinitionList) {
	loose := false
	for c := l.FirstChild(); c != nil; c = c.NextSibling() {
		d, ok := c.(*east.DefinitionDescription)
		if !ok {
			loose = false // a term: its first definition decides
			continue
		}
		if _, prevIsTerm := d.PreviousSibling().(*east.DefinitionTerm); prevIsTerm {
			loose = !d.IsTight
			continue
		}
		if !loose || !d.IsTight {
			continue
		}
		d.IsTight = false
		for k := d.FirstChild(); k != nil; {
			next := k.NextSibling()
			if tb, ok := k.(*ast.TextBlock); ok {
				p := ast.NewParagraph()
				p.SetLines(tb.Lines())
				for g := tb.FirstChild(); g != nil; {
					after := g.NextSibling()
					p.AppendChild(p, g)
					g = after
				}
				d.ReplaceChild(d, tb, p)
			}
			k = next
		}
	}
}

// headingAttributes reads a trailing "{...}" of a heading as mdBook does
// (pulldown-cmark's heading attributes, format/markdown.md "Heading
// attributes"): space-separated "#id", ".class" (classes add up), "key=value"
// and bare "key" (an attribute with an empty value), in any order. The block
// is removed from the heading's text. A "{" that is not closed at the end of
// the line, or a block holding another brace, is text.
type headingAttributes struct{}

func (headingAttributes) Transform(doc *ast.Document, reader text.Reader, pc parser.Context) {
	src := reader.Source()
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		h, ok := n.(*ast.Heading)
		if !entering || !ok {
			return ast.WalkContinue, nil
		}
		if h.Lines().Len() > 0 {
			applyHeadingAttributes(h, src, pc)
		}
		return ast.WalkSkipChildren, nil
	})
}

func applyHeadingAttributes(h *ast.Heading, src []byte, pc parser.Context) {
	last := h.Lines().At(h.Lines().Len() - 1)
	line := bytes.TrimRight(last.Value(src), " \t\r\n")
	if !bytes.HasSuffix(line, []byte("}")) {
		return
	}
	open := bytes.LastIndexByte(line, '{')
	if open < 0 || bytes.ContainsAny(line[open+1:len(line)-1], "{}") {
		return
	}
	attrs := strings.Fields(string(line[open+1 : len(line)-1]))
	braceAt := last.Start + open
	// Drop the block from the inline content: every node after the
	// brace, and the brace's text node from the brace on.
	for c := h.LastChild(); c != nil; {
		prev := c.PreviousSibling()
		t, ok := c.(*ast.Text)
		if !ok {
			return // the block is not plain text (emphasis, a code span): leave it
		}
		if t.Segment.Start >= braceAt {
			h.RemoveChild(h, t)
		} else if t.Segment.Stop > braceAt {
			t.Segment = t.Segment.WithStop(braceAt)
			t.Segment = t.Segment.TrimRightSpace(src)
			break
		} else {
			break
		}
		c = prev
	}
	for t, ok := h.LastChild().(*ast.Text); ok && t.Segment.Len() == 0 || ok && len(bytes.TrimSpace(t.Segment.Value(src))) == 0; t, ok = h.LastChild().(*ast.Text) {
		h.RemoveChild(h, t)
	}
	if t, ok := h.LastChild().(*ast.Text); ok {
		t.Segment = t.Segment.TrimRightSpace(src)
		// "## Closed ## {#id}": the closing sequence before the block
		// goes too, as it would at the end of the line.
		v := t.Segment.Value(src)
		if trimmed := bytes.TrimRight(v, "#"); len(trimmed) < len(v) && (len(trimmed) == 0 || trimmed[len(trimmed)-1] == ' ' || trimmed[len(trimmed)-1] == '\t') && atxLine(src, h) {
			t.Segment = t.Segment.WithStop(t.Segment.Start + len(trimmed))
			t.Segment = t.Segment.TrimRightSpace(src)
		}
	}
	var classes []string
	var others [][2]string
	for _, a := range attrs {
		switch {
		case strings.HasPrefix(a, "#") && len(a) > 1:
			h.SetAttributeString("id", []byte(a[1:]))
			pc.IDs().Put([]byte(a[1:]))
		case strings.HasPrefix(a, ".") && len(a) > 1:
			classes = append(classes, a[1:])
		default:
			k, v, _ := strings.Cut(a, "=")
			if validAttrName(k) {
				others = append(others, [2]string{k, v})
			}
		}
	}
	// Written in a fixed order: id, class, then the others as given.
	if len(classes) > 0 {
		h.SetAttributeString("class", []byte(strings.Join(classes, " ")))
	}
	for _, kv := range others {
		h.SetAttributeString(kv[0], []byte(kv[1]))
	}
}

// atxLine reports whether heading h is an ATX heading ("## x"), not a
// setext one.
func atxLine(src []byte, h *ast.Heading) bool {
	start := h.Lines().At(0).Start
	i := bytes.LastIndexByte(src[:start], '\n') + 1
	return bytes.HasPrefix(bytes.TrimLeft(src[i:start], " \t>"), []byte("#"))
}

// validAttrName reports whether k can be written as an HTML attribute name:
// letters, digits, "-", "_", ":" and ".", starting with a letter or "_"
// (and not "id" or "class", which have their own syntax).
func validAttrName(k string) bool {
	if k == "" || k == "id" || k == "class" || strings.HasPrefix(strings.ToLower(k), "on") {
		return false
	}
	for i, c := range k {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case i > 0 && (c >= '0' && c <= '9' || c == '-' || c == ':' || c == '.'):
		default:
			return false
		}
	}
	return true
}

// admonitionKinds are GitHub's alert kinds, which mdBook renders as
// admonitions (format/markdown.md "Admonitions"), and their titles.
var admonitionKinds = map[string]string{
	"note": "Note", "tip": "Tip", "important": "Important", "warning": "Warning", "caution": "Caution",
}

// AttrAdmonition holds an admonition's kind on its Blockquote ("note",
// "tip", "important", "warning", "caution"; see AdmonitionTitle).
const AttrAdmonition = "data-bookgen-admonition"

// AdmonitionTitle returns the title of an admonition of kind ("Note" for
// "note"), "" for a kind that is not one.
func AdmonitionTitle(kind string) string { return admonitionKinds[kind] }

// admonitions turns a block quote whose first line is "[!NOTE]" (any
// case; TIP, IMPORTANT, WARNING, CAUTION likewise), alone on the line, into
// an admonition: the marker is removed and the block quote gets mdBook's
// classes "blockquote-tag blockquote-tag-<kind>" and a title.
type admonitions struct{}

func (admonitions) Transform(doc *ast.Document, reader text.Reader, pc parser.Context) {
	src := reader.Source()
	var quotes []*ast.Blockquote
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if q, ok := n.(*ast.Blockquote); ok && entering {
			quotes = append(quotes, q)
		}
		return ast.WalkContinue, nil
	})
	for _, q := range quotes {
		p, ok := q.FirstChild().(*ast.Paragraph)
		if !ok || p.Lines().Len() == 0 {
			continue
		}
		first := p.Lines().At(0)
		marker := strings.TrimSpace(string(first.Value(src)))
		if !strings.HasPrefix(marker, "[!") || !strings.HasSuffix(marker, "]") {
			continue
		}
		kind := strings.ToLower(marker[2 : len(marker)-1])
		if _, ok := admonitionKinds[kind]; !ok {
			continue
		}
		// Remove the inline nodes of the marker's line.
		end := first.Stop
		for c := p.FirstChild(); c != nil; {
			next := c.NextSibling()
			t, ok := c.(*ast.Text)
			if !ok || t.Segment.Start >= end {
				break
			}
			p.RemoveChild(p, c)
			c = next
		}
		if p.ChildCount() == 0 {
			q.RemoveChild(q, p)
		} else {
			p.Lines().SetSliced(1, p.Lines().Len()) // the paragraph now starts on the next line
		}
		q.SetAttributeString(AttrAdmonition, []byte(kind))
	}
}
