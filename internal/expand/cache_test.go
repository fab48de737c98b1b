package expand

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestCacheSeesEdits expands a book through a Cache after each of a series
// of edits and compares the result with an expansion without one: an edit
// to the chapter, to a Go file it includes (of the same size, so only its
// content tells), to a Go file an included Markdown file includes, an
// included file replaced by a symbolic link to an equal file elsewhere
// (its real path changes) and by one outside the repository, and an
// included file removed and restored (errors are never cached).
func TestCacheSeesEdits(t *testing.T) {
	chapter := "# Ch\n\n```go\n{{#include ../examples/s/a.go}}\n```\n\n{{#include part.md}}\n"
	b, it := bookWith(t, chapter, map[string]string{
		"examples/s/a.go":  "package s // a1\n",
		"examples/s/c.go":  "package s // c1\n",
		"examples/s/eq.go": "package s // a9\n",
		"book/part.md":     "Part.\n\n```go\n{{#include ../examples/s/c.go}}\n```\n",
	})
	outside := filepath.Join(t.TempDir(), "a.go")
	if err := os.WriteFile(outside, []byte("package s // a9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &Cache{}
	a := filepath.Join(b.Root, "examples", "s", "a.go")
	check := func(step string) {
		t.Helper()
		want, wantErr := All(b)
		got, gotErr := c.All(b)
		if (wantErr == nil) != (gotErr == nil) || (wantErr != nil && wantErr.Error() != gotErr.Error()) {
			t.Fatalf("%s: error %v, want %v", step, gotErr, wantErr)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d docs, want %d", step, len(got), len(want))
		}
		for i := range want {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Errorf("%s: cached expansion\n%s\nwant\n%s", step, got[i].Markdown, want[i].Markdown)
			}
		}
	}
	write := func(rel, s string) {
		t.Helper()
		writeTree(t, b.Root, map[string]string{rel: s})
	}
	check("first")
	if c.Len() != 1 {
		t.Fatalf("cache holds %d chapters after the first expansion, want 1", c.Len())
	}
	check("unchanged")
	write("examples/s/a.go", "package s // a2\n")
	check("same-size edit to an included Go file")
	write("examples/s/c.go", "package s // c2\n")
	check("edit to a file an included Markdown file includes")
	it.Source = []byte(strings.Replace(chapter, "# Ch", "# Chapter", 1))
	check("edit to the chapter")
	if err := os.Remove(a); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(b.Root, "examples", "s", "eq.go"), a); err != nil {
		t.Fatal(err)
	}
	check("an included file replaced by a link to an equal file")
	if err := os.Remove(a); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, a); err != nil {
		t.Fatal(err)
	}
	check("an included file replaced by a link outside the repository")
	if _, err := c.All(b); err == nil || !strings.Contains(err.Error(), "outside the repository") {
		t.Errorf("a link outside the repository: %v", err)
	}
	if err := os.Remove(a); err != nil {
		t.Fatal(err)
	}
	check("an included file removed")
	write("examples/s/a.go", "package s // a3\n")
	check("the included file restored")
	// The chapter's own file becomes a link to a Markdown file it
	// includes (one line of), which has the same text: the chapter is
	// now among its own includes.
	ch := filepath.Join(b.Root, "book", "ch.md")
	write("book/x.md", string(it.Source))
	write("book/part.md", "Part.\n\n{{#include x.md:1:1}}\n")
	check("an included Markdown file includes a line of another")
	if err := os.Remove(ch); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(b.Root, "book", "x.md"), ch); err != nil {
		t.Fatal(err)
	}
	// Including one line of itself is no cycle (mdBook stops only at
	// its depth limit): the expansion succeeds, cached or not.
	if _, err := All(b); err != nil {
		t.Fatalf("the chapter a link to the file it includes: %v", err)
	}
	check("the chapter a link to the file it includes")
}

// TestCacheNil: a nil Cache expands as All does.
func TestCacheNil(t *testing.T) {
	b, _ := bookWith(t, "# Ch\n", nil)
	var c *Cache
	docs, err := c.All(b)
	if err != nil || len(docs) != 1 || string(docs[0].Markdown) != "# Ch\n" {
		t.Fatalf("nil Cache: %v %v", docs, err)
	}
}
