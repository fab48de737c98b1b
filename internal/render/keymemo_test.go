package render

import (
	"testing"

	"github.com/ownership-book/ownership/internal/expand"
)

// TestDocSumsSeeEdits renders through one Cache Docs that share their
// Markdown and Origins with an earlier one (as expand.Cache hands them
// out) and Docs that do not: the same slices, or equal content in new
// ones, reuse the page; new content, new origins or a retitled chapter
// with the same slices render again.
func TestDocSumsSeeEdits(t *testing.T) {
	b := testBook(t)
	c := &Cache{}
	first := doc(b, 1, "# Own\n\nText.\n")
	render := func(step string, d *expand.Doc, wantRendered int) {
		t.Helper()
		r := New(b)
		r.Cache = c
		if _, err := r.Render(d); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if r.Rendered != wantRendered {
			t.Errorf("%s: rendered %d, want %d", step, r.Rendered, wantRendered)
		}
	}
	render("first", first, 1)
	same := *first
	render("the same slices", &same, 0)
	render("equal content in new slices", doc(b, 1, "# Own\n\nText.\n"), 0)
	render("new content", doc(b, 1, "# Own\n\nOther text.\n"), 1)
	moved := *first
	moved.Origins = append([]expand.Origin{}, first.Origins...)
	moved.Origins[2].File = "book/part.md"
	render("new origins", &moved, 1)
	retitled := moved // the slices last rendered
	ch := *moved.Chapter
	ch.Title = "Ownership, retitled"
	retitled.Chapter = &ch
	render("a retitled chapter with the same slices", &retitled, 1)
}
