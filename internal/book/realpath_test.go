package book

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ownership-book/ownership/internal/diag"
)

// TestLoadResolvesLinkedFolders: chapters whose folder, not file, is a
// symbolic link (realPaths resolves each folder once) are refused when the
// folder is outside the repository and read when it is inside, and a
// chapter beside them in an ordinary folder is unaffected.
func TestLoadResolvesLinkedFolders(t *testing.T) {
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"secret.md": "s", "other.md": "o"})
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"book/SUMMARY.md":    "- [A](a.md)\n- [In](in/b.md)\n- [Out](out/secret.md)\n- [Out 2](out/other.md)\n",
		"book/a.md":          "# A\n",
		"examples/docs/b.md": "# B\n",
	})
	if err := os.Symlink(outside, filepath.Join(dir, "book", "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "examples", "docs"), filepath.Join(dir, "book", "in")); err != nil {
		t.Fatal(err)
	}
	_, err := Load(dir)
	errs := diag.All(err)
	if len(errs) != 2 {
		t.Fatalf("err = %v, want the two chapters under out/ refused", err)
	}
	for i, e := range errs {
		var de *diag.Error
		if !errors.As(e, &de) || de.Line != 3+i || !strings.Contains(de.Msg, "outside the repository") {
			t.Errorf("error %d = %v, want outside-the-repository at SUMMARY.md:%d", i, e, 3+i)
		}
	}
	writeTree(t, dir, map[string]string{"book/SUMMARY.md": "- [A](a.md)\n- [In](in/b.md)\n"})
	b, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Chapters) != 2 || string(b.Chapters[1].Source) != "# B\n" {
		t.Fatalf("chapters %v", b.Chapters)
	}
}
