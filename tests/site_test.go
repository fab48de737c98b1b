// Package tests holds bookgen's end-to-end tests: the real book and small
// fixture books (testdata/<name>/, each its own Go module) are built through
// the same stages as `bookgen build`, and the written site is read back with
// an HTML parser.
package tests

import (
	"context"
	"encoding/json"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/build"
)

// copyFixture copies testdata/<name> into a fresh temporary folder and
// returns that folder (the fixture's repository root).
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("testdata", name)
	dst := filepath.Join(t.TempDir(), name)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// buildBook builds the book at root into out with its own cache folder.
func buildBook(t *testing.T, root, out, cache string) (*build.Result, error) {
	t.Helper()
	opt := build.Options{Root: root, Out: out}
	opt.Verify.CacheDir = cache
	return build.Build(context.Background(), opt)
}

// htmlPath is the site path of a chapter ("a/b.md" -> "a/b.html").
func htmlPath(p string) string { return strings.TrimSuffix(p, ".md") + ".html" }

// parsed is one HTML file of a site.
type parsed struct {
	doc *html.Node
	ids map[string]bool
}

func parseFile(t *testing.T, p string) *parsed {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := html.Parse(f)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	pf := &parsed{doc: doc, ids: map[string]bool{}}
	walk(doc, func(n *html.Node) {
		if id := attr(n, "id"); id != "" {
			pf.ids[id] = true
		}
	})
	return pf
}

func walk(n *html.Node, f func(*html.Node)) {
	if n.Type == html.ElementNode {
		f(n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *html.Node, class string) bool {
	return slices.Contains(strings.Fields(attr(n, "class")), class)
}

// find returns the elements below n that satisfy ok, in document order.
func find(n *html.Node, ok func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	walk(n, func(c *html.Node) {
		if ok(c) {
			out = append(out, c)
		}
	})
	return out
}

func text(n *html.Node) string {
	var b strings.Builder
	var rec func(*html.Node)
	rec = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			rec(c)
		}
	}
	rec(n)
	return b.String()
}

// resolve turns a reference found in the site file from (slash path) into a
// site path and fragment; ok is false for external references.
func resolve(from, ref, rootPath string) (target, frag string, ok bool) {
	u, err := url.Parse(ref)
	if err != nil || u.Scheme != "" || u.Host != "" {
		return "", "", false
	}
	if u.Path == "" {
		return from, u.Fragment, true
	}
	var p string
	if strings.HasPrefix(u.Path, "/") {
		p = strings.TrimPrefix(u.Path, rootPath)
	} else {
		p = path.Join(path.Dir(from), u.Path)
	}
	p = path.Clean(strings.TrimPrefix(p, "/"))
	if strings.HasSuffix(u.Path, "/") || p == "." {
		p = path.Join(p, "index.html")
	}
	return p, u.Fragment, true
}

