package site

import (
	"fmt"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/diag"
)

// reserved maps the site paths of the pages the site stage writes itself to
// what each page is.
var reserved = map[string]string{
	"index.html": "the book's front page (a copy of the first chapter)",
	"404.html":   "the page served for unknown addresses",
	"print.html": "the whole book on one page",
}

// CheckBook checks, before anything is verified or rendered, that b can be
// written as a site: it has at least one chapter, no chapter's page takes
// the name of a page the site stage writes itself (index.html unless the
// first chapter is index.md or README.md, or the book is a plain mdBook
// book (book.Config.Plain), 404.html, print.html), and no two
// chapters share a page (README.md and index.md in one folder are both its
// index.html, mdBook's rule), and every [output.html.search.chapter] key
// names a chapter or a folder of chapters. Problems are *diag.Error values
// naming SUMMARY.md (Book.SummaryFile) and, for a chapter, the line that
// lists it, or book.toml and the key's line.
func CheckBook(b *book.Book) error {
	if len(b.Chapters) == 0 {
		return &diag.Error{File: b.SummaryFile, Msg: "the book has no chapters"}
	}
	var errs diag.List
	pages := map[string]*book.Item{}
	for i, ch := range b.Chapters {
		page := htmlPath(ch.Path)
		if prev, ok := pages[page]; ok {
			errs = append(errs, &diag.Error{File: b.SummaryFile, Line: ch.Line,
				Msg: fmt.Sprintf("chapter %s would be written to %s, the page of %s (line %d): a README.md is its folder's index.html, as in mdBook; rename one", ch.File(), page, prev.File(), prev.Line)})
			continue
		}
		pages[page] = ch
		what, ok := reserved[page]
		if !ok || (page == "index.html" && (i == 0 || b.Config.Plain)) {
			// A plain mdBook book's README.md (or index.md) that is not
			// the first chapter is the site's index.html, as mdBook
			// writes it: its page is written after the first chapter's
			// copy and replaces it (mdbook-html hbs_renderer.rs
			// render_item; index preprocessor).
			continue
		}
		hint := ""
		if page == "index.html" {
			hint = " (a plain mdBook book, with no [bookgen] table, makes it the front page instead, as mdBook does)"
		}
		errs = append(errs, &diag.Error{
			File: b.SummaryFile,
			Line: ch.Line,
			Msg: fmt.Sprintf("chapter %s would be written to %s, which is %s; rename the file%s",
				ch.File(), page, what, hint),
		})
	}
	for _, s := range b.Config.SearchChapters {
		found := false
		for _, ch := range b.Chapters {
			found = found || book.PathWithin(ch.Path, s.Path)
		}
		if !found {
			// mdBook refuses it too (search.rs validate_chapter_config).
			errs = append(errs, &diag.Error{File: b.ConfigFile, Line: s.Line,
				Msg: fmt.Sprintf("[output.html.search.chapter] key %q matches no chapter (a path from %s/, a folder or a chapter file)", s.Key, b.Src)})
		}
	}
	return errs.Err()
}
