package book

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestCacheSeesEdits loads a book through a Cache after edits that keep a
// chapter's size: one just after the read (its modification time is too
// recent to vouch for it), one whose modification time is set back to the
// cached one (the change time tells), and a new file renamed over the
// chapter with the old times (another inode); the last two on Linux, where
// Cache compares the change time and inode. Each must be seen;
// an untouched chapter with an old time comes from the cache.
func TestCacheSeesEdits(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"book/SUMMARY.md": "- [A](a.md)\n- [B](b.md)\n",
		"book/a.md":       "# A1\n",
		"book/b.md":       "# B1\n",
	})
	a, bFile := filepath.Join(dir, "book", "a.md"), filepath.Join(dir, "book", "b.md")
	old := time.Now().Add(-time.Hour)
	c := &Cache{window: 50 * time.Millisecond}
	load := func(step, wantA string) {
		t.Helper()
		b, err := c.Load(dir)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if got := string(b.Chapters[0].Source); got != wantA {
			t.Errorf("%s: a.md is %q, want %q", step, got, wantA)
		}
		if got := string(b.Chapters[1].Source); got != "# B1\n" {
			t.Errorf("%s: b.md is %q", step, got)
		}
	}
	load("first", "# A1\n")
	if err := os.WriteFile(a, []byte("# A2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	load("an edit just after the read", "# A2\n")
	for _, f := range []string{a, bFile} {
		if err := os.Chtimes(f, old, old); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(60 * time.Millisecond) // past the change time's racy window
	load("old times", "# A2\n")
	hits := c.hits
	load("unchanged", "# A2\n")
	if c.hits != hits+2 {
		t.Fatalf("an unchanged book with old times: %d chapters from the cache, want 2", c.hits-hits)
	}
	if runtime.GOOS == "linux" {
		if err := os.WriteFile(a, []byte("# A3\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(a, old, old); err != nil {
			t.Fatal(err)
		}
		load("an edit with the old modification time", "# A3\n")
	}
	if runtime.GOOS != "linux" {
		return // elsewhere size, modification time and mode decide
	}
	tmp := filepath.Join(dir, "book", ".a.md.new")
	if err := os.WriteFile(tmp, []byte("# A4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, a); err != nil {
		t.Fatal(err)
	}
	load("a new file renamed over the chapter", "# A4\n")
}
