package book

import (
	"errors"
	"fmt"
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
				fmt.Fprintf(&b, "%s%s %s (%s)@%d\n", sectionName(it.Section), it.NumberString(), it.Title, p, it.Line)
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

func TestParseSummary(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		title string
		want  string
	}{
		{
			// CommonMark trims white space around a link destination.
			name:  "white space around a target",
			src:   "- [A]( a.md )\n- [Draft](  )\n",
			title: "",
			want:  "num 1. A (a.md)@1\nnum 2. Draft (draft)@2\n",
		},
		{
			name:  "full mdBook example",
			src:   "# Summary\n\n[Preface](preface.md)\n\n# Part one\n\n- [First](first.md)\n- [Second](second.md)\n    - [Sub](sub/a.md)\n    - [Draft]()\n        - [Deep](deep.md)\n\n# Part two\n\n* [Third](third.md)\n\n---\n\n[Appendix](appendix.md)\n",
			title: "Summary",
			want: `prefix Preface (preface.md)@3
# Part one@5
num 1. First (first.md)@7
num 2. Second (second.md)@8
  num 2.1. Sub (sub/a.md)@9
  num 2.2. Draft (draft)@10
    num 2.2.1. Deep (deep.md)@11
# Part two@13
num 3. Third (third.md)@15
--- num @17
suffix Appendix (appendix.md)@19
`,
		},
		{
			name: "no title, no parts",
			src:  "- [A](a.md)\n- [B](./b.md)\n",
			want: "num 1. A (a.md)@1\nnum 2. B (b.md)@2\n",
		},
		{
			name:  "title then prefix only",
			src:   "# Book\n[Only](only.md)\n",
			title: "Book",
			want:  "prefix Only (only.md)@2\n",
		},
		{
			name: "tabs nest like four spaces; escaped title; angle target; comment",
			src:  "- [A \\[x\\]](a.md)\n\t- [B](<b c.md>)\n<!-- a\ncomment -->\n    - [C](c%20d.md)\n",
			want: "num 1. A [x] (a.md)@1\n  num 1.1. B (b c.md)@2\n  num 1.2. C (c d.md)@5\n",
		},
		{
			name: "pop back several levels",
			src:  "- [A](a.md)\n  - [B](b.md)\n    - [C](c.md)\n- [D](d.md)\n  - [E](e.md)\n",
			want: "num 1. A (a.md)@1\n  num 1.1. B (b.md)@2\n    num 1.1.1. C (c.md)@3\nnum 2. D (d.md)@4\n  num 2.1. E (e.md)@5\n",
		},
		{
			name: "nesting starts at the parent's text column",
			src:  "-   [A](a.md)\n    - [B](b.md)\n- [C](c.md)\n  -  [D](d.md)\n     - [E](e.md)\n",
			want: "num 1. A (a.md)@1\n  num 1.1. B (b.md)@2\nnum 2. C (c.md)@3\n  num 2.1. D (d.md)@4\n    num 2.1.1. E (e.md)@5\n",
		},
		{
			name: "separators in prefix and between numbered",
			src:  "---\n[P](p.md)\n- [A](a.md)\n---\n- [B](b.md)\n",
			want: "--- prefix@1\nprefix P (p.md)@2\nnum 1. A (a.md)@3\n--- num @4\nnum 2. B (b.md)@5\n",
		},
		{
			name: "HTML comment after an entry",
			src:  "- [A](a.md) <!-- TODO: split -->\n[S](s.md)<!--x--> <!-- y -->\n",
			want: "num 1. A (a.md)@1\nsuffix S (s.md)@2\n",
		},
		{
			name: "CRLF line endings",
			src:  "# T\r\n- [A](a.md)\r\n",
			want: "num 1. A (a.md)@2\n", title: "T",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			title, items, err := ParseSummary([]byte(tt.src))
			if err != nil {
				t.Fatalf("ParseSummary: %v", err)
			}
			if title != tt.title {
				t.Errorf("title = %q, want %q", title, tt.title)
			}
			if got := outline(items); got != tt.want {
				t.Errorf("outline:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestParseSummaryErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		line int
		msg  string // substring of the message
	}{
		{"list item not a link", "- [A](a.md)\n- just text\n", 2, "is not a link"},
		{"plain text line", "[A](a.md)\nhello\n", 2, "unexpected line"},
		{"nested under nothing", "- [A](a.md)\n---\n    - [B](b.md)\n", 3, "no chapter above it"},
		{"less than top level", "  - [A](a.md)\n- [B](b.md)\n", 2, "less than the top-level"},
		{"one-space indent is not nesting", "- [A](a.md)\n - [B](b.md)\n", 2, "too little to nest under \"A\" (line 1"},
		{"indent short of a wide marker's text", "# T\n-   [A](a.md)\n  - [B](b.md)\n", 3, "too little to nest under \"A\" (line 2; a nested chapter is indented at least 4)"},
		{"inconsistent siblings", "- [A](a.md)\n    - [B](b.md)\n  - [C](c.md)\n", 3, "inconsistent nesting"},
		{"numbered after suffix", "- [A](a.md)\n[S](s.md)\n- [B](b.md)\n", 3, "after the suffix chapter at line 2"},
		{"part after suffix", "- [A](a.md)\n[S](s.md)\n# Part\n", 3, "after the suffix chapters"},
		{"prefix after part title", "# T\n# Part\n[P](p.md)\n", 3, "after a part title"},
		{"non-md target", "- [A](a.txt)\n", 1, "not a .md file"},
		{"URL target", "- [A](https://x.org/a.md)\n", 1, "is a URL"},
		{"fragment", "- [A](a.md#x)\n", 1, "#fragment"},
		{"escapes book", "- [A](../README.md)\n", 1, "escapes book/"},
		{"escapes book after clean", "- [A](x/../../a.md)\n", 1, "escapes book/"},
		{"file name not UTF-8", "- [A](a.md)\n- [B](caf%E9.md)\n", 2, "not valid UTF-8"},
		{"absolute", "- [A](/etc/a.md)\n", 1, "relative"},
		{"same file twice", "[A](a.md)\n- [B](./a.md)\n", 2, "already listed at line 1"},
		{"deeper heading", "# T\n## Sub\n", 2, "only level-1"},
		{"nested prefix", "    [A](a.md)\n", 1, "cannot be nested"},
		{"trailing text", "- [A](a.md) extra\n", 1, "after the link"},
		{"text after a comment", "- [A](a.md) <!-- x --> extra\n", 1, "unexpected text \"extra\""},
		{"empty title", "- [](a.md)\n", 1, "empty title"},
		{"unterminated link", "- [A(a.md)\n", 1, "unterminated link"},
		{"space in target", "- [A](a b.md)\n", 1, "contains a space"},
		{"unterminated comment", "- [A](a.md)\n<!-- x\n", 3, "unterminated HTML comment"},
		{"heading without space", "#Part\n", 1, "needs a space"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := ParseSummary([]byte(tt.src))
			var de *diag.Error
			if !errors.As(err, &de) {
				t.Fatalf("err = %v, want *diag.Error", err)
			}
			if de.File != SummaryFile || de.Line != tt.line || !strings.Contains(de.Msg, tt.msg) {
				t.Errorf("err = %q (file %q line %d), want %s:%d containing %q", de.Msg, de.File, de.Line, SummaryFile, tt.line, tt.msg)
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
					if seen[it.Path] || strings.HasPrefix(it.Path, "../") || !strings.HasSuffix(it.Path, ".md") {
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
