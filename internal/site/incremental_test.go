package site

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ownership-book/ownership/internal/render"
)

// TestIncrementalWritesOnlyWhatChanged checks that with Options.Incremental
// a rebuild after an edit to one chapter rewrites that chapter's page and
// the pages that show every chapter (print.html, the search index) and
// nothing else, that the site it leaves equals a whole build of the same
// book, that a chapter removed from the book loses its page, and that a
// failed rebuild changes no file.
func TestIncrementalWritesOnlyWhatChanged(t *testing.T) {
	b, pages := bigBook(t, 40)
	out := filepath.Join(t.TempDir(), "site")
	inc := &Incremental{}
	if _, err := Write(b, pages, out, Options{Incremental: inc}); err != nil {
		t.Fatal(err)
	}
	old := snapshot(t, out)
	time.Sleep(10 * time.Millisecond) // distinct modification times

	// Edit chapter 5: a new *Page, as render.Cache gives for new Markdown.
	edited := *pages[5]
	edited.HTML = []byte(`<h1 id="c0006">Chapter &lt;6&gt;</h1><p>New text.</p>`)
	edited.Sections = []render.Section{{Title: "Chapter <6>", Text: "New text."}}
	pages[5] = &edited
	res, err := Write(b, pages, out, Options{Incremental: inc})
	if err != nil {
		t.Fatal(err)
	}
	if res.Finish == nil {
		t.Fatal("an incremental rebuild left nothing for Finish (print.html, the search index)")
	}
	if err := res.Finish(); err != nil {
		t.Fatal(err)
	}
	now := snapshot(t, out)
	var changed []string
	for name, fi := range now {
		if o, ok := old[name]; !ok || !o.ModTime().Equal(fi.ModTime()) {
			changed = append(changed, name)
		}
	}
	want := map[string]bool{htmlPath(b.Chapters[5].Path): true, "print.html": true, "assets/search.json": true}
	for _, name := range changed {
		if !want[name] {
			t.Errorf("rebuild rewrote %s", name)
		}
		delete(want, name)
	}
	for name := range want {
		t.Errorf("rebuild did not rewrite %s", name)
	}
	if !strings.Contains(read(t, filepath.Join(out, htmlPath(b.Chapters[5].Path))), "New text.") {
		t.Error("the edited page does not show the edit")
	}
	if len(res.Files) != len(now) {
		t.Errorf("Result.Files has %d files, the folder %d", len(res.Files), len(now))
	}

	// The same book built whole gives the same files.
	whole := filepath.Join(t.TempDir(), "whole")
	if _, err := Write(b, pages, whole, Options{Incremental: &Incremental{}}); err != nil {
		t.Fatal(err)
	}
	for name := range now {
		if read(t, filepath.Join(out, name)) != read(t, filepath.Join(whole, name)) {
			t.Errorf("%s differs from a whole build", name)
		}
	}

	// A failed rebuild (a link to a missing anchor) changes nothing.
	broken := *pages[3]
	broken.Links = []render.Link{{Target: b.Chapters[4].Path, Fragment: "nowhere", File: "book/x.md", Line: 1}}
	pages[3] = &broken
	if _, err := Write(b, pages, out, Options{Incremental: inc}); err == nil {
		t.Fatal("a link to a missing anchor built")
	}
	for name, fi := range snapshot(t, out) {
		if !now[name].ModTime().Equal(fi.ModTime()) {
			t.Errorf("the failed rebuild changed %s", name)
		}
	}

	// A chapter removed from the book loses its page.
	pages[3] = &edited
	gone := htmlPath(b.Chapters[len(b.Chapters)-1].Path)
	b.Chapters = b.Chapters[:len(b.Chapters)-1]
	pages = pages[:len(pages)-1]
	b.Items = b.Items[:len(b.Items)-1]
	res, err = Write(b, pages, out, Options{Incremental: inc})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Finish(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, gone)); !os.IsNotExist(err) {
		t.Errorf("%s of a removed chapter is still there (%v)", gone, err)
	}
}

// snapshot maps every file under dir to its FileInfo.
func snapshot(t *testing.T, dir string) map[string]os.FileInfo {
	t.Helper()
	m := map[string]os.FileInfo{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		m[filepath.ToSlash(rel)] = fi
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}
