package render

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	xhtml "golang.org/x/net/html"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/expand"
	"github.com/ownership-book/ownership/internal/spectest"
)

// TestSpec runs testdata/spec, one Markdown rule per case (mdBook's, or
// where bookgen differs, the reason): the archive's book/... and examples/...
// files are a repository (book/SUMMARY.md defaults to one chapter, ch.md),
// every chapter is expanded and rendered, and the expectations are
//
//	-- html CH --      fragments the page of chapter CH must contain, one per
//	                   paragraph (blank-line separated), white space folded
//	-- not CH --       fragments it must not contain
//	-- text CH --      lines its text (tags dropped, entities decoded) must
//	                   contain, white space folded
//	-- no-text CH --   lines its text must not contain
//	-- headings CH --  its headings, one "LEVEL ID TEXT" line each
//	-- search CH --    its search sections, one "TITLE | ANCHOR | TEXT" each
//	-- error --        the build's problems, each "file:line: " and a
//	                   substring of the message, one per line
func TestSpec(t *testing.T) {
	for _, c := range spectest.Load(t, "testdata/spec") {
		t.Run(c.Name, func(t *testing.T) {
			root := t.TempDir()
			if _, ok := c.Files["book/SUMMARY.md"]; !ok {
				c.Files["book/SUMMARY.md"] = "- [Chapter](ch.md)\n"
				c.Order = append(c.Order, "book/SUMMARY.md")
			}
			c.WriteTree(t, root)
			pages, err := renderBook(root)
			if want, ok := c.Files["error"]; ok {
				if err == nil {
					t.Fatalf("%s\nrendered without error, want:\n%s", c.Comment, want)
				}
				var got []string
				for _, e := range diag.All(err) {
					got = append(got, e.Error())
				}
				for _, w := range strings.Split(strings.TrimSpace(want), "\n") {
					if !matchesAny(got, w) {
						t.Errorf("%s\nno error matches %q; got:\n%s", c.Comment, w, strings.Join(got, "\n"))
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\n%v", c.Comment, err)
			}
			checked := 0
			for _, name := range c.Order {
				kind, ch, ok := strings.Cut(name, " ")
				if !ok {
					continue
				}
				pg := pages[ch]
				if pg == nil {
					t.Fatalf("%s: section %q: no chapter %s", c.Name, name, ch)
				}
				body := c.Files[name]
				checked++
				switch kind {
				case "html", "not":
					html := spectest.Fold(string(pg.HTML))
					for _, frag := range strings.Split(strings.TrimSpace(body), "\n\n") {
						frag = spectest.Fold(frag)
						if has := strings.Contains(html, frag); has != (kind == "html") {
							t.Errorf("%s\n%s: contains %q = %v; HTML:\n%s", c.Comment, ch, frag, has, pg.HTML)
						}
					}
				case "text", "no-text":
					txt := spectest.Fold(pageText(pg.HTML))
					for _, frag := range strings.Split(strings.TrimSpace(body), "\n") {
						frag = spectest.Fold(frag)
						if has := strings.Contains(txt, frag); has != (kind == "text") {
							t.Errorf("%s\n%s: text contains %q = %v; text:\n%s", c.Comment, ch, frag, has, txt)
						}
					}
				case "headings":
					var got strings.Builder
					for _, h := range pg.Headings {
						fmt.Fprintf(&got, "%d %s %s\n", h.Level, h.ID, h.Text)
					}
					if got.String() != body {
						t.Errorf("%s\n%s headings:\n%s\nwant:\n%s", c.Comment, ch, got.String(), body)
					}
				case "search":
					var got strings.Builder
					for _, s := range pg.Sections {
						fmt.Fprintf(&got, "%s | %s | %s\n", s.Title, s.Anchor, s.Text)
					}
					if got.String() != body {
						t.Errorf("%s\n%s search sections:\n%s\nwant:\n%s", c.Comment, ch, got.String(), body)
					}
				default:
					t.Fatalf("%s: unknown section kind %q", c.Name, kind)
				}
			}
			if checked == 0 {
				t.Fatalf("%s: no expectation", c.Name)
			}
		})
	}
}

// renderBook loads, expands and renders the book at root, returning each
// chapter's page by its book-relative path.
func renderBook(root string) (map[string]*Page, error) {
	b, err := book.Load(root)
	if err != nil {
		return nil, err
	}
	docs, err := expand.All(b)
	if err != nil {
		return nil, err
	}
	r := New(b)
	pages := map[string]*Page{}
	var errs diag.List
	for _, d := range docs {
		pg, err := r.Render(d)
		if err != nil {
			errs = append(errs, diag.All(err)...)
			continue
		}
		pages[d.Chapter.File()] = pg
	}
	return pages, errs.Err()
}

// matchesAny reports whether one of got starts with want's "file:line: "
// and contains the rest of want.
func matchesAny(got []string, want string) bool {
	loc, msg := "", want
	if i := strings.Index(want, ": "); i >= 0 && strings.Contains(want[:i], ":") {
		loc, msg = want[:i+2], want[i+2:]
	}
	for _, g := range got {
		if strings.HasPrefix(g, loc) && strings.Contains(g, msg) {
			return true
		}
	}
	return false
}

// pageText returns the character data of an HTML fragment, entities
// decoded.
func pageText(h []byte) string {
	var b strings.Builder
	z := xhtml.NewTokenizer(bytes.NewReader(h))
	for {
		switch z.Next() {
		case xhtml.ErrorToken:
			return b.String()
		case xhtml.TextToken:
			b.Write(z.Text())
		}
	}
}
