package render

import (
	"fmt"
	"strings"
	"testing"
)

// TestRawHTMLBlockedByCSPWarns checks that raw HTML the site's
// Content-Security-Policy blocks gets a warning at its own line (inside a
// multi-line HTML block too), and that the same text in code is not
// warned about.
func TestRawHTMLBlockedByCSPWarns(t *testing.T) {
	b := testBook(t)
	md := strings.Join([]string{
		"# Raw", // 1
		"",
		"<script>alert(1)</script>", // 3
		"",
		"<div>", // 5
		"  <iframe src=\"https://example.org/\"></iframe>", // 6
		"</div>",
		"",
		"Text with <style>p{}</style> inline.", // 9
		"",
		"<script src=\"https://cdn.example.org/x.js\"></script>", // 11
		"",
		"[click](javascript:alert(1)) and <a href=\"JavaScript:void(0)\">raw</a>", // 13
		"",
		"<p style=\"color:red\" onclick=\"go()\">styled</p>", // 15
		"",
		"```html",
		"<script>in code</script>",
		"```",
		"",
		"`<iframe>` in a code span, and <span class=\"x\">fine</span>.", // 21
		"",
	}, "\n")
	pg, err := New(b).Render(doc(b, 1, md))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range pg.Warnings {
		got = append(got, fmt.Sprintf("%s:%d: %s", w.File, w.Line, w.Msg))
	}
	want := []string{
		"book/ownership.md:3: raw HTML <script> in a chapter",
		"book/ownership.md:6: raw HTML <iframe>",
		"book/ownership.md:9: raw HTML <style>",
		"book/ownership.md:11: raw HTML <script src=\"https://cdn.example.org/x.js\"> loads a script from another site",
		"book/ownership.md:13: link to \"javascript:alert(1)\"",
		"book/ownership.md:13: javascript: URL in raw HTML",
		"book/ownership.md:15: raw HTML style=\"...\" attribute",
		"book/ownership.md:15: raw HTML event handler attribute",
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || strings.HasPrefix(g, w)
		}
		if !found {
			t.Errorf("no warning %q; got:\n%s", w, strings.Join(got, "\n"))
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d warnings, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
}
