package site

import (
	"os"
	"path/filepath"
	"slices"
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
//	-- lacks PATH --    fragments the site file PATH must not hold, one
//	                    per paragraph, white space folded
//	-- error --         the build's problems, each "file:line: " and a
//	                    substring of the message, one per line
//	-- warning --       likewise, the warnings of a build that succeeds
//	-- no-warning --    a substring no warning may contain, one per line
//
// The rules are mdBook's site layout and output (index, redirects, print
// page, search breadcrumbs) as data.
func TestSpec(t *testing.T) {
	for _, c := range spectest.Load(t, "testdata/spec") {
		t.Run(c.Name, func(t *testing.T) {
			root := t.TempDir()
			c.WriteTree(t, root)
			out := filepath.Join(root, "site")
			warnings, err := buildSite(root, out)
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
			var got []string
			for _, w := range warnings {
				got = append(got, w.Error())
			}
			checked := 0
			if want, ok := c.Files["warning"]; ok {
				checked++
				for _, w := range strings.Split(strings.TrimSpace(want), "\n") {
					if !slices.ContainsFunc(got, func(g string) bool { return strings.Contains(g, w) }) {
						t.Errorf("%s\nno warning contains %q; got:\n%s", c.Comment, w, strings.Join(got, "\n"))
					}
				}
			}
			if bad, ok := c.Files["no-warning"]; ok {
				checked++
				for _, w := range strings.Split(strings.TrimSpace(bad), "\n") {
					if slices.ContainsFunc(got, func(g string) bool { return strings.Contains(g, w) }) {
						t.Errorf("%s\na warning contains %q:\n%s", c.Comment, w, strings.Join(got, "\n"))
					}
				}
			}
			for _, name := range c.Order {
				kind, p, ok := strings.Cut(name, " ")
				if !ok || name == "warning" || name == "no-warning" {
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
				case "lacks":
					if rerr != nil {
						t.Errorf("%s\n%v", c.Comment, rerr)
						continue
					}
					got := spectest.Fold(string(data))
					for _, frag := range strings.Split(strings.TrimSpace(c.Files[name]), "\n\n") {
						if strings.Contains(got, spectest.Fold(frag)) {
							t.Errorf("%s\n%s holds %q:\n%s", c.Comment, p, spectest.Fold(frag), data)
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
// to do in these books: no Go), returning the warnings of a build that
// succeeds: book.toml's, the includes', the pages' and the links'.
func buildSite(root, out string) ([]*diag.Error, error) {
	b, err := book.Load(root)
	if err != nil {
		return nil, err
	}
	warnings := append(append([]*diag.Error(nil), b.Config.Warnings...), b.Warnings...)
	if err := CheckBook(b); err != nil {
		return nil, err
	}
	docs, err := expand.All(b)
	if err != nil {
		return nil, err
	}
	r := render.New(b)
	var pages []*render.Page
	var errs diag.List
	for _, d := range docs {
		warnings = append(warnings, d.Warnings...)
		pg, err := r.Render(d)
		if err != nil {
			errs = append(errs, diag.All(err)...)
			continue
		}
		warnings = append(warnings, pg.Warnings...)
		pages = append(pages, pg)
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	opt := Options{}
	if b.NotFound != nil {
		d, err := expand.Expand(b, b.NotFound)
		if err != nil {
			return nil, err
		}
		if opt.NotFound, err = r.Render(d); err != nil {
			return nil, err
		}
	}
	res, err := Write(b, pages, out, opt)
	if err != nil {
		return nil, err
	}
	return append(warnings, res.Warnings...), nil
}
