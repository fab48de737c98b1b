package site

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/expand"
	"github.com/ownership-book/ownership/internal/render"
	"github.com/ownership-book/ownership/internal/spectest"
)

// TestSpec runs testdata/spec: each case is a repository (book/SUMMARY.md,
// book/book.toml, chapters) built into a site by the real stages, and
//
//	-- file PATH --     fragments the site file PATH must hold, one per
//	                    paragraph, white space folded ("assets/search.json"
//	                    names the content-hashed search index)
//	-- no-file PATH --  PATH must not be in the site
//	-- error --         the build's problems, each "file:line: " and a
//	                    substring of the message, one per line
//
// The rules are mdBook's site layout and output (index, redirects, print
// page, search breadcrumbs) as data.
func TestSpec(t *testing.T) {
	for _, c := range spectest.Load(t, "testdata/spec") {
		t.Run(c.Name, func(t *testing.T) {
			root := t.TempDir()
			c.WriteTree(t, root)
			out := filepath.Join(root, "site")
			err := buildSite(root, out)
			if want, ok := c.Files["error"]; ok {
				if err == nil {
					t.Fatalf("%s\nbuilt without error, want:\n%s", c.Comment, want)
				}
				var got []string
				for _, e := range diag.All(err) {
					got = append(got, e.Error())
				}
				for _, w := range strings.Split(strings.TrimSpace(want), "\n") {
					found := false
					for _, g := range got {
						found = found || strings.Contains(g, w)
					}
					if !found {
						t.Errorf("%s\nno error contains %q; got:\n%s", c.Comment, w, strings.Join(got, "\n"))
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\n%v", c.Comment, err)
			}
			checked := 0
			for _, name := range c.Order {
				kind, p, ok := strings.Cut(name, " ")
				if !ok {
					continue
				}
				checked++
				if p == "assets/search.json" {
					m, _ := filepath.Glob(filepath.Join(out, "assets", "search.*.json"))
					if len(m) == 1 {
						p = "assets/" + filepath.Base(m[0])
					}
				}
				data, rerr := os.ReadFile(filepath.Join(out, filepath.FromSlash(p)))
				switch kind {
				case "file":
					if rerr != nil {
						t.Errorf("%s\n%v", c.Comment, rerr)
						continue
					}
					got := spectest.Fold(string(data))
					for _, frag := range strings.Split(strings.TrimSpace(c.Files[name]), "\n\n") {
						if !strings.Contains(got, spectest.Fold(frag)) {
							t.Errorf("%s\n%s lacks %q:\n%s", c.Comment, p, spectest.Fold(frag), data)
						}
					}
				case "no-file":
					if rerr == nil {
						t.Errorf("%s\n%s exists", c.Comment, p)
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

// buildSite runs load, expand, render and write (verification has nothing
// to do in these books: no Go).
func buildSite(root, out string) error {
	b, err := book.Load(root)
	if err != nil {
		return err
	}
	if err := CheckBook(b); err != nil {
		return err
	}
	docs, err := expand.All(b)
	if err != nil {
		return err
	}
	r := render.New(b)
	var pages []*render.Page
	var errs diag.List
	for _, d := range docs {
		pg, err := r.Render(d)
		if err != nil {
			errs = append(errs, diag.All(err)...)
			continue
		}
		pages = append(pages, pg)
	}
	if err := errs.Err(); err != nil {
		return err
	}
	opt := Options{}
	if b.NotFound != nil {
		d, err := expand.Expand(b, b.NotFound)
		if err != nil {
			return err
		}
		if opt.NotFound, err = r.Render(d); err != nil {
			return err
		}
	}
	_, err = Write(b, pages, out, opt)
	return err
}
