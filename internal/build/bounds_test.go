package build

import (
	"strings"
	"testing"
)

// TestPathologicalMarkdownRefusedAtTheLine: a chapter goldmark would
// take a minute on ("[x](" 60,000 times) and an included file nesting a
// list 1,000 deep are refused at their lines, both in one run, without
// parsing them.
func TestPathologicalMarkdownRefusedAtTheLine(t *testing.T) {
	var list strings.Builder
	for i := range 1000 {
		list.WriteString(strings.Repeat("  ", i) + "- a\n")
	}
	_, err := buildRepo(t, map[string]string{
		"book/SUMMARY.md": "# Summary\n\n- [A](a.md)\n- [B](b.md)\n",
		"book/a.md":       "# A\n\nText.\n\n" + strings.Repeat("[x](", 60000) + "\n",
		"book/b.md":       "# B\n\n{{#include list.txt}}\n\n{{#include links.md}}\n",
		"book/list.txt":   list.String(),
		// An included .md file is parsed by expand (its fences) before
		// the build's check: the bound must hold there too.
		"book/links.md": strings.Repeat("[y](", 60000) + "\n",
	})
	if err == nil {
		t.Fatal("build succeeded")
	}
	msg := err.Error()
	for _, want := range []string{
		`book/a.md:5: 60000 link destinations in this paragraph are opened with "](" and never closed`,
		"book/list.txt:101: lists and block quotes nest 101 deep here",
		"book/links.md:1: 60000 link destinations",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%.2000s", want, msg)
		}
	}
}
