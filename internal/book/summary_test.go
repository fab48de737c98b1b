package book

import (
	"errors"
	"fmt"
	"html"
	"strings"
	"testing"

	"github.com/ownership-book/ownership/internal/diag"
)

// outline renders parsed items one per line so tests can compare shapes.
func outline(items []*Item) string {
	var b strings.Builder
	var walk func(its []*Item, depth int)
	walk = func(its []*Item, depth int) {
		for _, it := range its {
			b.WriteString(strings.Repeat("  ", depth))
			switch it.Kind {
			case KindSeparator:
				fmt.Fprintf(&b, "--- %s@%d\n", sectionName(it.Section), it.Line)
			case KindPartTitle:
				fmt.Fprintf(&b, "# %s@%d\n", it.Title, it.Line)
			default:
				p := it.Path
				if it.Draft {
					p = "draft"
				}
				if p != "draft" && (!strings.HasSuffix(p, ".md") || HTMLPath(p) != strings.TrimSuffix(p, ".md")+".html") {
					p += " => " + HTMLPath(p)
				}
				t := it.Title
				if it.TitleHTML != html.EscapeString(it.Title) {
					t += " {" + it.TitleHTML + "}"
				}
				fmt.Fprintf(&b, "%s%s %s (%s)@%d\n", sectionName(it.Section), it.NumberString(), t, p, it.Line)
			}
			walk(it.Children, depth+1)
		}
	}
	walk(items, 0)
	return b.String()
}

func sectionName(s Section) string {
	return [...]string{"prefix", "num ", "suffix"}[s]
}

// TestSummarySpec runs every case of testdata/summary: each file is a
// txtar archive whose comment states the rule and the mdBook documentation
// or source it follows, with a SUMMARY.md and either the outline ParseSummary
// must give ("title: T" first when the summary has one; one line per entry,
// see outline) or the error it must return ("book/SUMMARY.md:LINE: " and a
// substring of the message). The cases are data, as goldmark runs the
// CommonMark spec's examples.
func TestSummarySpec(t *testing.T) {
	for _, c := range specCases(t, "testdata/summary") {
		t.Run(c.Name, func(t *testing.T) {
			src := c.File(t, "SUMMARY.md")
			// -- plain --: parsed as a plain mdBook book's (book.Config.Plain).
			_, plain := c.Files["plain"]
			title, items, warnings, err := parseSummary([]byte(src), "book", plain)
			if want, ok := c.Files["error"]; ok {
				var de *diag.Error
				if !errors.As(err, &de) {
					t.Fatalf("%s\nerr = %v, want *diag.Error %s", c.Comment, err, want)
				}
				loc := fmt.Sprintf("%s:%d: ", de.File, de.Line)
				if w := strings.TrimSpace(want); !strings.HasPrefix(w, loc) || !strings.Contains(de.Msg, strings.TrimPrefix(w, loc)) {
					t.Errorf("%s\nerr = %s%s\nwant %s", c.Comment, loc, de.Msg, w)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\nParseSummary: %v", c.Comment, err)
			}
			got := outline(items)
			if title != "" {
				got = "title: " + title + "\n" + got
			}
			if want := c.File(t, "outline"); got != want {
				t.Errorf("%s\noutline:\n%s\nwant:\n%s", c.Comment, got, want)
			}
			// -- warnings --: one "file:line: message" a line, in order.
			var gw strings.Builder
			for _, w := range warnings {
				gw.WriteString(w.Error() + "\n")
			}
			if want := c.Files["warnings"]; gw.String() != want {
				t.Errorf("%s\nwarnings:\n%s\nwant:\n%s", c.Comment, gw.String(), want)
			}
		})
	}
}

// FuzzParseSummary checks that the parser never panics, that every error
// names SUMMARY.md and a line inside the input, and that accepted input
// yields consistent numbering and unique, clean paths.
func FuzzParseSummary(f *testing.F) {
	for _, s := range []string{
		"# Summary\n[P](p.md)\n# Part\n- [A](a.md)\n    - [B]()\n---\n[S](s.md)\n",
		"- [A](a.md)\n\t* [B](b/c.md)\n",
		"<!-- x -->\n- [A \\] b](<a b.md>)\n",
		"- [A](../x.md)\n",
		"  - [A](a.md)\n - [B](b.md)\n",
		"- [A *long*\n  `title`](first/README)\n- [B\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		_, items, err := ParseSummary(src)
		nlines := strings.Count(string(src), "\n") + 1
		if err != nil {
			de, ok := err.(*diag.Error)
			if !ok || de.File != SummaryFile || de.Line < 1 || de.Line > nlines {
				t.Fatalf("bad error %#v for %q", err, src)
			}
			return
		}
		seen := map[string]bool{}
		top := 0
		var check func(its []*Item, parent []int)
		check = func(its []*Item, parent []int) {
			n := 0
			for _, it := range its {
				if it.Line < 1 || it.Line > nlines {
					t.Fatalf("item line %d outside input", it.Line)
				}
				if it.Kind != KindChapter {
					continue
				}
				if it.Path != "" {
					if seen[it.Path] || strings.HasPrefix(it.Path, "../") {
						t.Fatalf("bad path %q", it.Path)
					}
					seen[it.Path] = true
				}
				if it.Section != Numbered {
					if it.Number != nil || it.Children != nil {
						t.Fatalf("unnumbered item with number or children: %+v", it)
					}
					continue
				}
				n++
				want := n
				if parent == nil {
					top++
					want = top
				}
				if len(it.Number) != len(parent)+1 || it.Number[len(parent)] != want {
					t.Fatalf("item %q numbered %v under %v, want last %d", it.Title, it.Number, parent, want)
				}
				check(it.Children, it.Number)
			}
		}
		check(items, nil)
	})
}
