package markdown

import (
	"github.com/yuin/goldmark"
	gast "github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// taskList is goldmark's GFM task lists with the marker rule of
// pulldown-cmark, mdBook's parser, and of GFM's spec: "[ ]", "[x]" or "[X]"
// at the start of a list item is a check box only when white space (or
// the end of the line) follows it. goldmark takes "- [x](page.md)" for a
// checked box followed by the text "(page.md)"; mdBook renders a link.
type taskList struct{}

func (taskList) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(parser.WithInlineParsers(
		util.Prioritized(taskCheckBoxParser{extension.NewTaskCheckBoxParser()}, 0),
	))
	m.Renderer().AddOptions(renderer.WithNodeRenderers(
		util.Prioritized(extension.NewTaskCheckBoxHTMLRenderer(), 500),
	))
}

// taskCheckBoxParser is goldmark's check box parser, refusing a marker
// that is not followed by white space.
type taskCheckBoxParser struct{ parser.InlineParser }

func (p taskCheckBoxParser) Parse(parent gast.Node, block text.Reader, pc parser.Context) gast.Node {
	line, _ := block.PeekLine()
	if len(line) > 3 && line[0] == '[' && line[2] == ']' {
		switch line[3] {
		case ' ', '\t', '\n', '\r':
		default:
			return nil
		}
	}
	return p.InlineParser.Parse(parent, block, pc)
}
