package render

import (
	"strings"
	"testing"

	"github.com/yuin/goldmark/ast"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/expand"
	"github.com/ownership-book/ownership/internal/markdown"
	"github.com/ownership-book/ownership/internal/spectest"
	"github.com/ownership-book/ownership/internal/verify"
)

// checkedAs returns the verdicts a passing verification gives the blocks
// of ds: Ignored for those marked ignore, Checked for the others. Tests of
// how a page shows a block use it; the verdicts themselves are verify's.
func checkedAs(ds ...*expand.Doc) []verify.BlockVerdict {
	var out []verify.BlockVerdict
	for _, d := range ds {
		for i, blk := range markdown.FindBlocks(d.Markdown) {
			v := verify.Checked
			if _, ok := blk.Attrs["ignore"]; ok {
				v = verify.Ignored
			}
			out = append(out, verify.BlockVerdict{Chapter: d.Chapter.Path, Index: i, Line: blk.Line, Info: blk.Info, Verdict: v})
		}
	}
	return out
}

// renderChecked renders d as it is rendered after a passing verification.
func renderChecked(b *book.Book, d *expand.Doc) (*Page, error) {
	r := New(b)
	r.SetVerdicts(checkedAs(d))
	return r.Render(d)
}

// TestUncheckedBlockIsRefused checks that a go, console or program-output
// figure block without a verdict is an error at its line, never a page,
// and that a block of another language needs none.
func TestUncheckedBlockIsRefused(t *testing.T) {
	b := testBook(t)
	for _, md := range []string{
		"# T\n\n```console\n$ go run ./x\nout\n```\n",
		"# T\n\n- item\n\n  ```go\n  x := 1\n  ```\n",
		"# T\n\nTerm\n: ```console\n  $ go run ./x\n  ```\n",
		"# T\n\n```d2 run=\"go run ./x\"\na -> b\n```\n",
	} {
		_, err := New(b).Render(doc(b, 1, md))
		if err == nil || !strings.Contains(err.Error(), "shown but never checked") {
			t.Errorf("%q: err = %v, want \"shown but never checked\"", md, err)
		}
		want := "book/" + b.Chapters[1].Path + ":"
		if err != nil && !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: err = %v, want it at %s", md, err, want)
		}
		// Verdicts for another chapter do not help.
		r := New(b)
		other := doc(b, 0, md)
		r.SetVerdicts(checkedAs(other))
		if _, err := r.Render(doc(b, 1, md)); err == nil {
			t.Errorf("%q rendered with another chapter's verdicts", md)
		}
	}
	if _, err := New(b).Render(doc(b, 1, "# T\n\n```text\nplain\n```\n\n```rust\nfn main() {}\n```\n")); err != nil {
		t.Errorf("blocks bookgen does not check: %v", err)
	}
	// A verdict given for another block (verify and render disagree) is
	// refused too.
	d := doc(b, 1, "# T\n\n```go\nx := 1\n```\n")
	vs := checkedAs(d)
	vs[0].Info = "go ignore"
	r := New(b)
	r.SetVerdicts(vs)
	if _, err := r.Render(d); err == nil || !strings.Contains(err.Error(), "verify and render read different blocks") {
		t.Errorf("mismatched verdict: %v", err)
	}
}

// TestEmittedBlocksAreIndexed renders every spec case of render
// (testdata/spec) and of the chapter grammar
// (../markdown/testdata/blocks) and checks that the fenced blocks the page
// writes are exactly those of the chapter's index, markdown.FindBlocks,
// in its order, with the same info string and content. The verdicts
// are keyed by that index, so a block written that the index lacks would
// be shown with another block's verdict or none.
func TestEmittedBlocksAreIndexed(t *testing.T) {
	var cases []*spectest.Case
	cases = append(cases, spectest.Load(t, "testdata/spec")...)
	cases = append(cases, spectest.Load(t, "../markdown/testdata/blocks")...)
	total := 0
	for _, c := range cases {
		root := t.TempDir()
		if _, ok := c.Files["book/SUMMARY.md"]; !ok {
			c.Files["book/SUMMARY.md"] = "- [Chapter](ch.md)\n"
			c.Order = append(c.Order, "book/SUMMARY.md")
		}
		c.WriteTree(t, root)
		b, err := book.Load(root)
		if err != nil {
			t.Logf("%s: %v", c.Name, err)
			continue // a case of a load error
		}
		docs, err := expand.All(b)
		if err != nil {
			continue
		}
		for _, d := range docs {
			r := New(b)
			r.SetVerdicts(checkedAs(d))
			var emitted []string
			r.nr.emitted = func(n *ast.FencedCodeBlock, src []byte) {
				emitted = append(emitted, emittedSummary(n, src))
			}
			if _, err := r.Render(d); err != nil {
				continue // a case of a render error: nothing written
			}
			var want []string
			for _, blk := range markdown.FindBlocks(d.Markdown) {
				want = append(want, blk.Info+"\x00"+strings.Join(blk.Lines, "\n"))
			}
			total += len(want)
			if strings.Join(emitted, "\x01") != strings.Join(want, "\x01") {
				t.Errorf("%s: %s: render wrote blocks\n%q\nthe index has\n%q", c.Name, d.Chapter.Path, emitted, want)
			}
		}
	}
	if total < 12 { // the grammar cases alone hold 11
		t.Errorf("only %d blocks in all cases: the cases did not load", total)
	}
}

// emittedSummary is a written block's info string and content as
// markdown.Block has them.
func emittedSummary(n *ast.FencedCodeBlock, src []byte) string {
	info := ""
	if n.Info != nil {
		info = string(n.Info.Segment.Value(src))
	}
	var lines []string
	for i := 0; i < n.Lines().Len(); i++ {
		s := n.Lines().At(i)
		lines = append(lines, strings.Repeat(" ", s.Padding)+strings.TrimRight(string(s.Value(src)), "\r\n"))
	}
	return info + "\x00" + strings.Join(lines, "\n")
}
