package verify

import (
	"context"
	"strings"
	"testing"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/expand"
)

// TestFragmentCacheSeesEdits verifies a chapter's Go fragments three
// times: the second verification takes both from the FragmentCache (counted
// as cached, not run), and after an edit the changed fragment is parsed
// again: a fragment that no longer parses fails at its line, although its
// old text had parsed.
func TestFragmentCacheSeesEdits(t *testing.T) {
	fragments := &FragmentCache{}
	root := t.TempDir()
	writeFile(t, root, "go.mod", "module example.com/p\n\ngo 1.26\n")
	writeFile(t, root, "book/SUMMARY.md", "# Summary\n\n[Ch](ch.md)\n")
	chapter := "# Ch\n\n```go\nx := epoch + 1\n```\n\n```go\nfunc f() int { return 1 }\n```\n"
	writeFile(t, root, "book/ch.md", chapter)
	run := func() (*Report, error) {
		t.Helper()
		b, err := book.Load(root)
		if err != nil {
			t.Fatal(err)
		}
		docs, err := expand.All(b)
		if err != nil {
			t.Fatal(err)
		}
		return Verify(context.Background(), b, docs, Options{CacheDir: t.TempDir(), Fragments: fragments})
	}
	parses := func(r *Report) (ran, cached []string) {
		for _, c := range r.Checks {
			if c.Kind != "parse" {
				continue
			}
			if c.Cached {
				cached = append(cached, c.Subject)
			} else {
				ran = append(ran, c.Subject)
			}
		}
		return ran, cached
	}
	rep, err := run()
	if err != nil {
		t.Fatal(err)
	}
	if ran, cached := parses(rep); len(ran) != 2 || len(cached) != 0 || rep.Ran != 2 || rep.Cached != 0 {
		t.Errorf("first verification: parsed %q, cached %q, Ran %d, Cached %d; want 2 parsed", ran, cached, rep.Ran, rep.Cached)
	}
	rep, err = run()
	if err != nil {
		t.Fatal(err)
	}
	if ran, cached := parses(rep); len(ran) != 0 || len(cached) != 2 || rep.Ran != 0 || rep.Cached != 2 {
		t.Errorf("second verification: parsed %q, cached %q, Ran %d, Cached %d; want 2 cached", ran, cached, rep.Ran, rep.Cached)
	}
	// The first fragment no longer parses; the second changed and parses.
	writeFile(t, root, "book/ch.md", strings.NewReplacer("x := epoch + 1", "x := epoch +", "return 1", "return 2").Replace(chapter))
	rep, err = run()
	if err == nil || !strings.Contains(err.Error(), "book/ch.md:4: go block does not parse") {
		t.Fatalf("after breaking the first fragment: %v", err)
	}
	if ran, cached := parses(rep); strings.Join(ran, ",") != "book/ch.md:7" || len(cached) != 0 {
		t.Errorf("after the edit: parsed %q, cached %q; want the second fragment parsed again", ran, cached)
	}
}
