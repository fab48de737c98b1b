package expand

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/spectest"
)

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// bookWith makes a repository holding files plus book/ch.md = chapter, and
// returns the book and the chapter item.
func bookWith(t *testing.T, chapter string, files map[string]string) (*book.Book, *book.Item) {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, files)
	writeTree(t, dir, map[string]string{"book/ch.md": chapter})
	it := &book.Item{Kind: book.KindChapter, Title: "Ch", Path: "ch.md", Line: 1, Source: []byte(chapter)}
	return &book.Book{Root: dir, Dir: filepath.Join(dir, "book"), Chapters: []*book.Item{it}}, it
}

// TestExpandDropsBOM checks that a byte order mark at the start of an
// included file does not reach the page (nor a go block, where the parser
// would refuse it).
func TestExpandDropsBOM(t *testing.T) {
	b, ch := bookWith(t, "```go\n{{#include ../examples/s/bom.go}}\n```\n", map[string]string{
		"examples/s/bom.go": "\ufeffpackage s\n\nvar X = 1\n",
	})
	d, err := Expand(b, ch)
	if err != nil {
		t.Fatal(err)
	}
	if want := "```go\npackage s\n\nvar X = 1\n```\n"; string(d.Markdown) != want {
		t.Errorf("Markdown = %q, want %q", d.Markdown, want)
	}
}

// TestExpandErrorDetails checks what the case files cannot show: the
// chain of includes in an error's detail, and that every problem of a
// chapter is reported.
func TestExpandErrorDetails(t *testing.T) {
	files := map[string]string{"book/nested-bad.md": "fine\n{{#include nope.go}}\n"}
	t.Run("nested error names the chain", func(t *testing.T) {
		b, ch := bookWith(t, "# Ch\n{{#include nested-bad.md}}\n", files)
		_, err := Expand(b, ch)
		var de *diag.Error
		if !errors.As(err, &de) || de.Detail != "included from book/ch.md:2" {
			t.Fatalf("err = %#v, want Detail naming book/ch.md:2", err)
		}
	})
	t.Run("all problems of a chapter are reported", func(t *testing.T) {
		b, ch := bookWith(t, "{{#include a.go}}\nok\n{{#include b.go}}\n", files)
		_, err := Expand(b, ch)
		errs := diag.All(err)
		if len(errs) != 2 || errs[0].Line != 1 || errs[1].Line != 3 {
			t.Fatalf("errors = %v, want two at lines 1 and 3", err)
		}
	})
}

func TestExpandRefusesSymlinkOutsideRepo(t *testing.T) {
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"secret.go": "secret\n"})
	b, ch := bookWith(t, "{{#include link.go}}\n", nil)
	if err := os.Symlink(filepath.Join(outside, "secret.go"), filepath.Join(b.Dir, "link.go")); err != nil {
		t.Fatal(err)
	}
	_, err := Expand(b, ch)
	if err == nil || !strings.Contains(err.Error(), "outside the repository") {
		t.Fatalf("err = %v, want outside-the-repository refusal", err)
	}
}

func TestAll(t *testing.T) {
	b, ch := bookWith(t, "{{#include nope.go}}\n", nil)
	ok := &book.Item{Kind: book.KindChapter, Title: "Ok", Path: "ok.md", Line: 2, Source: []byte("fine\n")}
	writeTree(t, b.Root, map[string]string{"book/ok.md": "fine\n"})
	b.Chapters = []*book.Item{ch, ok}
	docs, err := All(b)
	if len(docs) != 1 || docs[0].Chapter != ok {
		t.Errorf("docs = %v, want only ok.md", docs)
	}
	var l diag.List
	if !errors.As(err, &l) || len(l) != 1 || l[0].File != "book/ch.md" {
		t.Errorf("err = %v, want a diag.List with the ch.md problem", err)
	}
}

func TestParseDirective(t *testing.T) {
	tests := []struct {
		args string
		want Directive
	}{
		{"a.go", Directive{Path: "a.go"}},
		{"a.go:3", Directive{Path: "a.go", Start: 3, End: 3}},
		{"a.go:3:7", Directive{Path: "a.go", Start: 3, End: 7}},
		{"a.go:3:", Directive{Path: "a.go", Start: 3}},
		{"a.go::7", Directive{Path: "a.go", End: 7}},
		{"a.go::", Directive{Path: "a.go"}},
		{"a.go:", Directive{Path: "a.go"}},
		{"a.go:my-anchor_1", Directive{Path: "a.go", Anchor: "my-anchor_1"}},
		{"../x/a.go:state", Directive{Path: "../x/a.go", Anchor: "state"}},
	}
	for _, tt := range tests {
		got, err := ParseDirective(tt.args)
		tt.want.Args = tt.args
		tt.want.Kind = "include"
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseDirective(%q) = %+v, %v; want %+v", tt.args, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", ":3", "a.go:x:1", "a.go:1:y", "a b.go", "a.go:1:2:3", "a.go:0:3", "a.go:$"} {
		if d, err := ParseDirective(bad); err == nil {
			t.Errorf("ParseDirective(%q) = %+v, want an error", bad, d)
		}
	}
}

