package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ownership-book/ownership/internal/build"
	"github.com/ownership-book/ownership/internal/render"
)

// BenchmarkProseRebuild measures what bookgen serve does after an edit to
// a chapter's prose, on the good fixture with warm caches: load, expand,
// verify (every check from the cache, no go process), render the edited
// chapter only, and write and swap the whole site. Run with
//
//	go test ./tests -run '^$' -bench ProseRebuild
func BenchmarkProseRebuild(b *testing.B) {
	root := copyFixtureB(b, "good")
	opt := build.Options{Root: root, Out: filepath.Join(b.TempDir(), "site"), Renders: &render.Cache{}}
	opt.Verify.CacheDir = b.TempDir()
	if _, err := build.Build(context.Background(), opt); err != nil {
		b.Fatal(err)
	}
	intro := filepath.Join(root, "book", "intro.md")
	src, err := os.ReadFile(intro)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		if err := os.WriteFile(intro, fmt.Appendf(append([]byte{}, src...), "\nEdit %d.\n", i), 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := build.Build(context.Background(), opt)
		if err != nil {
			b.Fatal(err)
		}
		if res.Rendered != 1 {
			b.Fatalf("rebuild rendered %d chapters: %s", res.Rendered, res.Summary())
		}
	}
}

// copyFixtureB is copyFixture for benchmarks.
func copyFixtureB(b *testing.B, name string) string {
	dst := filepath.Join(b.TempDir(), name)
	if err := os.CopyFS(dst, os.DirFS(filepath.Join("testdata", name))); err != nil {
		b.Fatal(err)
	}
	return dst
}
