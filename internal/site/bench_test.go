package site

import (
	"fmt"
	"path/filepath"
	"testing"
)

// The template and write stages of a build, on generated books of 100,
// 1,000 and 4,000 chapters (bigBook: every tenth chapter in a folder,
// every seventh with a nested one). Both report ms/page, which stays flat
// as the book grows when neither stage is quadratic. The render stage is
// internal/render's BenchmarkRender; a whole build, with peak memory, is
// tests' BenchmarkBuild. Run with
//
//	go test ./internal/site -run '^$' -bench 'PageTemplate|Write'
var benchSizes = []int{100, 1000, 4000}

// BenchmarkPageTemplate executes the embedded theme's page template for
// every chapter, with the sidebar rendered once per folder depth as Write
// does; books above InlineSidebarMax chapters get the shared sidebar's
// script reference instead, as Write gives them.
func BenchmarkPageTemplate(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("chapters=%d", n), func(b *testing.B) {
			bk, pages := bigBook(b, n)
			tmpl := parseTheme(b)
			sb := newSidebars(tmpl, bk.Items)
			if len(sb.chaps) > InlineSidebarMax {
				sb.script, sb.contents = "assets/toc.0123abcd.js", "toc.html"
			}
			a := assets{css: "assets/book.css", js: "assets/book.js", themeJS: "assets/theme.js",
				search: "assets/search.json", searchLib: "assets/vendor/minisearch/minisearch.js"}
			bytes := 0
			for b.Loop() {
				for i, ch := range bk.Chapters {
					html, err := page(tmpl, sb, bk, pages, i, ch.Path, a)
					if err != nil {
						b.Fatal(err)
					}
					bytes += len(html)
				}
			}
			reportPerPage(b, n)
			b.ReportMetric(float64(bytes)/float64(b.N*n)/1024, "KiB/page")
		})
	}
}

// BenchmarkWrite writes the whole site of rendered chapters into a new
// folder: link check, pages, print page, search index, sitemap, assets,
// and the swap into place.
func BenchmarkWrite(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("chapters=%d", n), func(b *testing.B) {
			bk, pages := bigBook(b, n)
			dir := b.TempDir()
			k := 0
			for b.Loop() {
				k++
				if _, err := Write(bk, pages, filepath.Join(dir, fmt.Sprint(k)), Options{}); err != nil {
					b.Fatal(err)
				}
			}
			reportPerPage(b, n)
		})
	}
}

func reportPerPage(b *testing.B, n int) {
	per := float64(b.Elapsed().Nanoseconds()) / float64(b.N*n)
	b.ReportMetric(per/1e6, "ms/page")
	b.ReportMetric(1e9/per, "pages/s")
}
