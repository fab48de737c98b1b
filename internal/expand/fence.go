package expand

import (
	"bytes"
	"strings"

	"github.com/yuin/goldmark/ast"

	"github.com/ownership-book/ownership/internal/markdown"
)

// unclosedFence returns the origin of the opening line of a fenced code
// block that the lines of an included Markdown file open and never close.
// By CommonMark ("Fenced code blocks") such a block runs to the end of the
// document: included in a chapter it would run on past the include and
// turn the rest of the chapter into code, which mdBook does without a
// word.
func unclosedFence(sel []line) (Origin, bool) {
	if len(sel) == 0 {
		return Origin{}, false
	}
	texts := make([]string, len(sel))
	for i, l := range sel {
		texts[i] = l.text
	}
	src := []byte(strings.Join(texts, "\n") + "\n")
	// Markdown the parser would take minutes over is not parsed here:
	// the build refuses it at its line (markdown.Bounds) before any stage
	// parses the chapter.
	if len(markdown.Bounds(src)) > 0 {
		return Origin{}, false
	}
	doc := markdown.Parse(src) // the blocks as verify and render see them
	var found Origin
	ok := false
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		f, isFence := n.(*ast.FencedCodeBlock)
		if !entering || !isFence || ok || f.Pos() < 0 {
			return ast.WalkContinue, nil
		}
		open := bytes.Count(src[:f.Pos()], []byte("\n")) // 0-based line of the opening fence
		end := f.Pos()
		if i := bytes.IndexByte(src[end:], '\n'); i >= 0 {
			end += i + 1
		}
		if k := f.Lines().Len(); k > 0 {
			end = max(end, f.Lines().At(k-1).Stop)
		}
		// A closed block is followed by its closing fence; an open one
		// has taken every remaining line as content.
		if end >= len(src) || len(bytes.TrimSpace(src[end:])) == 0 {
			if open < len(sel) {
				found, ok = sel[open].origin, true
			}
		}
		return ast.WalkContinue, nil
	})
	return found, ok
}
