// Package site writes a rendered book as a static web site: one page per
// chapter (book/a/b.md becomes a/b.html), index.html (a copy of the first
// chapter, as mdBook does), a 404 page, print.html (the whole book in one
// page, links between chapters turned into links within it), sitemap.xml and
// a robots.txt naming it (when book.toml gives a site URL), the theme's
// stylesheet, scripts and search index under content-hashed names in
// assets/ (assets/book.3f2a9c1e.css, cacheable forever), the vendored search
// library under assets/vendor/<name-version>/, and the book's non-Markdown
// files (images).
//
// The site is built in a temporary sibling of the output folder and swapped
// in only when every file was written, so a failed build leaves the previous
// output as it was.
package site

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/render"
	"github.com/ownership-book/ownership/theme"
)

// Marker is the file every output folder holds. Write refuses to replace a
// non-empty folder without it, so that a mistyped -o never deletes sources.
const Marker = ".bookgen-site"

// Result tells what Write produced.
type Result struct {
	Pages int      // chapter pages written (index.html and 404.html not counted)
	Files []string // every file written, slash paths relative to the output folder, sorted
}

// Options tune Write.
type Options struct {
	// Theme is the theme to use; nil means Book.Root/theme when that folder
	// holds a page.html, else the embedded default theme.
	Theme fs.FS
	// ServedAtRoot says the site is served at the root of its address
	// (bookgen serve on http://127.0.0.1:3000/), so 404.html refers to
	// the site's files from "/" even when book.toml's site-url has a path
	// ("https://example.org/book/"), as mdbook serve does.
	ServedAtRoot bool
}

// Write writes the site of b into the folder out. pages[i] is the rendering
// of b.Chapters[i]. Links between chapters are checked first (CheckLinks).
// Nothing in out changes unless the whole site was written.
func Write(b *book.Book, pages []*render.Page, out string, opt Options) (*Result, error) {
	if len(pages) != len(b.Chapters) {
		return nil, fmt.Errorf("site.Write: %d pages for %d chapters", len(pages), len(b.Chapters))
	}
	if err := CheckBook(b); err != nil {
		return nil, err
	}
	if err := CheckLinks(b, pages); err != nil {
		return nil, err
	}
	out, err := filepath.Abs(out)
	if err != nil {
		return nil, err
	}
	if err := checkOutput(b, out); err != nil {
		return nil, err
	}
	th := opt.Theme
	if th == nil {
		th = defaultTheme(b.Root)
	}
	files, err := generate(b, pages, th, opt.ServedAtRoot)
	if err != nil {
		return nil, err
	}
	if err := replaceDir(out, files); err != nil {
		return nil, err
	}
	res := &Result{Pages: len(pages)}
	for name := range files {
		res.Files = append(res.Files, name)
	}
	slices.Sort(res.Files)
	return res, nil
}

// defaultTheme returns root/theme when it has a page.html, else the embedded
// theme.
func defaultTheme(root string) fs.FS {
	if root != "" {
		dir := filepath.Join(root, "theme")
		if _, err := os.Stat(filepath.Join(dir, "page.html")); err == nil {
			return os.DirFS(dir)
		}
	}
	return theme.FS
}

// checkOutput refuses output folders that would swallow the sources, or
// sit inside them (book/, examples/, theme/): a site inside book/ would be
// copied into the next build's site as one of the book's files, and serve
// would watch its own output.
func checkOutput(b *book.Book, out string) error {
	if b.Root == "" {
		return nil
	}
	return checkOutputRoot(b.Root, out)
}

func checkOutputRoot(rootDir, out string) error {
	root, err := filepath.Abs(rootDir)
	if err != nil {
		return err
	}
	for _, src := range []string{root, filepath.Join(root, "book"), filepath.Join(root, "examples"), filepath.Join(root, "theme"), filepath.Join(root, "internal"), filepath.Join(root, "cmd")} {
		if out == src || within(src, out) {
			return fmt.Errorf("output folder %s would replace the sources in %s", out, src)
		}
	}
	for _, src := range []string{filepath.Join(root, "book"), filepath.Join(root, "examples"), filepath.Join(root, "theme")} {
		if within(out, src) {
			return fmt.Errorf("output folder %s is inside the sources in %s; choose a folder outside book/, examples/ and theme/", out, src)
		}
	}
	return nil
}

