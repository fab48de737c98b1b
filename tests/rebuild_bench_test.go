package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ownership-book/ownership/internal/build"
	"github.com/ownership-book/ownership/internal/render"
	"github.com/ownership-book/ownership/internal/site"
)

// BenchmarkProseRebuildLarge is BenchmarkProseRebuild on a generated book
// of 1,000 chapters (genBook), with the caches bookgen serve keeps:
// rendered chapters and the previous site (site.Incremental). Run with
//
//	go test ./tests -run '^$' -bench ProseRebuildLarge
func BenchmarkProseRebuildLarge(b *testing.B) {
	root, chapter := genBook(b, 1000)
	opt := build.Options{Root: root, Out: filepath.Join(b.TempDir(), "site"), Renders: &render.Cache{}, Incremental: &site.Incremental{}}
	opt.Verify.CacheDir = b.TempDir()
	if _, err := build.Build(context.Background(), opt); err != nil {
		b.Fatal(err)
	}
	src, err := os.ReadFile(chapter)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		if err := os.WriteFile(chapter, fmt.Appendf(append([]byte{}, src...), "\nEdit %d.\n", i), 0o644); err != nil {
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
