package render

import (
	"bytes"
	"testing"
)

// FuzzRender checks that any chapter text renders without a panic, that
// rendering is deterministic, and that a failure is a positioned error.
func FuzzRender(f *testing.F) {
	for _, s := range []string{
		"# T\n\n## A {#a}\n\n[x](ownership.md#a)\n",
		"```go hl_lines=\"1-2 9\" linenos\npackage p\n```\n",
		"```console timeout=1s\n$ go run ./x\n...\n```\n",
		"[bad](../../../x) [r](../examples/stream/state.go#L3)\n",
		"Term\n: def\n\n| a |\n|---|\n| b |\n\n[^1]\n\n[^1]: n\n",
		// mdBook's Markdown (mdbook.go).
		"## H {#h .c k=v bare}\n\nSetext {.s}\n---\n\n## Closed ## {#x}\n",
		"a\nb\\\nc\n  : d\n  : e\n\n> [!NOTE]\n> n\n>\n> > [!tip]\n",
		"```rust\n# hidden\n##shown\n```\n\n```py,hidelines=~\n~x\n```\n![a\\\nb](diagram.svg)\n",
	} {
		f.Add(s)
	}
	b := testBook(f)
	f.Fuzz(func(t *testing.T, md string) {
		r := New(b)
		p1, err1 := r.Render(doc(b, 1, md))
		p2, err2 := New(b).Render(doc(b, 1, md))
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("errors differ: %v / %v", err1, err2)
		}
		if err1 != nil {
			return
		}
		if !bytes.Equal(p1.HTML, p2.HTML) {
			t.Fatal("output not deterministic")
		}
	})
}

// FuzzTokenizeHTML checks that tokenizeHTML (the raw HTML checks mdBook
// 0.5 makes, htmlcheck.go) never panics and reports tags and problems at
// offsets of its input, a tag at a "<".
func FuzzTokenizeHTML(f *testing.F) {
	for _, s := range []string{"<div>x<span>foo</span/>y</div>", "<p class=a class='b'>", "<!-- x", "</>", "a < b", "<script>a<b</script>", "<a href=\"x\"", "<x/ y>", "<!doctype html>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		toks, probs := tokenizeHTML(s)
		for _, tk := range toks {
			if tk.at < 0 || tk.at >= len(s) || s[tk.at] != '<' || tk.name == "" {
				t.Fatalf("%q: token %+v", s, tk)
			}
		}
		for _, p := range probs {
			if p.at < 0 || p.at >= len(s) || p.msg == "" {
				t.Fatalf("%q: problem %+v", s, p)
			}
		}
	})
}
