package site

import (
	"strings"
	"testing"

	"github.com/ownership-book/ownership/internal/book"
)

// TestPrintKeepsFigureReferences checks that print.html, which prefixes
// every id of a chapter, prefixes the url(#id) references of a figure's SVG
// the same way, so masks and arrowheads still find their elements.
func TestPrintKeepsFigureReferences(t *testing.T) {
	html := `<figure class="figure"><svg><marker id="mk-1"></marker><mask id="m-1"></mask>` +
		`<path mask="url(#m-1)" marker-end="url(#mk-1)"></path></svg></figure>`
	ch := &book.Item{Path: "ownership.md"}
	got := string(printChapter(ch, []byte(html), map[string]string{"ownership.html": "ownership"}))
	for _, want := range []string{`id="ownership--mk-1"`, `id="ownership--m-1"`, `mask="url(#ownership--m-1)"`, `marker-end="url(#ownership--mk-1)"`} {
		if !strings.Contains(got, want) {
			t.Errorf("print HTML lacks %s:\n%s", want, got)
		}
	}
}