// CheckOutput checks, before any work is done, that out can receive the
// site of the repository at root: it neither holds nor sits inside the
// sources (see Write), and a folder can be created beside it (a read-only
// parent or a file in the way is an *OutputError). Whether out holds an
// earlier build (Marker) is checked by Write, after the book's own
// problems are known. A relative out is taken relative to the working
// directory.
func CheckOutput(root, out string) error {
	out, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	if err := checkOutputRoot(root, out); err != nil {
		return err
	}
	return probeParent(out)
}

// within reports whether p is inside dir.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && !strings.HasPrefix(rel, "..")
}

// files maps a slash path inside the site to its content.
type files map[string][]byte

func (f files) add(name string, data []byte) error {
	if _, dup := f[name]; dup {
		return fmt.Errorf("two files of the site are named %s", name)
	}
	f[name] = data
	return nil
}

// assets are the site paths of the stylesheet, the script, the theme
// script run before the first paint, the search index and the search
// library.
type assets struct{ css, js, themeJS, search, searchLib string }

// generate produces every file of the site in memory.
func generate(b *book.Book, pages []*render.Page, th fs.FS, servedAtRoot bool) (files, error) {
	out := files{}
	tmplText, err := fs.ReadFile(th, "page.html")
	if err != nil {
		return nil, themeError(err)
	}
	tmpl, err := template.New("page.html").Parse(string(tmplText))
	if err != nil {
		return nil, templateError(err, "")
	}
	css, err := fs.ReadFile(th, "book.css")
	if err != nil {
		return nil, themeError(err)
	}
	js, err := fs.ReadFile(th, "book.js")
	if err != nil {
		return nil, themeError(err)
	}
	themeJS, err := fs.ReadFile(th, "theme.js")
	if err != nil {
		return nil, themeError(err)
	}
	index, err := searchIndex(b, pages)
	if err != nil {
		return nil, err
	}
	css = append(append(append(append([]byte{}, render.CSS()...), render.FigureCSS()...), '\n'), css...)
	a := assets{
		css:       "assets/" + hashedName("book", ".css", css),
		js:        "assets/" + hashedName("book", ".js", js),
		themeJS:   "assets/" + hashedName("theme", ".js", themeJS),
		search:    "assets/" + hashedName("search", ".json", index),
		searchLib: "assets/vendor/" + SearchLib + "/minisearch.js",
	}
	for name, data := range map[string][]byte{a.css: css, a.js: js, a.themeJS: themeJS, a.search: index} {
		if err := out.add(name, data); err != nil {
			return nil, err
		}
	}
	if err := copyTree(out, th, "vendor", "assets/vendor"); err != nil {
		return nil, err
	}
	if _, ok := out[a.searchLib]; !ok {
		return nil, &diag.Error{File: "theme/vendor/" + SearchLib + "/minisearch.js", Msg: "missing: " + themeFiles}
	}
	if err := copyTree(out, th, "static", ""); err != nil {
		return nil, err
	}
	if err := copyBookFiles(out, b); err != nil {
		return nil, err
	}

	for i, ch := range b.Chapters {
		html, err := page(tmpl, b, pages, i, ch.Path, a)
		if err != nil {
			return nil, err
		}
		if err := out.add(htmlPath(ch.Path), html); err != nil {
			return nil, &diag.Error{File: "book/SUMMARY.md", Line: ch.Line,
				Msg: fmt.Sprintf("chapter book/%s would be written to %s, which another file of the site has (a file of book/ or theme/static/)", ch.Path, htmlPath(ch.Path))}
		}
	}
	// index.html is the first chapter, written at the site root.
	if _, taken := out["index.html"]; !taken {
		html, err := page(tmpl, b, pages, 0, "index.md", a)
		if err != nil {
			return nil, err
		}
		if err := out.add("index.html", html); err != nil {
			return nil, err
		}
	}
	if _, taken := out["404.html"]; !taken {
		html, err := notFound(tmpl, b, a, servedAtRoot)
		if err != nil {
			return nil, err
		}
		if err := out.add("404.html", html); err != nil {
			return nil, err
		}
	}
	html, err := printPage(tmpl, b, pages, a)
	if err != nil {
		return nil, err
	}
	if err := out.add("print.html", html); err != nil {
		return nil, err
	}
	if b.Config.SiteURL != "" {
		sm, err := sitemap(b)
		if err != nil {
			return nil, err
		}
		if err := out.add("sitemap.xml", sm); err != nil {
			return nil, err
		}
		if _, taken := out["robots.txt"]; !taken {
			robots := "User-agent: *\nAllow: /\nSitemap: " + strings.TrimSuffix(b.Config.SiteURL, "/") + "/sitemap.xml\n"
			if err := out.add("robots.txt", []byte(robots)); err != nil {
				return nil, err
			}
		}
	}
	if err := out.add(Marker, []byte("This folder is written by bookgen and replaced on every build.\n")); err != nil {
		return nil, err
	}
	return out, nil
}

