package browser

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ownership-book/ownership/internal/site"
)

// TestLargeBookSidebar reads a book too large to carry its sidebar on
// every page (more than site.InlineSidebarMax chapters), served with
// netlify.toml's headers: the shared sidebar script fills the sidebar with
// every chapter, marks the page's own link current on a page in a folder
// too, and breaks no Content-Security-Policy rule; the table of contents
// page for readers without JavaScript lists every chapter.
func TestLargeBookSidebar(t *testing.T) {
	n := site.InlineSidebarMax + 5
	root := filepath.Join(t.TempDir(), "big")
	var summary strings.Builder
	summary.WriteString("# Summary\n\n")
	for i := 1; i <= n; i++ {
		p := fmt.Sprintf("c%03d.md", i)
		if i == n {
			p = "deep/last.md"
		}
		fmt.Fprintf(&summary, "- [Chapter %d](%s)\n", i, p)
		writeFile(t, filepath.Join(root, "book", filepath.FromSlash(p)), fmt.Sprintf("# Chapter %d\n\nText %d.\n", i, i))
	}
	writeFile(t, filepath.Join(root, "book", "SUMMARY.md"), summary.String())
	writeFile(t, filepath.Join(root, "book", "book.toml"), "[book]\ntitle = \"Big\"\n")
	writeFile(t, filepath.Join(root, "go.mod"), "module example.org/big\n\ngo 1.26\n")
	out := buildSite(t, root)
	srv := serveSite(t, out)
	bctx := newBrowser(t)
	tb := newTab(t, bctx)
	for _, pg := range []string{"c007.html", "deep/last.html"} {
		tb.navigate(srv.URL + "/" + pg)
		if got := eval[int](tb, `document.querySelectorAll("nav.sidebar a[href]").length`); got < n {
			t.Errorf("%s: sidebar has %d links, want at least %d", pg, got, n)
		}
		cur := eval[string](tb, `(document.querySelector("nav.sidebar a[aria-current=page]") || {href: ""}).href`)
		if cur != srv.URL+"/"+pg {
			t.Errorf("%s: current sidebar link is %q", pg, cur)
		}
		tb.noConsoleErrors(pg)
	}
	contents, err := os.ReadFile(filepath.Join(out, "toc.html"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(contents), `class="chapter-item"`); got < n {
		t.Errorf("toc.html lists %d chapters, want %d", got, n)
	}
}
