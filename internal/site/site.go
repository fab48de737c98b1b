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
	"context"
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
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

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
	// Finish, when not nil, writes the files an incremental build left for
	// after its pages (print.html and the search index, which show every
	// chapter; see Incremental), so that the edited page can be reloaded
	// first. Call it before the next build; once ctx is done it stops
	// between files with ctx.Err(), leaving those it did not write as the
	// previous build had them (the next build's Finish writes them; so
	// does calling Finish again).
	Finish func(ctx context.Context) error
	// Warnings are the links between chapters to a missing #anchor or
	// page when the book's broken links are warnings (see CheckLinks).
	Warnings []*diag.Error
}

// Options tune Write.
type Options struct {
	// Theme is the theme to use; nil means Book.Root/theme when that folder
	// holds a page.html, else the embedded default theme.
	Theme fs.FS
	// Incremental, when set, carries the previous build of the same
	// output folder, so that this one writes only what changed (see
	// Incremental). bookgen serve sets it.
	Incremental *Incremental
	// ServedAtRoot says the site is served at the root of its address
	// (bookgen serve on http://127.0.0.1:3000/), so 404.html refers to
	// the site's files from "/" even when book.toml's site-url has a path
	// ("https://example.org/book/"), as mdbook serve does.
	ServedAtRoot bool
	// NotFound, when set, is the rendering of book.Book.NotFound (mdBook's
	// src/404.md): the content of 404.html, its relative links made
	// absolute from the site's path (the page is served at any address).
	NotFound *render.Page
}

// Write writes the site of b into the folder out. pages[i] is the rendering
// of b.Chapters[i]. Links between chapters are checked first (CheckLinks).
// Nothing in out changes unless the whole site was written.
func Write(b *book.Book, pages []*render.Page, out string, opt Options) (*Result, error) {
	return WriteContext(context.Background(), b, pages, out, opt)
}

// WriteContext is Write, giving up with ctx.Err() when ctx is done before
// the new site is swapped in; out is then as it was.
func WriteContext(ctx context.Context, b *book.Book, pages []*render.Page, out string, opt Options) (*Result, error) {
	if len(pages) != len(b.Chapters) {
		return nil, fmt.Errorf("site.Write: %d pages for %d chapters", len(pages), len(b.Chapters))
	}
	if err := CheckBook(b); err != nil {
		return nil, err
	}
	var ids *idCache
	if opt.Incremental != nil {
		ids = &opt.Incremental.ids
	}
	linkWarnings, err := checkLinks(b, pages, ids)
	if err != nil {
		return nil, err
	}
	out, err = filepath.Abs(out)
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
	var st siteFiles
	if opt.Incremental != nil {
		if w := opt.Incremental.begin(out); w != nil {
			st = w
		}
	}
	if st == nil {
		s, err := newStaging(ctx, out)
		if err != nil {
			return nil, err
		}
		if opt.Incremental != nil {
			s.track(opt.Incremental)
		}
		st = s
	}
	if err := generate(st, b, pages, th, opt.ServedAtRoot, opt.Incremental, opt.NotFound, &linkWarnings); err != nil {
		st.abort()
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		st.abort()
		return nil, err
	}
	if err := st.commit(); err != nil {
		return nil, err
	}
	res := &Result{Pages: len(pages), Files: st.list(), Warnings: linkWarnings}
	if w, ok := st.(*inPlace); ok && len(w.deferred) > 0 {
		res.Finish = w.finish
	}
	return res, nil
}

// siteFiles receives the files of a site: a whole new folder (staging) or
// the changes to the previous build's (inPlace, see Incremental).
type siteFiles interface {
	// add writes the file name (a slash path inside the site); two files of
	// one name are an error.
	add(name string, data []byte) error
	// has reports whether name was added.
	has(name string) bool
	// unchanged reports whether the page name, made from in, is the same
	// as in the previous build, and then counts it as added; a page for
	// which it reports false must be added.
	unchanged(name string, in pageInputs) bool
	// later adds the file name made by make: at once, or (inPlace) after
	// commit, by Result.Finish, for the pages that show every chapter.
	later(name string, make func() ([]byte, error)) error
	// stream is later for a file that write produces piece by piece: to
	// disk as it comes (staging), or into memory after commit (inPlace).
	stream(name string, write func(io.Writer) error) error
	list() []string
	abort()
	commit() error
}