// hashedName returns base.<8 hex digits of SHA-256>.ext.
func hashedName(base, ext string, data []byte) string {
	sum := sha256.Sum256(data)
	return base + "." + hex.EncodeToString(sum[:4]) + ext
}

// htmlPath maps "a/b.md" to "a/b.html".
func htmlPath(p string) string { return strings.TrimSuffix(p, ".md") + ".html" }

// relRoot returns the relative path from the page at sitePath to the site
// root: "" for "x.html", "../" for "a/x.html".
func relRoot(sitePath string) string {
	return strings.Repeat("../", strings.Count(sitePath, "/"))
}

// copyTree copies every file under dir of fsys to prefix in the site.
func copyTree(out files, fsys fs.FS, dir, prefix string) error {
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == dir {
				return fs.SkipDir
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, dir), "/")
		return out.add(path.Join(prefix, rel), data)
	})
	if err != nil {
		return themeError(err)
	}
	return nil
}

// themeFiles says what a theme folder holds, for errors about a missing file.
const themeFiles = "a theme/ folder with a page.html must hold the whole theme " +
	"(page.html, book.css, book.js, theme.js, vendor/, static/); " +
	"without theme/page.html bookgen uses its built-in theme"

// themeError turns an error reading the theme into a *diag.Error naming the
// file under theme/ ("theme/theme.js: missing: ..."). A theme folder
// replaces the built-in theme as a whole: a missing file is an error, not
// silently taken from the copy compiled into bookgen, which may be older.
// templatePos matches the position html/template puts in its parse and
// execution errors: "template: page.html:50: ..." or
// "template: page.html:50:58: executing ...".
var templatePos = regexp.MustCompile(`^template: page\.html:(\d+)(?::\d+)?: (.*)$`)

// templateError turns an error of html/template about theme/page.html into
// a *diag.Error at the template's line, so that the author (and serve's
// overlay) gets "theme/page.html:50: ..." like every other problem.
// sitePath, when not empty, names the page being written.
func templateError(err error, sitePath string) error {
	msg := err.Error()
	line := 0
	if m := templatePos.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	if sitePath != "" {
		msg = "writing " + sitePath + ": " + msg
	}
	return &diag.Error{File: "theme/page.html", Line: line, Msg: msg}
}

func themeError(err error) error {
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return fmt.Errorf("theme: %w", err)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return &diag.Error{File: "theme/" + pe.Path, Msg: "missing: " + themeFiles}
	}
	return &diag.Error{File: "theme/" + pe.Path, Msg: pe.Err.Error()}
}

// copyBookFiles copies the book folder's files that are not Markdown and not
// book.toml (images, diagrams) to the same place in the site.
func copyBookFiles(out files, b *book.Book) error {
	if b.Dir == "" {
		return nil
	}
	return filepath.WalkDir(b.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if strings.HasPrefix(name, ".") && p != b.Dir {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() || strings.HasSuffix(name, ".md") || strings.HasSuffix(name, "~") {
			return nil
		}
		rel, err := filepath.Rel(b.Dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == "book.toml" {
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		data, err := io.ReadAll(f)
		if err != nil {
			return err
		}
		return out.add(rel, data)
	})
}

// numberString formats a section number: [2 1] is "2.1.".
func numberString(n []int) string {
	if len(n) == 0 {
		return ""
	}
	var b bytes.Buffer
	for _, x := range n {
		b.WriteString(strconv.Itoa(x))
		b.WriteByte('.')
	}
	return b.String()
}
