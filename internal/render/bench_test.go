package render

import (
	"strings"
	"testing"
)

// BenchmarkRender renders a chapter of about 600 lines: prose, headings,
// links, Go blocks and console transcripts in the proportions of the book's
// chapters.
func BenchmarkRender(b *testing.B) {
	bk := testBook(b)
	section := strings.Join([]string{
		"## A section about epochs",
		"",
		"Every grant of authority carries an *epoch*, and the holder of the data",
		"checks it on every write; see [the rule](ownership.md#rule) and",
		"[the source](../examples/stream/state.go).",
		"",
		"```go",
		"// MayMutate reports whether a request stamped with epoch e may write.",
		"func MayMutate(s State, node NodeID, e Epoch) bool {",
		"\towned, ok := s.(Owned)",
		"\treturn ok && owned.Owner == node && owned.Epoch == e",
		"}",
		"```",
		"",
		"```console",
		"$ go run ./examples/ownership/handover",
		"A  acquire x at epoch 1  -> Token(x, 1, A)",
		"B  acquire x at epoch 2  -> Token(x, 2, B)",
		"```",
		"",
	}, "\n")
	md := "# Chapter\n\n" + strings.Repeat(section, 30)
	d := doc(bk, 1, md)
	r := New(bk)
	b.SetBytes(int64(len(md)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := r.Render(d); err != nil {
			b.Fatal(err)
		}
	}
}
