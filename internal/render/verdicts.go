package render

import (
	"errors"
	"fmt"
	"hash"

	"github.com/yuin/goldmark/ast"

	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/expand"
	"github.com/ownership-book/ownership/internal/markdown"
	"github.com/ownership-book/ownership/internal/verify"
)

// verdictIndex is what the renderer knows of verification's verdicts on
// the book's fenced blocks (see SetVerdicts).
type verdictIndex struct {
	byChapter map[string][]verify.BlockVerdict // by chapter, then by block index
	set       bool
}

// attrVerdict holds on a fenced block the verdict the page shows it
// with (a verify.Verdict); the block writer refuses a block without one.
const attrVerdict = "bookgen-verdict"

// errNoVerdict is returned by the block writer for a fenced block the
// walk in render gave no verdict: a block of the tree that is not one of
// the chapter's index (markdown.FindBlocks) would otherwise reach the page.
var errNoVerdict = errors.New("a fenced code block without a verdict reached the writer")

// SetVerdicts gives the renderer the verdicts of the verification that
// precedes it (verify.Report.Blocks), keyed by block identity: chapter
// and position in markdown.FindBlocks of the chapter's expanded Markdown.
// A go, console or program-output figure block (markdown.Checkable) that
// has no verdict is an error at its line, "shown but never checked", and
// so is a block whose verdict was given for another info string (verify
// and render read different blocks). Without SetVerdicts no such block
// has a verdict: only blocks of other languages render.
func (r *Renderer) SetVerdicts(blocks []verify.BlockVerdict) {
	r.verdicts = verdictIndex{byChapter: map[string][]verify.BlockVerdict{}, set: true}
	for _, b := range blocks {
		l := r.verdicts.byChapter[b.Chapter]
		for len(l) <= b.Index {
			l = append(l, verify.BlockVerdict{Index: -1})
		}
		l[b.Index] = b
		r.verdicts.byChapter[b.Chapter] = l
	}
}

// verdictsKey adds to a page's cache key the verdicts on its blocks.
func (r *Renderer) verdictsKey(h hash.Hash, d *expand.Doc) {
	fmt.Fprintf(h, "\x00verdicts:%v\x00", r.verdicts.set)
	for _, v := range r.verdicts.byChapter[d.Chapter.Path] {
		fmt.Fprintf(h, "%d:%d:%q:%s:%s\x00", v.Index, v.Line, v.Info, v.Verdict, v.Check)
	}
}

// markVerdict gives the fenced block n, the index-th of the chapter,
// its verdict, or returns the error that it has none.
func (r *Renderer) markVerdict(d *expand.Doc, n *ast.FencedCodeBlock, index int, src []byte, lines lineIndex) *diag.Error {
	info := ""
	fence := 0
	if n.Info != nil {
		info = string(n.Info.Segment.Value(src))
		fence = lines.line(n.Info.Segment.Start)
	} else if n.Lines().Len() > 0 {
		fence = lines.line(n.Lines().At(0).Start) - 1
	} else {
		fence = lines.line(blockStart(n))
	}
	lang, attrs := markdown.ParseInfo(info)
	var v verify.BlockVerdict
	found := false
	if l := r.verdicts.byChapter[d.Chapter.Path]; index < len(l) && l[index].Index == index {
		v, found = l[index], true
	}
	file, line := origin(d, fence)
	switch {
	case found && v.Info != info:
		return &diag.Error{File: file, Line: line, Msg: fmt.Sprintf("```%s block: verification checked block %d of the chapter as ```%s; verify and render read different blocks (a bug in bookgen: please report it)", info, index+1, v.Info)}
	case found:
		n.SetAttributeString(attrVerdict, []byte(v.Verdict))
	case markdown.Checkable(lang, attrs):
		return &diag.Error{File: file, Line: line, Msg: fmt.Sprintf("```%s block: shown but never checked (verification gave it no verdict); a page shows a go, console or figure block only once it is checked or marked \"ignore\"", info)}
	default:
		n.SetAttributeString(attrVerdict, []byte(verify.Shown))
	}
	return nil
}
