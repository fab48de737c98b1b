package verify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/expand"
	"github.com/ownership-book/ownership/internal/markdown"
)

func TestApplyBless(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "book/t.txt", "$ go run ./a\nold a\n$ go run ./b\nold b1\nold b2\n")
	if err := os.Chmod(filepath.Join(root, "book/t.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	edits := []blessEdit{
		{File: "book/t.txt", From: 2, To: 2, Lines: []string{"new a1", "new a2"}, Command: "go run ./a"},
		{File: "book/t.txt", From: 4, To: 5, Lines: nil, Command: "go run ./b"},
		// The same include blessed through a second chapter.
		{File: "book/t.txt", From: 2, To: 2, Lines: []string{"new a1", "new a2"}, Command: "go run ./a"},
	}
	done, errs := applyBless(root, edits)
	if len(errs) != 0 {
		t.Fatalf("errors: %v", errs)
	}
	if got, want := readFile(t, root, "book/t.txt"), "$ go run ./a\nnew a1\nnew a2\n$ go run ./b\n"; got != want {
		t.Errorf("file = %q, want %q", got, want)
	}
	if fi, _ := os.Stat(filepath.Join(root, "book/t.txt")); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600 kept", fi.Mode().Perm())
	}
	if want := "book/t.txt:2: go run ./a (1 lines -> 2 lines)\nbook/t.txt:4: go run ./b (2 lines -> 0 lines)"; strings.Join(done, "\n") != want {
		t.Errorf("done = %q", done)
	}
	ents, _ := os.ReadDir(filepath.Join(root, "book"))
	if len(ents) != 1 {
		t.Errorf("temporary files left behind: %v", ents)
	}

	// Overlapping edits are refused and nothing is written.
	before := readFile(t, root, "book/t.txt")
	_, errs = applyBless(root, []blessEdit{
		{File: "book/t.txt", From: 2, To: 3, Lines: []string{"x"}},
		{File: "book/t.txt", From: 3, To: 3, Lines: []string{"y"}},
	})
	if len(errs) != 1 || readFile(t, root, "book/t.txt") != before {
		t.Errorf("overlap: errs %v, file %q", errs, readFile(t, root, "book/t.txt"))
	}
}

// TestApplyBlessKeepsCRLF checks that a transcript in a file with CRLF line
// ends is rewritten with CRLF line ends.
func TestApplyBlessKeepsCRLF(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "book/ch.md", "```console\r\n$ go run ./a\r\nold\r\n```\r\n")
	_, errs := applyBless(root, []blessEdit{{File: "book/ch.md", From: 3, To: 3, Lines: []string{"new 1", "new 2"}, Command: "go run ./a"}})
	if len(errs) != 0 {
		t.Fatalf("errors: %v", errs)
	}
	if got, want := readFile(t, root, "book/ch.md"), "```console\r\n$ go run ./a\r\nnew 1\r\nnew 2\r\n```\r\n"; got != want {
		t.Errorf("file = %q, want %q", got, want)
	}
}

func TestBlessForRefusesScatteredTranscripts(t *testing.T) {
	d := &expand.Doc{Chapter: &book.Item{Path: "ch.md"}, Origins: []expand.Origin{
		{File: "book/ch.md", Line: 1}, {File: "book/ch.md", Line: 2}, {File: "book/out.txt", Line: 1},
	}}
	blk := markdown.Block{Lines: []string{"$ go run ./a", "old"}, LineNos: []int{2, 3}, Prefixes: []string{"", ""}}
	cmds, _ := markdown.ParseTranscript(blk.Lines)
	if _, err := blessFor(d, blk, cmds[0], []string{"new"}); err == nil || !strings.Contains(err.Error(), "book/out.txt:1") {
		t.Errorf("err = %v, want a refusal naming book/out.txt:1", err)
	}
	d.Origins[2] = expand.Origin{File: "book/ch.md", Line: 3}
	if _, err := blessFor(d, blk, cmds[0], []string{"$ go run ./b"}); err == nil {
		t.Error("an output line reading as a command was blessed")
	}
	e, err := blessFor(d, blk, cmds[0], []string{"new", ""})
	if err != nil || e.File != "book/ch.md" || e.From != 3 || e.To != 3 || strings.Join(e.Lines, "|") != "new|" {
		t.Errorf("edit = %+v, %v", e, err)
	}
}