// checkSite checks a built site against its book: a page per chapter, the
// sidebar in SUMMARY order, prev/next between neighbours, every internal
// link and #anchor resolving, code highlighted.
func checkSite(t *testing.T, b *book.Book, out string) {
	t.Helper()
	rootPath := "/"
	if u, err := url.Parse(b.Config.SiteURL); err == nil && u.Path != "" {
		rootPath = u.Path
	}
	files := map[string]*parsed{}
	var all []string
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(out, p)
		rel = filepath.ToSlash(rel)
		all = append(all, rel)
		if strings.HasSuffix(rel, ".html") {
			files[rel] = parseFile(t, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	exists := func(p string) bool { return slices.Contains(all, p) }

	// A page per chapter, and the sidebar lists them in reading order.
	var want []string
	for _, ch := range b.Chapters {
		want = append(want, htmlPath(ch.Path))
		if files[htmlPath(ch.Path)] == nil {
			t.Errorf("chapter %s (SUMMARY.md line %d) has no page %s", ch.Path, ch.Line, htmlPath(ch.Path))
		}
	}
	for _, page := range append([]string{"index.html"}, want...) {
		pf := files[page]
		if pf == nil {
			t.Errorf("no %s", page)
			continue
		}
		sidebars := find(pf.doc, func(n *html.Node) bool { return n.Data == "nav" && hasClass(n, "sidebar") })
		if len(sidebars) != 1 {
			t.Errorf("%s: %d sidebars", page, len(sidebars))
			continue
		}
		var got []string
		for _, a := range find(sidebars[0], func(n *html.Node) bool {
			return n.Data == "a" && !hasClass(n, "sidebar-title") && !hasClass(n, "sidebar-close")
		}) {
			target, _, _ := resolve(page, attr(a, "href"), rootPath)
			got = append(got, target)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: sidebar lists %v, want %v (SUMMARY order)", page, got, want)
		}
		current := find(sidebars[0], func(n *html.Node) bool { return attr(n, "aria-current") == "page" })
		if len(current) != 1 {
			t.Errorf("%s: %d sidebar entries marked current, want 1", page, len(current))
		}
	}

	// Previous and next link the neighbours in reading order.
	for i, page := range want {
		pf := files[page]
		if pf == nil {
			continue
		}
		for _, dir := range []struct {
			class string
			j     int
		}{{"pager-prev", i - 1}, {"pager-next", i + 1}} {
			links := find(pf.doc, func(n *html.Node) bool { return n.Data == "a" && hasClass(n, dir.class) })
			if dir.j < 0 || dir.j >= len(want) {
				if len(links) != 0 {
					t.Errorf("%s: unexpected %s link", page, dir.class)
				}
				continue
			}
			if len(links) != 1 {
				t.Errorf("%s: %d %s links, want 1", page, len(links), dir.class)
				continue
			}
			if target, _, _ := resolve(page, attr(links[0], "href"), rootPath); target != want[dir.j] {
				t.Errorf("%s: %s goes to %s, want %s", page, dir.class, target, want[dir.j])
			}
		}
	}

	// Every internal reference and #anchor resolves.
	checked := 0
	for page, pf := range files {
		walk(pf.doc, func(n *html.Node) {
			var ref string
			switch n.Data {
			case "a", "link":
				ref = attr(n, "href")
			case "script", "img":
				ref = attr(n, "src")
			}
			if ref == "" {
				return
			}
			target, frag, ok := resolve(page, ref, rootPath)
			if !ok {
				return
			}
			checked++
			if !exists(target) {
				t.Errorf("%s: <%s> %q: no file %s in the site", page, n.Data, ref, target)
				return
			}
			if frag != "" {
				if tf := files[target]; tf == nil || !tf.ids[frag] {
					t.Errorf("%s: <%s> %q: %s has no id %q", page, n.Data, ref, target, frag)
				}
			}
		})
	}
	if checked == 0 {
		t.Error("no internal links found")
	}

	// print.html holds every chapter, in reading order.
	if pf := files["print.html"]; pf == nil {
		t.Error("no print.html")
	} else {
		var got []string
		for _, sec := range find(pf.doc, func(n *html.Node) bool { return n.Data == "section" && hasClass(n, "print-chapter") }) {
			got = append(got, attr(sec, "id"))
		}
		var wantIDs []string
		for _, ch := range b.Chapters {
			wantIDs = append(wantIDs, strings.ReplaceAll(strings.TrimSuffix(ch.Path, ".md"), "/", "-"))
		}
		if !slices.Equal(got, wantIDs) {
			t.Errorf("print.html sections %v, want %v", got, wantIDs)
		}
	}
	// Every search index entry points at a page and an anchor that exist.
	entries := 0
	for _, f := range all {
		if !strings.HasPrefix(f, "assets/search.") || !strings.HasSuffix(f, ".json") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		var docs []struct {
			Title string `json:"t"`
			URL   string `json:"u"`
		}
		if err := json.Unmarshal(data, &docs); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, d := range docs {
			entries++
			page, frag, _ := strings.Cut(d.URL, "#")
			if tf := files[page]; tf == nil || (frag != "" && !tf.ids[frag]) {
				t.Errorf("search entry %q points at %s, which does not exist", d.Title, d.URL)
			}
		}
	}
	if entries < len(b.Chapters) {
		t.Errorf("search index has %d entries for %d chapters", entries, len(b.Chapters))
	}
	if b.Config.SiteURL != "" && !exists("sitemap.xml") {
		t.Error("no sitemap.xml although book.toml gives a site URL")
	}

	// Code is highlighted by chroma classes.
	tokens := 0
	for _, pf := range files {
		for _, pre := range find(pf.doc, func(n *html.Node) bool { return n.Data == "pre" && hasClass(n, "chroma") }) {
			tokens += len(find(pre, func(n *html.Node) bool {
				c := attr(n, "class")
				return n.Data == "span" && (c == "k" || c == "kd" || c == "kn" || c == "nf" || c == "gp" || c == "s")
			}))
		}
	}
	if tokens == 0 {
		t.Error("no highlighted code tokens in the site")
	}
	t.Logf("%d pages, %d files, %d internal references checked, %d highlighted tokens", len(want), len(all), checked, tokens)
}

// TestRealBook builds the book of this repository and checks the site.
func TestRealBook(t *testing.T) {
	root, err := build.FindRoot("..")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "site")
	// The repository's own cache (.bookgen-cache, ignored by git), as
	// `bookgen build` uses it: honest by construction, and it keeps a second
	// `go test` fast.
	res, err := buildBook(t, root, out, "")
	if err != nil {
		build.PrintError(testWriter{t}, err)
		t.Fatal("the book does not build")
	}
	t.Logf("real book: %s", res.Summary())
	checkSite(t, res.Book, out)
	checkPrograms(t, root, res, realBookPrograms)
	checkReasons(t, res, realBookTimeBound)
	if res.Report == nil || len(res.Report.Checks) == 0 {
		t.Error("the build verified nothing")
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
