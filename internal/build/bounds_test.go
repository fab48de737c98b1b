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

// TestBlocksReadDifferentlyRefused: with definition-lists = false, a
// fenced block inside a definition is part of a paragraph on the page
// while verification, which reads with definition lists on, checks it as
// a block; the build refuses it at its line rather than show a page whose
// blocks and verdicts do not match. The same chapter builds with the
// default settings, and a block outside the definition builds with them
// off.
func TestBlocksReadDifferentlyRefused(t *testing.T) {
	chapter := "# A\n\nTerm\n: A definition.\n\n    ```text\n    inside\n    ```\n\n```text\noutside\n```\n"
	_, err := buildOff(t, map[string]string{
		"book/SUMMARY.md": "# Summary\n\n- [A](a.md)\n",
		"book/a.md":       chapter,
	})
	if err == nil || !strings.Contains(err.Error(), "book/a.md:6: this code block is read differently") {
		t.Fatalf("err = %v, want a refusal at book/a.md:6", err)
	}
	if _, err := buildRepo(t, map[string]string{
		"book/SUMMARY.md": "# Summary\n\n- [A](a.md)\n",
		"book/a.md":       chapter,
	}); err != nil {
		t.Errorf("with definition lists on: %v", err)
	}
	if _, err := buildOff(t, map[string]string{
		"book/SUMMARY.md": "# Summary\n\n- [A](a.md)\n",
		"book/a.md":       "# A\n\nTerm\n: A definition.\n\n```text\noutside\n```\n",
	}); err != nil {
		t.Errorf("a block outside the definition: %v", err)
	}
}

// buildOff is buildRepo for a book.toml that turns definition lists off.
func buildOff(t *testing.T, files map[string]string) (*Result, error) {
	t.Helper()
	root := writeRepo(t, files)
	writeFiles(t, root, map[string]string{"book/book.toml": "[book]\ntitle = \"X\"\n\n[output.html]\ndefinition-lists = false\n"})
	return buildRoot(t, root)
}
