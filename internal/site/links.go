package site

import (
	"fmt"
	"html"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/render"
)

// CheckLinks checks that every link between chapters that names a
// #fragment names an element of the target page (a heading, a footnote, an
// element with an id in raw HTML). pages[i] is the rendering of
// b.Chapters[i]. Problems are returned as a diag.List naming the line of
// each link; when the book's broken links are warnings
// (book.Config.WarnBrokenLinks), they are returned as warnings instead and
// the error is nil.
func CheckLinks(b *book.Book, pages []*render.Page) (warnings []*diag.Error, err error) {
	return checkLinks(b, pages, nil)
}

// checkLinks is CheckLinks, taking each page's ids from c (when not nil)
// where it can.
func checkLinks(b *book.Book, pages []*render.Page, c *idCache) ([]*diag.Error, error) {
	sets, err := c.sets(pages)
	if err != nil {
		return nil, err
	}
	ids := make(map[string]map[string]bool, len(pages))
	for i, ch := range b.Chapters {
		ids[ch.Path] = sets[i]
	}
	var errs diag.List
	for _, pg := range pages {
		for _, l := range pg.Links {
			set, ok := ids[l.Target]
			if !ok {
				errs = append(errs, &diag.Error{File: l.File, Line: l.Line, Msg: fmt.Sprintf("link to %s, which is not a chapter", b.RepoPath(l.Target))})
				continue
			}
			if l.Fragment != "" && !set[l.Fragment] {
				errs = append(errs, &diag.Error{File: l.File, Line: l.Line, Msg: fmt.Sprintf("link to %s#%s: the page has no element with id %q", b.RepoPath(l.Target), l.Fragment, l.Fragment)})
			}
		}
	}
	if b.Config.WarnBrokenLinks() {
		return errs, nil
	}
	return nil, errs.Err()
}

// pageIDs returns the ids of the elements of pg: its headings' and those
// of every id attribute of its HTML.
func pageIDs(pg *render.Page) (map[string]bool, error) {
	set := map[string]bool{}
	for _, h := range pg.Headings {
		set[h.ID] = true
	}
	h, err := pg.Body()
	if err != nil {
		return nil, err
	}
	eachAttr(h, []string{"id"}, func(_ string, _, vs, ve int) {
		set[html.UnescapeString(string(h[vs:ve]))] = true
	})
	return set, nil
}
