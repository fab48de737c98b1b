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
)

// state.go is the included Go file of most tests; its line numbers matter.
const stateGo = `package state // line 1

// ANCHOR: all
// ANCHOR: epoch
type Epoch uint64 // line 5
// ANCHOR_END: epoch

/* ANCHOR: check */
func Check(a, b Epoch) bool { // line 9
	return a >= b // line 10
}
/* ANCHOR_END: check */
// ANCHOR_END: all
`

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

func origins(d *Doc) string {
	var parts []string
	for _, o := range d.Origins {
		parts = append(parts, fmt.Sprintf("%s:%d", strings.TrimPrefix(o.File, "examples/s/"), o.Line))
	}
	return strings.Join(parts, " ")
}

func TestExpandForms(t *testing.T) {
	files := map[string]string{"examples/s/state.go": stateGo}
	tests := []struct {
		name, directive string
		want            string // the included text
		origins         string // origins of the three output lines' middle part
	}{
		{"whole file drops every marker", "state.go",
			"package state // line 1\n\ntype Epoch uint64 // line 5\n\nfunc Check(a, b Epoch) bool { // line 9\n\treturn a >= b // line 10\n}",
			"state.go:1 state.go:2 state.go:5 state.go:7 state.go:9 state.go:10 state.go:11"},
		{"single line N", "state.go:5", "type Epoch uint64 // line 5", "state.go:5"},
		{"range N:M", "state.go:9:11", "func Check(a, b Epoch) bool { // line 9\n\treturn a >= b // line 10\n}", "state.go:9 state.go:10 state.go:11"},
		{"range N: to end", "state.go:10:", "\treturn a >= b // line 10\n}", "state.go:10 state.go:11"},
		{"range ::M from start", "state.go::2", "package state // line 1\n", "state.go:1 state.go:2"},
		{"range strips markers", "state.go:3:6", "type Epoch uint64 // line 5", "state.go:5"},
		{"anchor //", "state.go:epoch", "type Epoch uint64 // line 5", "state.go:5"},
		{"anchor /* */", "state.go:check", "func Check(a, b Epoch) bool { // line 9\n\treturn a >= b // line 10\n}", "state.go:9 state.go:10 state.go:11"},
		{"anchor nesting other anchors", "state.go:all", "type Epoch uint64 // line 5\n\nfunc Check(a, b Epoch) bool { // line 9\n\treturn a >= b // line 10\n}",
			"state.go:5 state.go:7 state.go:9 state.go:10 state.go:11"},
		{"last line N", "state.go:13", "// ANCHOR_END: all", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chapter := "# Ch\n```go\n{{#include ../examples/s/" + tt.directive + "}}\n```\n"
			b, ch := bookWith(t, chapter, files)
			d, err := Expand(b, ch)
			if tt.name == "last line N" {
				// Line 14 is an anchor marker: nothing of it reaches the page.
				if err != nil || string(d.Markdown) != "# Ch\n```go\n\n```\n" {
					t.Fatalf("got %q, %v", d.Markdown, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Expand: %v", err)
			}
			want := "# Ch\n```go\n" + tt.want + "\n```\n"
			if string(d.Markdown) != want {
				t.Errorf("Markdown:\n%s\nwant:\n%s", d.Markdown, want)
			}
			wantOrigins := "book/ch.md:1 book/ch.md:2 " + tt.origins + " book/ch.md:4"
			if got := origins(d); got != wantOrigins {
				t.Errorf("Origins = %s\nwant      %s", got, wantOrigins)
			}
			if n := strings.Count(string(d.Markdown), "\n"); len(d.Origins) != n {
				t.Errorf("%d origins for %d lines", len(d.Origins), n)
			}
			if !reflect.DeepEqual(d.Deps, []string{"examples/s/state.go"}) {
				t.Errorf("Deps = %v", d.Deps)
			}
		})
	}
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

// TestExpandKeepsContainerPrefix checks that a directive alone on a line
// inside a list item or block quote repeats the line's prefix on each
// included line, so that the code block it is in does not end after the
// first line.
func TestExpandKeepsContainerPrefix(t *testing.T) {
	files := map[string]string{"examples/s/state.go": stateGo}
	for _, tt := range []struct{ name, chapter, want string }{
		{"list item", "1. Step:\n\n   ```go\n   {{#include ../examples/s/state.go:all}}\n   ```\n",
			"1. Step:\n\n   ```go\n   type Epoch uint64 // line 5\n\n   func Check(a, b Epoch) bool { // line 9\n   \treturn a >= b // line 10\n   }\n   ```\n"},
		{"block quote", "> ```go\n> {{#include ../examples/s/state.go:check}}\n> ```\n",
			"> ```go\n> func Check(a, b Epoch) bool { // line 9\n> \treturn a >= b // line 10\n> }\n> ```\n"},
		{"text before the directive is not a prefix", "See: {{#include ../examples/s/state.go:check}}\n",
			"See: func Check(a, b Epoch) bool { // line 9\n\treturn a >= b // line 10\n}\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, ch := bookWith(t, tt.chapter, files)
			d, err := Expand(b, ch)
			if err != nil {
				t.Fatal(err)
			}
			if string(d.Markdown) != tt.want {
				t.Errorf("Markdown:\n%s\nwant:\n%s", d.Markdown, tt.want)
			}
		})
	}
}

func TestExpandInlineAndEscapes(t *testing.T) {
	files := map[string]string{"book/v.txt": "1.26\n", "book/two.txt": "a\nb\n"}
	chapter := "Go {{#include v.txt}} or later.\n" +
		"Literal: \\{{#include v.txt}} and {{ not a directive }} and {{#if x}}.\n" +
		"[{{#include two.txt}}]\n" +
		"{{ #include v.txt }}\n" +
		"no newline at end"
	b, ch := bookWith(t, chapter, files)
	d, err := Expand(b, ch)
	if err != nil {
		t.Fatal(err)
	}
	want := "Go 1.26 or later.\n" +
		"Literal: {{#include v.txt}} and {{ not a directive }} and {{#if x}}.\n" +
		"[a\nb]\n" +
		"1.26\n" +
		"no newline at end"
	if string(d.Markdown) != want {
		t.Errorf("Markdown:\n%q\nwant:\n%q", d.Markdown, want)
	}
	if got, want := origins(d), "book/ch.md:1 book/ch.md:2 book/ch.md:3 book/two.txt:2 book/v.txt:1 book/ch.md:5"; got != want {
		t.Errorf("Origins = %s\nwant      %s", got, want)
	}
	if !reflect.DeepEqual(d.Deps, []string{"book/two.txt", "book/v.txt"}) {
		t.Errorf("Deps = %v", d.Deps)
	}
}

func TestExpandNestedMarkdown(t *testing.T) {
	files := map[string]string{
		"book/parts/a.md":     "A1\n{{#include sub/b.md}}\nA3\n",
		"book/parts/sub/b.md": "B1 {{#include ../../../examples/s/state.go:5}}\n",
		"examples/s/state.go": stateGo,
		// Go files are included verbatim: a directive inside one stays.
		"book/raw.go": "// {{#include nothing.go}}\n",
	}
	b, ch := bookWith(t, "{{#include parts/a.md}}\n{{#include raw.go}}\n", files)
	d, err := Expand(b, ch)
	if err != nil {
		t.Fatal(err)
	}
	want := "A1\nB1 type Epoch uint64 // line 5\nA3\n// {{#include nothing.go}}\n"
	if string(d.Markdown) != want {
		t.Errorf("Markdown:\n%q\nwant:\n%q", d.Markdown, want)
	}
	if got, want := origins(d), "book/parts/a.md:1 book/parts/sub/b.md:1 book/parts/a.md:3 book/raw.go:1"; got != want {
		t.Errorf("Origins = %s\nwant      %s", got, want)
	}
	wantDeps := []string{"book/parts/a.md", "book/parts/sub/b.md", "book/raw.go", "examples/s/state.go"}
	if !reflect.DeepEqual(d.Deps, wantDeps) {
		t.Errorf("Deps = %v, want %v", d.Deps, wantDeps)
	}
}

func TestExpandErrors(t *testing.T) {
	files := map[string]string{
		"examples/s/state.go": stateGo,
		"examples/s/open.go":  "// ANCHOR: open\nx\n",
		"examples/s/twice.go": "// ANCHOR: a\nx\n// ANCHOR_END: a\n// ANCHOR: a\ny\n// ANCHOR_END: a\n",
		"book/cycle.md":       "c1\n{{#include cycle2.md}}\n",
		"book/cycle2.md":      "{{#include cycle.md}}\n",
		"book/deep0.md":       "{{#include deep1.md}}\n",
		"book/empty.txt":      "",
		"book/latin1.txt":     "fine\ncaf\xe9\n",
		"book/nested-bad.md":  "fine\n{{#include nope.go}}\n",
	}
	for i := 1; i <= 11; i++ {
		files[fmt.Sprintf("book/deep%d.md", i)] = fmt.Sprintf("{{#include deep%d.md}}\n", i+1)
	}
	files["book/deep12.md"] = "bottom\n"
	tests := []struct {
		name, line string
		want       string // "file:line: message substring"
	}{
		{"missing file", "{{#include ../examples/s/nope.go}}", "book/ch.md:2: included file examples/s/nope.go does not exist"},
		{"unknown anchor", "{{#include ../examples/s/state.go:nope}}", "book/ch.md:2: {{#include ../examples/s/state.go:nope}}: anchor \"nope\" not found in examples/s/state.go (its anchors: all, epoch, check)"},
		{"unterminated anchor", "{{#include ../examples/s/open.go:open}}", "book/ch.md:2: {{#include ../examples/s/open.go:open}}: anchor \"open\" opened at examples/s/open.go:1 has no ANCHOR_END: open"},
		{"line past end", "{{#include ../examples/s/state.go:14}}", "book/ch.md:2: {{#include ../examples/s/state.go:14}}: line 14 is past the end of examples/s/state.go (13 lines)"},
		{"range end past end", "{{#include ../examples/s/state.go:2:99}}", "line 99 is past the end"},
		{"empty file line", "{{#include empty.txt:1}}", "line 1 is past the end of book/empty.txt (0 lines)"},
		{"reversed range", "{{#include ../examples/s/state.go:5:2}}", "book/ch.md:2: {{#include ../examples/s/state.go:5:2}}: range ends (line 2) before it starts (line 5)"},
		{"line zero", "{{#include ../examples/s/state.go:0}}", "line numbers start at 1"},
		{"escapes repo", "{{#include ../../etc/passwd}}", "book/ch.md:2: include path \"../../etc/passwd\" leaves the repository"},
		{"absolute", "{{#include /etc/passwd}}", "is absolute"},
		{"no path", "{{#include }}", "needs a path"},
		{"bad anchor name", "{{#include ../examples/s/state.go:a.b}}", "neither a line number nor an anchor name"},
		{"too many colons", "{{#include ../examples/s/state.go:1:2:3}}", "too many ':'"},
		{"rustdoc_include", "{{#rustdoc_include ../examples/s/state.go}}", "book/ch.md:2: {{#rustdoc_include}} is not supported"},
		{"anchor opened twice", "{{#include ../examples/s/twice.go:a}}", "book/ch.md:2: {{#include ../examples/s/twice.go:a}}: anchor \"a\" is opened twice in examples/s/twice.go (lines 1 and 4)"},
		{"space in anchor", "{{#include ../examples/s/state.go:my anchor}}", "\"my anchor\" after the ':' contains a space"},
		{"not UTF-8", "{{#include latin1.txt}}", "book/ch.md:2: included file book/latin1.txt is not UTF-8 text (line 2 has a byte that is not UTF-8)"},
		{"unclosed directive", "See {{#include ../examples/s/state.go:check", "book/ch.md:2: {{#include ...: the directive is not closed with }} on its line"},
		{"unclosed directive with spaces", "{{ #include ../examples/s/state.go }", "book/ch.md:2: {{#include ...: the directive is not closed"},
		{"cycle", "{{#include cycle.md}}", "book/cycle2.md:1: include cycle: book/cycle.md includes itself"},
		{"too deep", "{{#include deep0.md}}", "includes nested more than 10 deep"},
		{"error inside nested markdown", "{{#include nested-bad.md}}", "book/nested-bad.md:2: included file book/nope.go does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, ch := bookWith(t, "# Ch\n"+tt.line+"\n", files)
			d, err := Expand(b, ch)
			if err == nil {
				t.Fatalf("Expand succeeded:\n%s", d.Markdown)
			}
			var de *diag.Error
			if !errors.As(err, &de) {
				t.Fatalf("err = %T %v, want *diag.Error", err, err)
			}
			if !strings.Contains(de.Error(), tt.want) {
				t.Errorf("err = %q\nwant it to contain %q", de.Error(), tt.want)
			}
		})
	}
	t.Run("escaped unclosed directive is text", func(t *testing.T) {
		b, ch := bookWith(t, "Write \\{{#include file.go to include.\n", files)
		d, err := Expand(b, ch)
		if err != nil || string(d.Markdown) != "Write \\{{#include file.go to include.\n" {
			t.Fatalf("got %q, %v", d.Markdown, err)
		}
	})
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
		{"a.go:my-anchor_1", Directive{Path: "a.go", Anchor: "my-anchor_1"}},
		{"../x/a.go:state", Directive{Path: "../x/a.go", Anchor: "state"}},
	}
	for _, tt := range tests {
		got, err := ParseDirective(tt.args)
		tt.want.Args = tt.args
		if err != nil || got != tt.want {
			t.Errorf("ParseDirective(%q) = %+v, %v; want %+v", tt.args, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", ":3", "a.go::", "a.go:x:1", "a.go:1:y", "a b.go", "a.go:1:2:3", "a.go:0:3", "a.go:$"} {
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
			if sg.Directive != nil && sg.Directive.Unsupported == "" {
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
