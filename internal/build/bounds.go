package build

import (
	"slices"

	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/expand"
	"github.com/ownership-book/ownership/internal/markdown"
)

// checkBounds refuses, before any chapter is parsed, Markdown that the
// parser would take quadratic or worse time on (markdown.Bounds): every
// problem of every chapter, each at the file and line it comes from.
func checkBounds(docs []*expand.Doc) error {
	var all diag.List
	for _, d := range docs {
		if d == nil {
			continue
		}
		for _, p := range markdown.Bounds(d.Markdown) {
			o := d.Origin(p.Line)
			all = append(all, diag.Errorf(o.File, o.Line, "%s", p.Msg))
		}
	}
	return all.Err()
}

// checkBlocksAgree refuses a chapter whose fenced blocks the book's
// Markdown settings ([output.html] definition-lists = false, for
// instance) make its pages read differently from verification, which
// reads every chapter with all of mdBook's Markdown on: a block that the
// page and the checks see differently would be shown with another block's
// verdict. The error is at the first block that differs.
func checkBlocksAgree(f markdown.Features, docs []*expand.Doc) error {
	if f == (markdown.Features{}) {
		return nil
	}
	var all diag.List
	for _, d := range docs {
		if d == nil {
			continue
		}
		checked, shown := markdown.FindBlocks(d.Markdown), markdown.FindBlocksWith(d.Markdown, f)
		if line, ok := firstDifference(checked, shown); !ok {
			o := d.Origin(line)
			all = append(all, diag.Errorf(o.File, o.Line, "this code block is read differently with the book's Markdown settings (book.toml [output.html] definition-lists, admonitions) than bookgen's checks read it; move it out of the definition or quote it sits in"))
		}
	}
	return all.Err()
}

// firstDifference returns the line of the first block where a and b
// differ, and whether they agree.
func firstDifference(a, b []markdown.Block) (int, bool) {
	for i := range max(len(a), len(b)) {
		if i >= len(a) {
			return b[i].Line, false
		}
		if i >= len(b) {
			return a[i].Line, false
		}
		if a[i].Line != b[i].Line || a[i].Info != b[i].Info || !slices.Equal(a[i].Lines, b[i].Lines) {
			return min(a[i].Line, b[i].Line), false
		}
	}
	return 0, true
}
