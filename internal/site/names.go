package site

import (
	"fmt"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/diag"
)

// reserved maps the chapter files whose page would take the name of a page
// the site stage writes itself to what that page is.
var reserved = map[string]string{
	"index.md": "the book's front page (a copy of the first chapter)",
	"404.md":   "the page served for unknown addresses",
	"print.md": "the whole book on one page",
}

// CheckBook checks, before anything is verified or rendered, that b can be
// written as a site: it has at least one chapter, and no chapter's page
// takes the name of a page the site stage writes itself (index.html unless
// index.md is the first chapter, 404.html, print.html). Problems are
// *diag.Error values naming book/SUMMARY.md and, for a chapter, the line
// that lists it.
func CheckBook(b *book.Book) error {
	if len(b.Chapters) == 0 {
		return &diag.Error{File: "book/SUMMARY.md", Msg: "the book has no chapters"}
	}
	var errs diag.List
	for i, ch := range b.Chapters {
		what, ok := reserved[ch.Path]
		if !ok || (ch.Path == "index.md" && i == 0) {
			continue
		}
		errs = append(errs, &diag.Error{
			File: "book/SUMMARY.md",
			Line: ch.Line,
			Msg: fmt.Sprintf("chapter book/%s would be written to %s, which is %s; rename the file",
				ch.Path, htmlPath(ch.Path), what),
		})
	}
	return errs.Err()
}
