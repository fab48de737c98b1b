package build

import (
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
