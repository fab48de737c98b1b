package markdown

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func nestedList(n int) string {
	var b strings.Builder
	b.WriteString("Intro.\n\n")
	for i := range n {
		b.WriteString(strings.Repeat("  ", i) + "- a\n")
	}
	return b.String()
}

// TestBoundsRefusesPathologicalMarkdown: the inputs that take goldmark
// quadratic or worse time are refused at the line where the bound is
// passed, before any parse.
func TestBoundsRefusesPathologicalMarkdown(t *testing.T) {
	cases := []struct {
		name, src string
		line      int
		want      string
	}{
		{"unclosed link destinations", "# T\n\nSome text.\n" + strings.Repeat("[x](", 60000) + "\n", 4, `60000 link destinations in this paragraph are opened with "](" and never closed`},
		{"angle destinations", "# T\n\n" + strings.Repeat("[a](<b", 20000) + "\n", 3, `20000 link destinations`},
		{"balanced parentheses that never close", "# T\n\n" + strings.Repeat("[x](()", 20000) + "\n", 3, `link destinations`},
		{"1000-level list", nestedList(1000), 3 + MaxNesting, "nest 101 deep here; a chapter may nest them at most 100 deep"},
		{"block quotes", strings.Repeat(">", 150) + " a\n", 1, "nest 150 deep"},
		{"lists in quotes", strings.Repeat("> - ", 60) + "a\n", 1, "nest 120 deep"},
		{"items on one line", strings.Repeat("- ", 120) + "a\n", 1, "nest 120 deep"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			probs := Bounds([]byte(c.src))
			if len(probs) != 1 {
				t.Fatalf("got %d problems, want 1: %+v", len(probs), probs)
			}
			p := probs[0]
			if !strings.Contains(p.Msg, c.want) {
				t.Errorf("message %q lacks %q", p.Msg, c.want)
			}
			if c.line != 0 && p.Line != c.line {
				t.Errorf("line %d, want %d", p.Line, c.line)
			}
		})
	}
	// Both kinds at once, in line order.
	both := Bounds([]byte(nestedList(200) + "\n" + strings.Repeat("[x](", 60000) + "\n"))
	if len(both) != 2 || both[0].Line >= both[1].Line {
		t.Errorf("both kinds: %+v", both)
	}
}

// TestBoundsAcceptsOrdinaryMarkdown: the bounds refuse nothing a book
// writes: the book's own chapters, many links, a deep but sane list,
// code fences holding the patterns.
func TestBoundsAcceptsOrdinaryMarkdown(t *testing.T) {
	many := strings.Repeat("See [the chapter](ch.md) and [a (parenthesised) link](a_(b).md) ", 20000)
	cases := map[string]string{
		"many closed links":     many + "\n",
		"100-level list":        nestedList(MaxNesting),
		"fenced pattern":        "```text\n" + strings.Repeat("[x](", 60000) + "\n" + strings.Repeat("  ", 300) + "- a\n```\n",
		"a few unclosed":        strings.Repeat("word ", 50000) + "[x](" + strings.Repeat(" word", 50000) + "\n",
		"escaped brackets":      strings.Repeat(`[x\](`, 60000) + "\n",
		"unclosed, short paras": strings.Repeat("[x]( [x](\n\n", 60000),
	}
	for name, src := range cases {
		if p := Bounds([]byte(src)); len(p) > 0 {
			t.Errorf("%s: refused: %+v", name, p)
		}
	}
	files, _ := filepath.Glob("../../book/*.md")
	if len(files) == 0 {
		t.Fatal("no chapters found in ../../book")
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if p := Bounds(src); len(p) > 0 {
			t.Errorf("%s refused: %+v", f, p)
		}
	}
}
