package site

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ownership-book/ownership/internal/render"
)

// TestIncrementalCachesSeeEdits rebuilds a book large enough to share its
// sidebar (InlineSidebarMax) after each of a series of edits, through one
// Incremental and its caches (the shared sidebar script and contents page,
// 404.html,
// print.html's sections, the pages' shared inputs), and checks after each
// that the site equals a whole build of the same book: an edit to one
// chapter (its print.html section), a chapter retitled in SUMMARY.md (the
// sidebar and the contents page), two chapters swapped (the print page's
// ids and order), and a new SUMMARY.md title when book.toml sets none
// (every page's book title).
func TestIncrementalCachesSeeEdits(t *testing.T) {
	b, pages := bigBook(t, InlineSidebarMax+20)
	out := filepath.Join(t.TempDir(), "site")
	inc := &Incremental{}
	build := func(step string) {
		t.Helper()
		res, err := Write(b, pages, out, Options{Incremental: inc})
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if res.Finish != nil {
			if err := res.Finish(context.Background()); err != nil {
				t.Fatalf("%s: Finish: %v", step, err)
			}
		}
		whole := filepath.Join(t.TempDir(), "whole")
		if _, err := Write(b, pages, whole, Options{Incremental: &Incremental{}}); err != nil {
			t.Fatalf("%s: whole build: %v", step, err)
		}
		got, want := snapshot(t, out), snapshot(t, whole)
		names := func(m map[string]os.FileInfo) []string {
			var n []string
			for k := range m {
				n = append(n, k)
			}
			slices.Sort(n)
			return n
		}
		if g, w := names(got), names(want); !slices.Equal(g, w) {
			t.Errorf("%s: files\n%v\nwant\n%v", step, g, w)
		}
		for name := range want {
			if read(t, filepath.Join(out, name)) != read(t, filepath.Join(whole, name)) {
				t.Errorf("%s: %s differs from a whole build", step, name)
			}
		}
	}
	build("first")
	if _, err := os.Stat(filepath.Join(out, "toc.html")); err != nil {
		t.Fatalf("the book does not share its sidebar: %v", err)
	}
	build("unchanged")

	edited := *pages[5]
	edited.HTML = []byte(`<h1 id="c0006">Chapter &lt;6&gt;</h1><p>New text, <a href="c0007.html">next</a>.</p>`)
	pages[5] = &edited
	build("an edited chapter")
	if !strings.Contains(read(t, filepath.Join(out, "print.html")), "New text, ") {
		t.Error("print.html does not show the edit")
	}

	b.Chapters[7].Title = "Retitled <7>"
	build("a chapter retitled")
	if !strings.Contains(read(t, filepath.Join(out, "toc.html")), "Retitled &lt;7&gt;") {
		t.Error("toc.html does not show the new title")
	}

	// Swap two chapters in reading order (their pages too).
	b.Chapters[2], b.Chapters[3] = b.Chapters[3], b.Chapters[2]
	pages[2], pages[3] = pages[3], pages[2]
	b.Items[2], b.Items[3] = b.Items[3], b.Items[2]
	build("two chapters swapped")

	b.Config.Title = ""
	b.Title = "Summary title"
	build("book.toml without a title")
	b.Title = "Another title"
	build("a new SUMMARY.md title")
	if !strings.Contains(read(t, filepath.Join(out, htmlPath(b.Chapters[9].Path))), "Another title") {
		t.Error("an unchanged chapter's page does not show the new book title")
	}
}

// TestIncrementalLinkCheckSeesEdits checks links through one Incremental
// (whose idCache keeps every page's ids): a link to an anchor builds while
// the target page has it, fails once an edit removes it, and builds again
// when it is back.
func TestIncrementalLinkCheckSeesEdits(t *testing.T) {
	b, pages := bigBook(t, 20)
	out := filepath.Join(t.TempDir(), "site")
	inc := &Incremental{}
	target := b.Chapters[4].Path
	with := *pages[4]
	with.HTML = []byte(`<h1 id="t">T</h1><p><span id="extra">x</span></p>`)
	without := with
	without.HTML = []byte(`<h1 id="t">T</h1><p>x</p>`)
	linking := *pages[3]
	linking.Links = []render.Link{{Target: target, Fragment: "extra", File: "book/x.md", Line: 7}}
	pages[3] = &linking
	write := func() error {
		res, err := Write(b, pages, out, Options{Incremental: inc})
		if err == nil && res.Finish != nil {
			err = res.Finish(context.Background())
		}
		return err
	}
	pages[4] = &with
	if err := write(); err != nil {
		t.Fatalf("with the anchor: %v", err)
	}
	pages[4] = &without
	if err := write(); err == nil || !strings.Contains(err.Error(), `book/x.md:7: link to book/`+target+`#extra: the page has no element with id "extra"`) {
		t.Fatalf("without the anchor: %v", err)
	}
	restored := with
	pages[4] = &restored
	if err := write(); err != nil {
		t.Fatalf("with the anchor again: %v", err)
	}
}