// FuzzScanLine checks that scanning never panics and loses no text: the
// segments put back together give the line, less the backslash of each
// escaped directive.
func FuzzScanLine(f *testing.F) {
	for _, s := range []string{
		"{{#include a.go}}", "x {{#include a.go:1:2}} y {{#include b.md:anchor}}",
		`\{{#include a.go}}`, "{{ #include a.go }}", "{{#include}}", "{{#title T}}", "{{#if}} {{ x }}", "{{#include a}b}}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		segs, err := ScanLine(s)
		if err != nil {
			if !strings.Contains(s, "{{") {
				t.Fatalf("error %v for a line without {{", err)
			}
			return
		}
		var b strings.Builder
		for _, sg := range segs {
			b.WriteString(sg.Text)
			if sg.Directive != nil && sg.Directive.Unsupported == "" && sg.Directive.Kind != "title" {
				if sg.Directive.Path == "" {
					t.Fatalf("directive without path in %q", s)
				}
				if d := sg.Directive; d.Start > 0 && d.End > 0 && d.End < d.Start {
					t.Fatalf("reversed range accepted in %q", s)
				}
			}
		}
		got := b.String()
		if len(got) > len(s) || (got != s && !strings.Contains(s, `\{{`)) {
			t.Fatalf("segments give %q for %q", got, s)
		}
	})
}

// TestIncludeSpec runs testdata/include: each case is a repository
// (book/ch.md is the chapter) and either the expanded Markdown (-- want --,
// exact; -- origins -- optionally gives each line's "file:line", -- title --
// the chapter's {{#title}}) or the problems (-- error --, each
// "file:line: " and a substring of the message, one per line). The cases
// are mdBook's include rules (format/mdbook.md) as data.
func TestIncludeSpec(t *testing.T) {
	for _, c := range spectest.Load(t, "testdata/include") {
		t.Run(c.Name, func(t *testing.T) {
			root := t.TempDir()
			c.WriteTree(t, root)
			src := c.File(t, "book/ch.md")
			ch := &book.Item{Kind: book.KindChapter, Title: "Ch", Path: "ch.md", Line: 1, Source: []byte(src)}
			b := &book.Book{Root: root, Dir: filepath.Join(root, "book"), Chapters: []*book.Item{ch}}
			d, err := Expand(b, ch)
			if want, ok := c.Files["error"]; ok {
				if err == nil {
					t.Fatalf("%s\nExpand succeeded:\n%s", c.Comment, d.Markdown)
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
				t.Fatalf("%s\nExpand: %v", c.Comment, err)
			}
			if want := c.File(t, "want"); string(d.Markdown) != want {
				t.Errorf("%s\nMarkdown:\n%s\nwant:\n%s", c.Comment, d.Markdown, want)
			}
			if n := strings.Count(string(d.Markdown), "\n"); len(d.Origins) != n {
				t.Errorf("%d origins for %d lines", len(d.Origins), n)
			}
			if want, ok := c.Files["origins"]; ok {
				var got []string
				for _, o := range d.Origins {
					got = append(got, fmt.Sprintf("%s:%d", o.File, o.Line))
				}
				if g := strings.Join(got, " "); g != strings.TrimSpace(want) {
					t.Errorf("%s\norigins = %s\nwant      %s", c.Comment, g, strings.TrimSpace(want))
				}
			}
			// -- warnings --: one "file:line: message" prefix a line,
			// in order; none when the section is absent.
			var gw []string
			for _, w := range d.Warnings {
				gw = append(gw, w.Error())
			}
			ww := strings.Split(strings.TrimSpace(c.Files["warnings"]), "\n")
			if c.Files["warnings"] == "" {
				ww = nil
			}
			if len(gw) != len(ww) {
				t.Errorf("%s\nwarnings:\n%s\nwant:\n%s", c.Comment, strings.Join(gw, "\n"), c.Files["warnings"])
			} else {
				for i := range gw {
					if !strings.HasPrefix(gw[i], ww[i]) {
						t.Errorf("%s\nwarning %d = %s\nwant %s", c.Comment, i+1, gw[i], ww[i])
					}
				}
			}
			if want, ok := c.Files["title"]; ok && d.Title != strings.TrimSpace(want) {
				t.Errorf("%s\ntitle = %q, want %q", c.Comment, d.Title, strings.TrimSpace(want))
			}
		})
	}
}
