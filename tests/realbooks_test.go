package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/ownership-book/ownership/internal/build"
)

// TestRealBooks builds real mdBook books with bookgen, as their authors
// would run it: BOOKGEN_REAL_BOOKS lists their folders (each holds a
// book.toml, or src/SUMMARY.md), separated as in $PATH
// ("/tmp/nomicon:/tmp/async-book"). Each book is built into a temporary
// folder, never its own; the test fails on a build error, printing every
// problem, and logs the book's pages, time and warnings (go test -v
// shows them). Without the variable it skips: the books are not part of
// the repository, and CI does not fetch them. See manual/src/mdbook.md,
// "Trying bookgen on real books".
func TestRealBooks(t *testing.T) {
	env := os.Getenv("BOOKGEN_REAL_BOOKS")
	if env == "" {
		t.Skip("set BOOKGEN_REAL_BOOKS=/path/to/book:/path/to/other (folders of mdBook books) to build them with bookgen")
	}
	for _, dir := range filepath.SplitList(env) {
		if dir == "" {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			root, err := build.FindRoot(dir)
			if err != nil {
				t.Fatalf("%s: %v", dir, err)
			}
			opt := build.Options{Root: root, Out: filepath.Join(t.TempDir(), "site")}
			opt.Verify.CacheDir = t.TempDir()
			res, err := build.Build(context.Background(), opt)
			if res != nil {
				for _, w := range res.Warnings {
					t.Logf("warning: %s", w)
				}
			}
			if err != nil {
				var b strings.Builder
				build.PrintError(&b, err)
				t.Fatalf("%s: the build failed:\n%s", dir, b.String())
			}
			t.Logf("%s: %d pages in %s, %d warnings%s", dir, res.Pages, res.Elapsed.Round(1e6), len(res.Warnings), warningKinds(res))
		})
	}
}

var quotedRE = regexp.MustCompile(`"[^"]*"|` + "`[^`]*`")

// warningKinds sums up res's warnings by their message with names and
// paths left out (`link … names …, which does not exist`: 12), most
// frequent first, for the log's last line.
func warningKinds(res *build.Result) string {
	n := map[string]int{}
	for _, w := range res.Warnings {
		words := strings.Fields(quotedRE.ReplaceAllString(w.Msg, "…"))
		for i, wd := range words {
			if strings.ContainsAny(wd, "/#") {
				words[i] = "…"
			}
		}
		if len(words) > 12 {
			words = append(words[:12], "…")
		}
		n[strings.Join(words, " ")]++
	}
	if len(n) == 0 {
		return ""
	}
	kinds := make([]string, 0, len(n))
	for k := range n {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool {
		if n[kinds[i]] != n[kinds[j]] {
			return n[kinds[i]] > n[kinds[j]]
		}
		return kinds[i] < kinds[j]
	})
	var b strings.Builder
	b.WriteString(" (")
	for i, k := range kinds {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s: %d", k, n[k])
	}
	b.WriteString(")")
	return b.String()
}
