package build

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// buildRepo builds the repository of files (see writeRepo) into a
// temporary site and returns the result and error of Build.
func buildRepo(t *testing.T, files map[string]string) (*Result, error) {
	t.Helper()
	root := writeRepo(t, files)
	return buildRoot(t, root)
}

func buildRoot(t *testing.T, root string) (*Result, error) {
	t.Helper()
	opt := Options{Root: root, Out: filepath.Join(t.TempDir(), "site")}
	opt.Verify.CacheDir = t.TempDir()
	return Build(t.Context(), opt)
}

// TestEditorLeftoversNotPublished checks that the files editors leave
// beside the ones they edit (Emacs, Vim, JetBrains, sed -i, backups) are
// not copied to the site, while an image beside them is.
func TestEditorLeftoversNotPublished(t *testing.T) {
	leftovers := []string{"4913", "#ch.md#", ".#ch.md", "ch.md~", "fig.png~", ".ch.md.swp", "ch.md.swp",
		"ch.md.swx", "fig.png.bck", "ch.md.bak", "ch.md___jb_tmp___", "ch.md___jb_old___", "fig.png___jb_bak___", "sedAb12x9"}
	files := map[string]string{
		"book/SUMMARY.md": "# Summary\n\n- [Ch](ch.md)\n",
		"book/ch.md":      "# Ch\n\n![f](fig.png)\n",
		"book/fig.png":    "png",
	}
	for _, n := range leftovers {
		files["book/"+n] = "leftover"
		files["book/img/"+n] = "leftover"
	}
	res, err := buildRepo(t, files)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(res.Files, "fig.png") {
		t.Errorf("fig.png not copied: %v", res.Files)
	}
	for _, f := range res.Files {
		base := f[strings.LastIndex(f, "/")+1:]
		if slices.Contains(leftovers, base) {
			t.Errorf("editor leftover %s published", f)
		}
	}
	if _, err := os.Stat(filepath.Join(res.Out, "4913")); err == nil {
		t.Error("4913 written to the site")
	}
}
