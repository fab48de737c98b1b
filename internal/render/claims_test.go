package render

import (
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

func TestRelPath(t *testing.T) {
	for _, c := range []struct{ from, to, want string }{
		{"book", "book/ownership.md", "ownership.md"},
		{"book/ref", "book/ownership.md", "../ownership.md"},
		{"book", "examples/x/x_test.go", "../examples/x/x_test.go"},
		{"book/a/b", "examples/x/x_test.go", "../../../examples/x/x_test.go"},
		{"book/a", "book/a/c.md", "c.md"},
	} {
		if got := relPath(c.from, c.to); got != c.want {
			t.Errorf("relPath(%q, %q) = %q, want %q", c.from, c.to, got, c.want)
		}
	}
}

// TestEscapeMarkdown renders escaped text in a table cell and gets the
// text back, with no link, emphasis, code or cell break made of it.
func TestEscapeMarkdown(t *testing.T) {
	md := goldmark.New(goldmark.WithExtensions(extension.Table))
	for _, s := range []string{
		"a | b", "*not emphasis*", "`code`", "[x](y)", "<b>bold</b>", "epoch e' > e.", `back\slash`, "x_y_z", "#1 & 2",
	} {
		var b strings.Builder
		src := "| h |\n| --- |\n| " + escapeMarkdown(s) + " |\n"
		if err := md.Convert([]byte(src), &b); err != nil {
			t.Fatal(err)
		}
		html := b.String()
		i := strings.Index(html, "<td>")
		j := strings.Index(html, "</td>")
		if i < 0 || j < i {
			t.Fatalf("%q: no cell in %s", s, html)
		}
		cell := strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&", "&quot;", `"`).Replace(html[i+4 : j])
		if cell != s {
			t.Errorf("escapeMarkdown(%q) renders as %q", s, cell)
		}
	}
}
