package render

import (
	"strings"
	"testing"

	"github.com/yuin/goldmark/ast"

	"github.com/ownership-book/ownership/internal/markdown"
)

// nest wraps a fenced console block in the containers ops names, from the
// inside out: list items, definition lists, block quotes, admonitions,
// footnote definitions, HTML blocks (<details>, <div>, <meta>), extra
// indentation and lazy continuation lines. Each op byte picks a container
// (b % 12) and a variant (b / 12).
func nest(ops []byte) string {
	lines := []string{"```console", "$ go run ./examples/x", "out", "```"}
	prefix := func(first, rest string) {
		for i := range lines {
			p := rest
			if i == 0 {
				p = first
			}
			if lines[i] == "" && strings.TrimSpace(p) == "" {
				continue
			}
			lines[i] = p + lines[i]
		}
	}
	for _, b := range ops {
		v := int(b / 12)
		switch b % 12 {
		case 0:
			prefix("- ", "  ")
		case 1:
			prefix("1. ", "   ")
		case 2:
			prefix("> ", "> ")
		case 3:
			prefix("> ", "> ")
			lines = append([]string{"> [!NOTE]"}, lines...)
		case 4:
			ind := []string{"  ", "    ", "   "}[v%3]
			prefix(": ", ind)
			lines = append([]string{"Term"}, lines...)
		case 5:
			prefix("[^n]: ", "    ")
			lines = append([]string{"Text.[^n]", ""}, lines...)
		case 6:
			lines = append(append([]string{"<details>", "<summary>s</summary>", ""}, lines...), "", "</details>")
		case 7:
			if v%2 == 0 {
				lines = append(append([]string{"<div>", ""}, lines...), "", "</div>")
			} else {
				lines = append(append([]string{"<div>"}, lines...), "</div>")
			}
		case 8:
			if v%2 == 0 {
				lines = append([]string{`<meta itemprop="a" content="b"> text`}, lines...)
			} else {
				lines = append([]string{`<meta itemprop="a" content="b">`, ""}, lines...)
			}
		case 9:
			ind := strings.Repeat(" ", 1+v%4)
			prefix(ind, ind)
		case 10:
			// A lazy continuation line: a paragraph line without its
			// container's prefix, before the block.
			lines = append([]string{"para", "lazy line"}, lines...)
			prefix("- ", "  ")
			lines[1] = strings.TrimLeft(lines[1], " ")
		case 11:
			lines = append([]string{"Some text.", ""}, lines...)
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

// FuzzNestedBlocks nests a console block in random containers and checks
// that the verify side (markdown.FindBlocks, the index verify checks and
// keys its verdicts by) and the render side (the fenced blocks the page
// writes) find exactly the same code blocks, and that without verdicts a
// page with a checkable block is refused, never written.
func FuzzNestedBlocks(f *testing.F) {
	for _, seed := range [][]byte{
		{4}, {8}, {5}, {3}, {6}, {7}, {19}, {20}, {9}, {10},
		{0, 4}, {4, 0}, {2, 5}, {5, 2}, {3, 0, 4}, {6, 4, 8}, {10, 2}, {16, 5, 1}, {9, 9, 9, 0},
	} {
		f.Add(seed)
	}
	b := testBook(f)
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 8 {
			ops = ops[:8]
		}
		md := nest(ops)
		d := doc(b, 1, md)
		index := markdown.FindBlocks(d.Markdown)
		var want []string
		checkable := false
		for _, blk := range index {
			want = append(want, blk.Info+"\x00"+strings.Join(blk.Lines, "\n"))
			checkable = checkable || markdown.Checkable(blk.Lang, blk.Attrs)
		}
		r := New(b)
		r.SetVerdicts(checkedAs(d))
		var emitted []string
		r.nr.emitted = func(n *ast.FencedCodeBlock, src []byte) { emitted = append(emitted, emittedSummary(n, src)) }
		if _, err := r.Render(d); err != nil {
			t.Fatalf("%q with verdicts for every indexed block: %v", md, err)
		}
		if strings.Join(emitted, "\x01") != strings.Join(want, "\x01") {
			t.Fatalf("%q: render wrote\n%q\nverify's index has\n%q", md, emitted, want)
		}
		if _, err := New(b).Render(d); (err != nil) != checkable {
			t.Fatalf("%q without verdicts: err = %v, checkable blocks %v", md, err, checkable)
		}
	})
}
