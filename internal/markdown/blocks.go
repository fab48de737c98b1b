package markdown

import (
	"sort"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// Block is a fenced code block found in expanded Markdown.
type Block struct {
	Lang  string            // first word of the info string, lower-cased
	Attrs map[string]string // the rest of the info string (see ParseInfo)
	Info  string            // the info string as written
	// Line is the 1-based line of the opening fence in the Markdown.
	Line int
	// Lines are the content lines, without the container's indentation
	// (list items, block quotes) and without line ends.
	Lines []string
	// LineNos[i] is the 1-based Markdown line of Lines[i].
	LineNos []int
	// Prefixes[i] is what precedes Lines[i] on its Markdown line (the
	// container's indentation or "> "), so that a rewrite keeps it.
	Prefixes []string
}

// FindBlocks returns the fenced code blocks of md in order, as goldmark (a
// CommonMark parser) sees them: ``` and ~~~ fences of any length, inside
// list items and block quotes, an unclosed fence running to the end of its
// container. Indented code blocks are not returned.
func FindBlocks(md []byte) []Block {
	return findBlocks(md, Parse(md))
}

// FindBlocksWith is FindBlocks for a book that turns some of mdBook's
// Markdown off (NewFeatures): what its pages are rendered from.
func FindBlocksWith(md []byte, f Features) []Block {
	if f == (Features{}) {
		return FindBlocks(md)
	}
	return findBlocks(md, NewFeatures(f).Parser().Parse(text.NewReader(md)))
}

func findBlocks(md []byte, doc ast.Node) []Block {
	starts := []int{0}
	for i, c := range md {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	lineOf := func(off int) int { // 1-based
		return sort.Search(len(starts), func(i int) bool { return starts[i] > off })
	}
	var blocks []Block
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		fc, ok := n.(*ast.FencedCodeBlock)
		if !ok || !entering {
			return ast.WalkContinue, nil
		}
		var b Block
		if fc.Info != nil {
			b.Info = string(fc.Info.Segment.Value(md))
			b.Line = lineOf(fc.Info.Segment.Start)
		}
		b.Lang, b.Attrs = ParseInfo(b.Info)
		segs := fc.Lines()
		for i := 0; i < segs.Len(); i++ {
			s := segs.At(i)
			line := lineOf(s.Start)
			l := strings.Repeat(" ", s.Padding) + strings.TrimRight(string(md[s.Start:s.Stop]), "\r\n")
			b.Lines = append(b.Lines, l)
			b.LineNos = append(b.LineNos, line)
			b.Prefixes = append(b.Prefixes, string(md[starts[line-1]:s.Start]))
		}
		if b.Line == 0 && len(b.LineNos) > 0 {
			b.Line = b.LineNos[0] - 1
		}
		blocks = append(blocks, b)
		return ast.WalkSkipChildren, nil
	})
	return blocks
}
