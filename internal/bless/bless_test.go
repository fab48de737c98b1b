package bless

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, root, name, data string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, root, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestApplyBless(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "book/t.txt", "$ go run ./a\nold a\n$ go run ./b\nold b1\nold b2\n")
	if err := os.Chmod(filepath.Join(root, "book/t.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	edits := []Edit{
		{File: "book/t.txt", From: 2, To: 2, Lines: []string{"new a1", "new a2"}, Command: "go run ./a"},
		{File: "book/t.txt", From: 4, To: 5, Lines: nil, Command: "go run ./b"},
		// The same include blessed through a second chapter.
		{File: "book/t.txt", From: 2, To: 2, Lines: []string{"new a1", "new a2"}, Command: "go run ./a"},
	}
	done, errs := Apply(root, edits)
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
	_, errs = Apply(root, []Edit{
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
	_, errs := Apply(root, []Edit{{File: "book/ch.md", From: 3, To: 3, Lines: []string{"new 1", "new 2"}, Command: "go run ./a"}})
	if len(errs) != 0 {
		t.Fatalf("errors: %v", errs)
	}
	if got, want := readFile(t, root, "book/ch.md"), "```console\r\n$ go run ./a\r\nnew 1\r\nnew 2\r\n```\r\n"; got != want {
		t.Errorf("file = %q, want %q", got, want)
	}
}
