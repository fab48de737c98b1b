package build

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/expand"
)

// mdBookGuide writes a miniature of mdBook's repository under a new
// folder: a git work tree (.git/) holding examples/ and the user guide in
// guide/ (book.toml, src/), whose chapter src/for_developers/preprocessors.md
// includes ../../../examples/nop-preprocessor.rs, as the real guide does.
// It returns the folder and the guide's root.
func mdBookGuide(t *testing.T) (top, guide string) {
	t.Helper()
	top = filepath.Join(t.TempDir(), "mdBook")
	writeFiles(t, top, map[string]string{
		".git/HEAD":                    "ref: refs/heads/master\n",
		"examples/nop-preprocessor.rs": "// nop_preprocessor_body\nfn main() {}\n",
		"guide/book.toml":              "[book]\ntitle = \"mdBook Documentation\"\n",
		"guide/src/SUMMARY.md":         "# Summary\n\n- [Preprocessors](for_developers/preprocessors.md)\n",
		"guide/src/for_developers/preprocessors.md": "# Preprocessors\n\n```rust\n" +
			"{{#include ../../../examples/nop-preprocessor.rs}}\n```\n",
	})
	return top, filepath.Join(top, "guide")
}

// TestIncludeInsideGitWorkTree checks that an include may reach out of the
// book's root into the git work tree that holds it (mdBook's guide
// includes the repository's examples/), directly or through a symbolic
// link (outside src/, which the site copies and whose links stay inside
// the book's root), named from the book's root ("../examples/x.rs") in Deps and
// Origins, and that the expansion cache sees such a file change.
func TestIncludeInsideGitWorkTree(t *testing.T) {
	top, guide := mdBookGuide(t)
	if err := os.Symlink(filepath.Join(top, "examples", "nop-preprocessor.rs"), filepath.Join(guide, "nop.rs")); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, guide, map[string]string{
		"src/SUMMARY.md": "# Summary\n\n- [Preprocessors](for_developers/preprocessors.md)\n- [Linked](linked.md)\n",
		"src/linked.md":  "# Linked\n\n```rust\n{{#include ../nop.rs:2}}\n```\n",
	})
	root, err := FindRoot(filepath.Join(guide, "src", "for_developers"))
	if err != nil || root != guide {
		t.Fatalf("FindRoot = %q, %v; want %s", root, err, guide)
	}
	if _, err := buildRoot(t, root); err != nil {
		t.Fatalf("Build: %v", err)
	}

	b, err := book.Load(guide)
	if err != nil {
		t.Fatal(err)
	}
	if want := realPath(t, top); b.Repo != want {
		t.Errorf("Repo = %q, want %q", b.Repo, want)
	}
	var c expand.Cache
	docs, err := c.All(b)
	if err != nil {
		t.Fatal(err)
	}
	const dep = "../examples/nop-preprocessor.rs"
	if d := docs[0]; !slices.Equal(d.Deps, []string{dep}) || d.Origin(4) != (expand.Origin{File: dep, Line: 1}) || !strings.Contains(string(d.Markdown), "nop_preprocessor_body") {
		t.Errorf("Deps %q, line 4 from %v, Markdown:\n%s", d.Deps, d.Origin(4), d.Markdown)
	}
	if d := docs[1]; !slices.Equal(d.Deps, []string{"nop.rs"}) || !strings.Contains(string(d.Markdown), "fn main() {}") {
		t.Errorf("through a link: Deps %q, Markdown:\n%s", d.Deps, d.Markdown)
	}
	writeFiles(t, top, map[string]string{"examples/nop-preprocessor.rs": "// edited\nfn main() {}\n"})
	if docs, err = c.All(b); err != nil || !strings.Contains(string(docs[0].Markdown), "edited") {
		t.Errorf("after an edit outside the book's root: %v\n%s", err, docs[0].Markdown)
	}
}

// TestIncludeLeavingGitWorkTree checks that an include leaving the git
// work tree that holds the book, by its path or through a symbolic link,
// is an error at the directive's line that keeps the last good site, and
// that without a .git anywhere above the book the book's root is the
// limit, as it always was.
func TestIncludeLeavingGitWorkTree(t *testing.T) {
	top, guide := mdBookGuide(t)
	outside := filepath.Join(filepath.Dir(top), "outside.rs")
	writeFiles(t, filepath.Dir(top), map[string]string{"outside.rs": "fn secret() {}\n"})
	out := filepath.Join(t.TempDir(), "site")
	opt := Options{Root: guide, Out: out}
	opt.Verify.CacheDir = t.TempDir()
	if _, err := Build(t.Context(), opt); err != nil {
		t.Fatalf("Build: %v", err)
	}
	page := filepath.Join(out, "for_developers", "preprocessors.html")

	const chapter = "src/for_developers/preprocessors.md"
	if err := os.Symlink(outside, filepath.Join(guide, "out.rs")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ include, want string }{
		{"../../../../outside.rs", chapter + `:6: include path "../../../../outside.rs" leaves the repository (the git work tree ` + realPath(t, top) + ")"},
		{"../../out.rs", chapter + ":6: included file out.rs resolves to " + realPath(t, outside) + ", outside the repository (the git work tree " + realPath(t, top) + ")"},
	} {
		writeFiles(t, guide, map[string]string{chapter: "# Preprocessors\n\n```rust\n{{#include ../../../examples/nop-preprocessor.rs}}\n\n{{#include " + tc.include + "}}\n```\n"})
		_, err := Build(t.Context(), opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("{{#include %s}}: %v; want %s", tc.include, err, tc.want)
		}
		if _, err := os.Stat(page); err != nil {
			t.Errorf("the last good site is gone: %v", err)
		}
	}

	// No .git: the book's root is the repository, as before.
	if err := os.RemoveAll(filepath.Join(top, ".git")); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, guide, map[string]string{chapter: "# Preprocessors\n\n```rust\n{{#include ../../../examples/nop-preprocessor.rs}}\n```\n"})
	want := chapter + `:4: include path "../../../examples/nop-preprocessor.rs" leaves the repository (` + realPath(t, guide) + ": no folder above it holds .git"
	if _, err := Build(t.Context(), opt); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("without .git: %v; want %s", err, want)
	}
}
