package verify

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/expand"
)

// TestClaimLinkCacheSeesEdits finds the claims of a chapter, then of the
// same chapter after an edit to its Markdown, to its path, to the origin
// of its lines and to the test file a link names: each change must show,
// although the second and later parses of unchanged Markdown come from
// a MarkdownCache.
func TestClaimLinkCacheSeesEdits(t *testing.T) {
	root := t.TempDir()
	testFile := filepath.Join(root, "examples", "x", "x_test.go")
	if err := os.MkdirAll(filepath.Dir(testFile), 0o755); err != nil {
		t.Fatal(err)
	}
	writeTest := func(src string) {
		if err := os.WriteFile(testFile, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeTest("package x\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {}\n\nfunc TestB(t *testing.T) {}\n")
	doc := func(chPath, md string, file string) *expand.Doc {
		d := &expand.Doc{Chapter: &book.Item{Title: "Ch", Path: chPath}, Markdown: []byte(md)}
		for i := range strings.Split(md, "\n") {
			d.Origins = append(d.Origins, expand.Origin{File: file, Line: i + 1})
		}
		return d
	}
	mc := &MarkdownCache{}
	find := func(d *expand.Doc) string {
		t.Helper()
		claims, errs := findClaimsIn(mc, root, d)
		var out []string
		for _, c := range claims {
			out = append(out, c.File+":"+strconv.Itoa(c.Line)+" "+c.ID+" "+c.Text)
		}
		for _, e := range errs {
			out = append(out, "error "+e.Error())
		}
		return strings.Join(out, "\n")
	}
	md := "# Ch\n\nOwners fence, as [TestA](../examples/x/x_test.go#TestA) shows.\n"
	first := find(doc("ch.md", md, "book/ch.md"))
	if want := "book/ch.md:3 check-TestA Owners fence, as TestA shows."; first != want {
		t.Fatalf("first scan:\n%s\nwant:\n%s", first, want)
	}
	if again := find(doc("ch.md", md, "book/ch.md")); again != first {
		t.Errorf("the cached scan differs:\n%s\nwant:\n%s", again, first)
	}
	for _, c := range []struct {
		name, chPath, md, file, want string
	}{
		{"edited text", "ch.md", "# Ch\n\nWriters fence, as [TestA](../examples/x/x_test.go#TestA) shows.\n", "book/ch.md",
			"book/ch.md:3 check-TestA Writers fence, as TestA shows."},
		{"moved link", "ch.md", "# Ch\n\nIntro.\n\nOwners fence, as [TestA](../examples/x/x_test.go#TestA) shows.\n", "book/ch.md",
			"book/ch.md:5 check-TestA Owners fence, as TestA shows."},
		{"other function", "ch.md", "# Ch\n\nOwners fence, as [TestB](../examples/x/x_test.go#TestB) shows.\n", "book/ch.md",
			"book/ch.md:3 check-TestB Owners fence, as TestB shows."},
		// The same Markdown at another path: the link is relative to
		// the chapter, and from sub/ it no longer reaches examples/.
		{"other path", "sub/ch.md", md, "book/sub/ch.md", ""},
		// The same Markdown included from another file: the origin moves.
		{"other origin", "ch.md", md, "book/part.md", "book/part.md:3 check-TestA Owners fence, as TestA shows."},
	} {
		if got := find(doc(c.chPath, c.md, c.file)); got != c.want {
			t.Errorf("%s:\n%s\nwant:\n%s", c.name, got, c.want)
		}
	}
	// The Markdown is unchanged (its links come from the cache) but the
	// test file lost TestA: the claim must fail.
	writeTest("package x\n\nimport \"testing\"\n\nfunc TestB(t *testing.T) {}\n")
	if got := find(doc("ch.md", md, "book/ch.md")); !strings.Contains(got, "has no function TestA") {
		t.Errorf("after TestA was removed from the test file:\n%s", got)
	}
}