// sharedInputs hashes what every chapter page is made from besides its own
// chapter: the template, the assets' names, the sidebar's way, the book's
// outline (outlineSum: every entry of the table of contents, the book's
// title and configuration).
func sharedInputs(tmplText []byte, a assets, sb *sidebars, servedAtRoot bool, outline [sha256.Size]byte) [sha256.Size]byte {
	h := sha256.New()
	fmt.Fprintf(h, "%d\x00%s\x00%+v\x00%v\x00%x\x00", len(tmplText), tmplText, a, servedAtRoot, outline)
	if sb != nil {
		fmt.Fprintf(h, "sidebar %s %s\x00", sb.script, sb.contents)
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
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
// sit inside them (the source folder book/ or src/, examples/, theme/): a
// site inside book/ would be copied into the next build's site as one of
// the book's files, and serve would watch its own output. mdBook's output
// folder book/ beside book.toml is no source.
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
	bookSrc := "book"
	if _, _, s, _, err := book.Locate(root); err == nil {
		bookSrc = s // else book.Load reports the problem
	}
	bookDir := filepath.Join(root, filepath.FromSlash(bookSrc))
	for _, src := range []string{root, bookDir, filepath.Join(root, "examples"), filepath.Join(root, "theme"), filepath.Join(root, "internal"), filepath.Join(root, "cmd")} {
		if out == src || within(src, out) {
			return fmt.Errorf("output folder %s would replace the sources in %s", out, src)
		}
	}
	for _, src := range []string{bookDir, filepath.Join(root, "examples"), filepath.Join(root, "theme")} {
		if within(out, src) {
			return fmt.Errorf("output folder %s is inside the sources in %s; choose a folder outside %s/, examples/ and theme/", out, src, bookSrc)
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

// files maps a slash path inside the site to its content (see replaceDir).
type files map[string][]byte

// assets are the site paths of the stylesheet, the script, the theme
// script run before the first paint, the search index and the search
// library.
type assets struct{ css, js, themeJS, runJS, search, searchLib string }

// generate writes every file of the site into out.
// Warnings that do not stop the build (redirects to no page of a book whose
// broken links are warnings) are appended to *warnings.
func generate(out siteFiles, b *book.Book, pages []*render.Page, th fs.FS, servedAtRoot bool, inc *Incremental, nf *render.Page, warnings *[]*diag.Error) error {
	stableNames := inc != nil
	var sbCache *sidebarCache
	var pc *printCache
	var notFoundMemo *pageMemo
	if inc != nil {
		sbCache, pc, notFoundMemo = &inc.sidebar, &inc.print, &inc.notFound
	}
	tmplText, err := fs.ReadFile(th, "page.html")
	if err != nil {
		return themeError(err)
	}
	tmpl, err := template.New("page.html").Parse(string(tmplText))
	if err != nil {
		return templateError(err, "")
	}
	css, err := fs.ReadFile(th, "book.css")
	if err != nil {
		return themeError(err)
	}
	js, err := fs.ReadFile(th, "book.js")
	if err != nil {
		return themeError(err)
	}
	themeJS, err := fs.ReadFile(th, "theme.js")
	if err != nil {
		return themeError(err)
	}
	// run.js is optional: a theme without it shows transcripts only.
	runJS, err := fs.ReadFile(th, "run.js")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return themeError(err)
	}
	var index []byte
	var indexName string // the index, already written under its name
	if st, ok := out.(*staging); ok && !stableNames {
		// The index's name is the hash of its content, learnt as it is
		// written.
		if indexName, err = st.streamHashed("assets", "search", ".json", func(w io.Writer) error { return writeSearchIndex(w, b, pages) }); err != nil {
			return err
		}
	} else if !stableNames {
		if index, err = searchIndex(b, pages); err != nil {
			return err
		}
	}
	css = append(append(append(append(append([]byte{}, render.CSS()...), render.FigureCSS()...), render.RunCSS()...), '\n'), css...)
	a := assets{
		css:       "assets/" + hashedName("book", ".css", css),
		js:        "assets/" + hashedName("book", ".js", js),
		themeJS:   "assets/" + hashedName("theme", ".js", themeJS),
		search:    "assets/" + hashedName("search", ".json", index),
		searchLib: "assets/vendor/" + SearchLib + "/minisearch.js",
	}
	if indexName != "" {
		a.search = indexName
	}
	if stableNames {
		// An incremental build (see Incremental): the index changes with
		// every edit, and a hashed name would change every page.
		a.search = "assets/search.json"
	}
	for name, data := range map[string][]byte{a.css: css, a.js: js, a.themeJS: themeJS} {
		if err := out.add(name, data); err != nil {
			return err
		}
	}
	if runJS != nil {
		a.runJS = "assets/" + hashedName("run", ".js", runJS)
		if err := out.add(a.runJS, runJS); err != nil {
			return err
		}
		if err := writeRunFiles(out, pages); err != nil {
			return err
		}
	}
	if stableNames {
		if err := out.later(a.search, func() ([]byte, error) { return searchIndex(b, pages) }); err != nil {
			return err
		}
	} else if indexName == "" {
		if err := out.add(a.search, index); err != nil {
			return err
		}
	}
	if err := copyTree(out, th, "vendor", "assets/vendor"); err != nil {
		return err
	}
	if !out.has(a.searchLib) {
		return &diag.Error{File: "theme/vendor/" + SearchLib + "/minisearch.js", Msg: "missing: " + themeFiles}
	}
	if err := copyTree(out, th, "static", ""); err != nil {
		return err
	}
	if err := copyBookFiles(out, b, generatedNames(b)); err != nil {
		return err
	}

	outline := outlineSum(b)
	var sb *sidebars
	if strings.Contains(string(tmplText), ".Sidebar") {
		sb = newSidebars(tmpl, b.Items)
		if len(sb.chaps) > InlineSidebarMax {
			if err := shareSidebar(out, sb, tmpl, tmplText, b, a, outline, sbCache); err != nil {
				return err
			}
		}
	}
	for _, ch := range b.Chapters {
		if out.has(htmlPath(ch.Path)) {
			return &diag.Error{File: b.SummaryFile, Line: ch.Line,
				Msg: fmt.Sprintf("chapter %s would be written to %s, which another file of the site has (a file of %s/ or theme/static/)", ch.File(), htmlPath(ch.Path), b.RepoPath(""))}
		}
	}
	shared := sharedInputs(tmplText, a, sb, servedAtRoot, outline)
	// The print page, the largest file by far, needs only the rendered
	// chapters: it is made beside the chapter pages rather than after
	// them (the pages' workers wait on the filesystem much of the time).
	var printErr error
	printDone := make(chan struct{})
	go func() {
		defer close(printDone)
		printErr = out.stream("print.html", func(w io.Writer) error { return writePrint(w, tmpl, b, pages, a, pc) })
	}()
	defer func() { <-printDone }() // no return leaves it running
	if err := parallel(len(b.Chapters), func(i int) error {
		name := htmlPath(b.Chapters[i].Path)
		if out.unchanged(name, pageInputs{page: pages[i], index: i, shared: shared}) {
			return nil
		}
		html, err := page(tmpl, sb, b, pages, i, b.Chapters[i].Path, a)
		if err != nil {
			return err
		}
		return out.add(name, html)
	}); err != nil {
		return err
	}
	// index.html is the first chapter, written at the site root.
	if !out.has("index.html") && !out.unchanged("index.html", pageInputs{page: pages[0], index: -1, shared: shared}) {
		html, err := page(tmpl, sb, b, pages, 0, "index.md", a)
		if err != nil {
			return err
		}
		if err := out.add("index.html", html); err != nil {
			return err
		}
	}
	if !out.has("404.html") {
		html, err := notFoundMemo.page(notFoundKey(tmplText, a, outline, servedAtRoot, nf), func() ([]byte, error) {
			return notFound(tmpl, b, a, servedAtRoot, nf)
		})
		if err != nil {
			return err
		}
		if err := out.add("404.html", html); err != nil {
			return err
		}
	}
	ws, err := writeRedirects(out, b, a)
	if err != nil {
		return err
	}
	*warnings = append(*warnings, ws...)
	<-printDone
	if printErr != nil {
		return printErr
	}
	if b.Config.SiteURL != "" {
		sm, err := sitemap(b)
		if err != nil {
			return err
		}
		if err := out.add("sitemap.xml", sm); err != nil {
			return err
		}
		if !out.has("robots.txt") {
			robots := "User-agent: *\nAllow: /\nSitemap: " + strings.TrimSuffix(b.Config.SiteURL, "/") + "/sitemap.xml\n"
			if err := out.add("robots.txt", []byte(robots)); err != nil {
				return err
			}
		}
	}
	if err := out.add(Marker, []byte("This folder is written by bookgen and replaced on every build.\n")); err != nil {
		return err
	}
	return nil
}

// hashedName returns base.<8 hex digits of SHA-256>.ext.
func hashedName(base, ext string, data []byte) string {
	return nameForSum(base, ext, sha256.Sum256(data))
}

// nameForSum is hashedName for content whose SHA-256 is sum.
func nameForSum(base, ext string, sum [sha256.Size]byte) string {
	return base + "." + hex.EncodeToString(sum[:4]) + ext
}

// htmlPath is book.HTMLPath: "a/b.md" is "a/b.html", "a/README.md" is
// "a/index.html".
func htmlPath(p string) string { return book.HTMLPath(p) }

// relRoot returns the relative path from the page at sitePath to the site
// root: "" for "x.html", "../" for "a/x.html".
func relRoot(sitePath string) string {
	return strings.Repeat("../", strings.Count(sitePath, "/"))
}

// copyTree copies every file under dir of fsys to prefix in the site.
func copyTree(out siteFiles, fsys fs.FS, dir, prefix string) error {
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

// generatedNames maps the site paths of the pages and files Write
// generates itself (besides the chapters' pages, the theme's files and
// assets/) to what each is, for the error about a book file that would
// take one of them.
func generatedNames(b *book.Book) map[string]string {
	g := map[string]string{
		"index.html": "the book's front page",
		"404.html":   "the page served for unknown addresses",
		"print.html": "the whole book on one page",
		Marker:       "the marker of a bookgen output folder",
	}
	for _, r := range b.Config.Redirects {
		g[r.From] = fmt.Sprintf("a redirect of book.toml's [output.html.redirect], line %d", r.Line)
	}
	if b.Config.SiteURL != "" {
		g["sitemap.xml"] = "the sitemap (book.toml sets site-url)"
		g["robots.txt"] = "the robots.txt naming the sitemap (book.toml sets site-url)"
	}
	return g
}

// copyBookFiles copies the book folder's files that are not Markdown and not
// book.toml (images, diagrams) to the same place in the site. Hidden files
// and folders (".name") and editors' leftovers (book.Scratch: "name~",
// "#name#", "name.swp", "4913", ...) are not copied. A file whose site path
// is one bookgen writes itself (generated, assets/, a theme file such as
// favicon.svg) is refused with a *diag.Error naming it, rather than
// silently replacing the generated file or being dropped.
//
// A symbolic link is followed when it resolves to a file inside the
// repository; one that resolves outside it (or to nothing) is refused,
// naming the link, as include and link checks refuse such paths: the site
// must not publish a file from outside the repository.
func copyBookFiles(out siteFiles, b *book.Book, generated map[string]string) error {
	if b.Dir == "" {
		return nil
	}
	c := &bookCopier{b: b, out: out, generated: generated, visiting: map[string]bool{}, chapters: map[string]bool{}}
	for _, ch := range b.Chapters {
		c.chapters[ch.Path] = true
	}
	if b.Root != "" {
		r, err := filepath.EvalSymlinks(b.Root)
		if err != nil {
			return err
		}
		c.realRoot = r
	}
	if r, err := filepath.EvalSymlinks(b.Dir); err == nil {
		c.realBook = r
	}
	if err := c.walk(b.Dir, ""); err != nil {
		return err
	}
	return c.errs.Err()
}

// bookCopier walks book/ for copyBookFiles, following symbolic links to
// folders inside the repository (each real folder once on a path, so a
// link to an ancestor is not a loop). A link to a folder that holds book/
// (the repository root) is refused: it would publish the whole
// repository.
type bookCopier struct {
	out       siteFiles
	chapters  map[string]bool // chapter files (book-relative), rendered rather than copied
	generated map[string]string
	realRoot  string
	b         *book.Book
	realBook  string          // real path of the source folder (book/)
	visiting  map[string]bool // real paths of the folders being walked
	errs      diag.List
}

// walk copies the files of the folder dir, whose site path is rel ("" for
// book/ itself).
func (c *bookCopier) walk(dir, rel string) error {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		if c.visiting[real] {
			return nil
		}
		c.visiting[real] = true
		defer delete(c.visiting, real)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, d := range entries {
		name := d.Name()
		if strings.HasPrefix(name, ".") || book.Scratch(name) {
			continue
		}
		p := filepath.Join(dir, name)
		r := path.Join(rel, name)
		file := c.b.RepoPath(r)
		isDir := d.IsDir()
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := filepath.EvalSymlinks(p)
			if err != nil {
				dest, _ := os.Readlink(p)
				c.errs = append(c.errs, &diag.Error{File: file, Msg: fmt.Sprintf("symbolic link to %s, which does not exist", dest)})
				continue
			}
			if c.realRoot != "" && !within(target, c.realRoot) && target != c.realRoot {
				c.errs = append(c.errs, &diag.Error{File: file, Msg: fmt.Sprintf("symbolic link to %s, outside the repository; only files inside it are published", target)})
				continue
			}
			fi, err := os.Stat(target)
			if err != nil {
				return err
			}
			if !fi.IsDir() && !fi.Mode().IsRegular() {
				continue
			}
			isDir = fi.IsDir()
			if isDir && (target == c.realBook || within(c.realBook, target)) {
				c.errs = append(c.errs, &diag.Error{File: file, Msg: fmt.Sprintf("symbolic link to %s, a folder that holds %s/ itself; link to the folder of the files to publish", target, c.b.RepoPath(""))})
				continue
			}
		} else if !isDir && !d.Type().IsRegular() {
			continue
		}
		if isDir {
			if err := c.walk(p, r); err != nil {
				return err
			}
			continue
		}
		if strings.HasSuffix(name, ".md") || r == "book.toml" || file == c.b.ConfigFile || c.chapters[r] {
			continue
		}
		if what, ok := c.generated[r]; ok {
			c.errs = append(c.errs, &diag.Error{File: file, Msg: fmt.Sprintf("would be written to the site as %s, which bookgen writes itself (%s); rename or remove the file", r, what)})
			continue
		}
		if c.out.has(r) || themeAsset(r) {
			c.errs = append(c.errs, &diag.Error{File: file, Msg: fmt.Sprintf("would be written to the site as %s, which is one of the theme's files or assets (theme/static/, assets/); rename or remove the file", r)})
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := c.out.add(r, data); err != nil {
			return err
		}
	}
	return nil
}

// themeAssetRE matches the site paths bookgen writes its own assets at:
// "assets/<name>.<8 hex digits>.<ext>" (hashedName), assets/search.json
// and everything under assets/vendor/.
var themeAssetRE = regexp.MustCompile(`^assets/(vendor/.*|search\.json|[a-z]+\.[0-9a-f]{8}\.[a-z]+)$`)

// themeAsset reports whether the book file at site path r would be
// written where bookgen writes (or may write, in a later build) one of its
// assets. Other files under assets/ are the book's own: mdBook books keep
// their images in src/assets/ (the Embedded Rust Book does), and mdBook's
// theme files sit elsewhere.
func themeAsset(r string) bool { return themeAssetRE.MatchString(r) }

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

// parallel calls f(0) ... f(n-1) on every core and returns the error of the
// lowest i that failed, so that a failure reads the same on every run.
// After a failure no new call starts.
func parallel(n int, f func(i int) error) error {
	errs := make([]error, n)
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if errs[i] = f(i); errs[i] != nil {
					failed.Store(true)
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// shareSidebar writes the shared sidebar script of a large book and its
// table of contents page (see InlineSidebarMax), and makes sb hand pages
// the script instead of the whole sidebar. A theme whose sidebar cannot be
// rendered once keeps it on every page. cache, when not nil, holds the
// script and page of an earlier build (see sidebarCache).
func shareSidebar(out siteFiles, sb *sidebars, tmpl *template.Template, tmplText []byte, b *book.Book, a assets, outline [sha256.Size]byte, cache *sidebarCache) error {
	taken := map[string]bool{}
	for _, ch := range b.Chapters {
		taken[htmlPath(ch.Path)] = true
	}
	contents := "toc.html"
	for i := 2; taken[contents] || out.has(contents); i++ {
		contents = fmt.Sprintf("toc-%d.html", i)
	}
	key := sidebarKey(tmplText, a, outline, contents)
	script, js, _, page, ok := cache.get(key)
	if !ok {
		var err error
		js, ok, err = sb.sharedScript()
		if err != nil || !ok {
			return err
		}
		script = "assets/" + hashedName("toc", ".js", js)
		sb.script, sb.contents = script, contents
		if page, err = sb.contentsPage(tmpl, b, a, contents); err != nil {
			return err
		}
		cache.put(key, script, js, contents, page)
	}
	sb.script, sb.contents = script, contents
	if err := out.add(script, js); err != nil {
		return err
	}
	return out.add(contents, page)
}
