package browser

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ownership-book/ownership/internal/build"
)

// TestFragmentRedirects follows book.toml's [output.html.redirect] keys
// with a #fragment in Chromium, under the site's Content-Security-Policy:
// theme.js reads the page's map (mdBook 0.5's fragment_map, index.hbs and
// redirect.hbs) and sends the reader on.
func TestFragmentRedirects(t *testing.T) {
	bctx := newBrowser(t)
	root := t.TempDir()
	writeFile(t, root+"/book.toml", `[book]
title = "Redirects"

[output.html.redirect]
"/chapter_1.html#old" = "chapter_2.html#new"
"/old.html" = "chapter_1.html"
"/old.html#x" = "chapter_2.html#new"
"/plain.html" = "chapter_2.html"
`)
	writeFile(t, root+"/src/SUMMARY.md", "- [One](chapter_1.md)\n- [Two](chapter_2.md)\n")
	writeFile(t, root+"/src/chapter_1.md", "# One\n\n## Stay\n")
	writeFile(t, root+"/src/chapter_2.md", "# Two\n\n## New\n")
	opt := build.Options{Root: root, Out: filepath.Join(t.TempDir(), "site")}
	opt.Verify.CacheDir = t.TempDir()
	res, err := build.Build(context.Background(), opt)
	if err != nil {
		build.PrintError(testWriter{t}, err)
		t.Fatal("building the book failed")
	}
	srv := serveSite(t, res.Out)
	for _, c := range []struct{ from, to string }{
		{"/chapter_1.html#old", "/chapter_2.html#new"},   // a chapter's own map
		{"/old.html#x", "/chapter_2.html#new"},           // a removed page's map
		{"/old.html#stay", "/chapter_1.html#stay"},       // its default, fragment kept
		{"/old.html", "/chapter_1.html"},                 // the meta refresh
		{"/chapter_1.html#stay", "/chapter_1.html#stay"}, // no key: no move
		{"/plain.html#new", "/chapter_2.html#new"},       // a removed page without fragment keys keeps the fragment (redirect.hbs)
	} {
		tb := newTab(t, bctx)
		tb.navigate(srv.URL + c.from)
		tb.waitTrue(c.from+" -> "+c.to, `location.pathname + location.hash === `+jsString(c.to)+` && document.readyState === "complete"`, 10*time.Second)
		time.Sleep(200 * time.Millisecond) // no second move
		if got := eval[string](tb, `location.pathname + location.hash`); got != c.to {
			t.Errorf("%s: at %s, want %s", c.from, got, c.to)
		}
		tb.noConsoleErrors(c.from)
	}
}
