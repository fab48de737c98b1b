// Package render turns an expanded chapter (expand.Doc) into an HTML fragment
// with goldmark (CommonMark plus GitHub's extensions, footnotes, definition
// lists, heading IDs and typographic quotes) and chroma (code highlighting by
// CSS classes). Besides the fragment it returns what the later stages need:
// the page title, the headings for permalinks and an in-page table of
// contents, the text of each section for search, and every link to another
// chapter so that the site stage can check its #anchor.
//
// Rendering is deterministic: the same Doc gives byte-identical output.
package render

import (
	"bytes"
	"errors"
	"fmt"
	"html"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/expand"
	"github.com/ownership-book/ownership/internal/markdown"
)

// Page is one rendered chapter.
type Page struct {
	// HTML is the chapter's body: a fragment to place inside <main>.
	HTML []byte
	// Title is the text of the chapter's first level-1 heading, or its
	// SUMMARY.md title when it has none.
	Title string
	// Headings lists every heading in document order.
	Headings []Heading
	// Sections splits the chapter's text at its headings, for search.
	Sections []Section
	// Links lists every link to a chapter of the book (including links to a
	// #fragment of the page itself), so the site can check anchors once all
	// pages are rendered.
	Links []Link
	// Summary is the plain text of the first paragraph, for the description
	// meta tag ("" when the chapter has no paragraph).
	Summary string
	// External lists every http and https link of the page, for the
	// optional external link check (bookgen build --check-external).
	External []ExternalLink
	// Warnings are problems that do not stop the build: raw HTML the
	// site's Content-Security-Policy blocks (<script>, <iframe>, <style>,
	// style= and on...= attributes, javascript: links), at its line.
	Warnings []*diag.Error
	// Files are the files the page's run panels load (see SetPrograms),
	// for the site to copy under their names.
	Files []File

	body spooled // where HTML is, when the Renderer had a Spool (see Body)
}

// ExternalLink is a link that leaves the site.
type ExternalLink struct {
	URL  string // absolute http or https URL, as written
	File string // where it is written (repository-relative)
	Line int
}

// Heading is one heading of a page.
type Heading struct {
	Level int    // 1 to 6
	ID    string // the id attribute, unique within the page
	Text  string // plain text
}

// Section is the text between one heading and the next.
type Section struct {
	Title  string // the heading's plain text (the page title for the text before the first heading)
	Anchor string // the heading's ID, "" for the text before the first heading
	Text   string // plain text of the section's blocks, whitespace collapsed
}

// Link is a link from a page to a chapter.
type Link struct {
	// Target is the chapter's path relative to the book directory
	// ("ownership.md"), the page's own path for "#fragment" links.
	Target   string
	Fragment string // without "#", "" when none
	// File and Line tell where the link is written (the origin of its
	// paragraph's first line).
	File string
	Line int
}

// Renderer renders the chapters of one book. It is safe for use by one
// goroutine at a time.
type Renderer struct {
	// Cache, when set, is consulted before rendering and filled after.
	Cache *Cache
	// Rendered and Reused count the chapters rendered and those taken
	// from Cache by this Renderer.
	Rendered, Reused int
	// Figures draws the d2 and goat blocks (see DrawFigure) and keeps
	// the drawings; nil draws every figure afresh.
	Figures *FigureCache
	// Spool, when set, receives every rendered body, and the Page's HTML
	// is left nil (see Page.Body). Not used with Cache, whose pages
	// outlive the build.
	Spool *Spool

	book     *book.Book
	md       goldmark.Markdown
	nr       *nodeRenderer     // md's writer of code blocks and headings
	chapters map[string]bool   // book-relative paths of non-draft chapters
	pages    map[string]string // site path of each chapter's page (book.HTMLPath) to its path
	probes   map[string]string // what the current render learnt from the file system
	claims   claimIndex        // see SetClaims
	programs programIndex      // see SetPrograms
	verdicts verdictIndex      // see SetVerdicts
	bookKey  [32]byte          // bookHash of book and chapters, part of every cache key
}

// New returns a Renderer for b. Links are resolved against b's chapters and
// b.Root; links to repository files outside book/ point to
// b.Config.Repository + "/blob/main/<path>" when a repository is configured.
func New(b *book.Book) *Renderer {
	r := &Renderer{book: b, chapters: map[string]bool{}, pages: map[string]string{}}
	for _, ch := range b.Chapters {
		if ch.Path != "" {
			r.chapters[ch.Path] = true
			r.pages[book.HTMLPath(ch.Path)] = ch.Path
		}
	}
	r.bookKey = bookHash(b, r.chapters)
	r.nr = &nodeRenderer{}
	r.md = markdown.NewFeatures(b.Config.Markdown,
		goldmark.WithRendererOptions(
			gmhtml.WithUnsafe(),
			renderer.WithNodeRenderers(util.Prioritized(r.nr, 100), util.Prioritized(claimRenderer{}, 100), util.Prioritized(mutantRenderer{}, 100), util.Prioritized(checksTableRenderer{}, 100)),
		),
	)
	return r
}

// Render renders d. A link to a Markdown file that is not a chapter of the
// book, or to a repository file that does not exist, is a *diag.Error naming
// the line of the link.
func (r *Renderer) Render(d *expand.Doc) (*Page, error) {
	key := r.cacheKey(d)
	if pg := r.Cache.get(key, r); pg != nil {
		r.Reused++
		return pg, nil
	}
	r.probes = map[string]string{}
	pg, err := r.render(d)
	if err != nil {
		return nil, err
	}
	r.Rendered++
	r.Cache.put(key, pg, r.probes)
	return pg, nil
}

// render renders d without the cache.
func (r *Renderer) render(d *expand.Doc) (*Page, error) {
	d, generated := r.withChecksTable(d)
	claimCount := map[string]int{}
	blockIndex := 0 // of the next fenced block, in markdown.FindBlocks's order
	src := d.Markdown
	ids := newIDTable()
	pc := parser.NewContext(parser.WithIDs(ids))
	doc := r.md.Parser().Parse(text.NewReader(src), parser.WithContext(pc))
	ids.assign(doc, src)
	lines := newLineIndex(src)
	pg := &Page{}
	var errs diag.List
	if fp := footnoteProblems(d, pc, lines); r.book.Config.WarnBrokenLinks() {
		pg.Warnings = append(pg.Warnings, fp...)
	} else {
		errs = append(errs, fp...)
	}
	pg.Warnings = append(pg.Warnings, htmlWarnings(d, doc, src, lines)...)
	chPath := d.Chapter.Path
	pm := r.newPageMutants(chPath)
	var inTable []ast.Node // the generated table of checks and its code spans
	var edits []rawEdit    // of raw HTML links (rawLinks)

	// Headings: record IDs and text.
	seen := map[string]string{} // heading id -> "file:line" of its first heading
	err := ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			id := headingID(n)
			if Reserved(id) {
				// Only an explicit {#id} can be reserved (assign skips them).
				file, line := origin(d, lines.line(blockStart(n)))
				errs = append(errs, &diag.Error{File: file, Line: line,
					Msg: fmt.Sprintf("heading id %q is used by the page template (see render.ReservedIDs); choose another", id)})
			}
			// Automatic ids avoid every other id, so only two explicit
			// {#id} can clash; a link to #id would reach only the first.
			file, line := origin(d, lines.line(blockStart(n)))
			if first, dup := seen[id]; dup {
				errs = append(errs, &diag.Error{File: file, Line: line,
					Msg: fmt.Sprintf("heading id %q is already the id of the heading at %s; choose another", id, first)})
			} else {
				seen[id] = fmt.Sprintf("%s:%d", file, line)
			}
			t := plainText(n, src)
			pg.Headings = append(pg.Headings, Heading{Level: n.Level, ID: id, Text: t})
			pm.heading(n)
			if n.Level == 1 && pg.Title == "" {
				pg.Title = t
			}
			return ast.WalkContinue, nil // its links are checked and rewritten as any
		case *ast.HTMLBlock, *ast.RawHTML:
			if raw, off, ok := htmlNodeText(n, src); ok {
				if r.book.CSP != "" {
					pg.Warnings = append(pg.Warnings, rawHTMLWarnings(d, raw, off, lines)...)
				}
				ed, es := r.rawLinks(d, n, raw, off, lines, pg)
				edits = append(edits, ed...)
				errs = append(errs, es...)
			}
		case *ast.Link:
			file, line := origin(d, lines.line(inlineStart(n, src)))
			lf, ll := origin(d, lines.line(linkStart(n)))
			pm.link(r, chPath, n, lf, ll, generated[lines.line(linkStart(n))])
			r.markClaim(chPath, n, generated[lines.line(linkStart(n))], claimCount)
			if r.book.CSP != "" && isJavaScriptURL(string(n.Destination)) {
				pg.Warnings = append(pg.Warnings, &diag.Error{File: file, Line: line,
					Msg: fmt.Sprintf("link to %q: the site's Content-Security-Policy (script-src 'self', netlify.toml) blocks javascript: URLs, so it will do nothing", string(n.Destination))})
			}
			dest, lk, e := r.rewrite(chPath, string(n.Destination))
			if e != nil {
				e.File, e.Line = file, line
				if dest == "" || !r.book.Config.WarnBrokenLinks() {
					errs = append(errs, e)
					return ast.WalkContinue, nil
				}
				// [bookgen] broken-links = "warn" (a plain mdBook
				// book's default): built as mdBook builds it.
				pg.Warnings = append(pg.Warnings, e)
			}
			n.Destination = []byte(dest)
			if isExternal(dest) && !r.book.Config.Unchecked(dest) {
				pg.External = append(pg.External, ExternalLink{URL: dest, File: file, Line: line})
			}
			if lk != nil {
				lk.File, lk.Line = file, line
				pg.Links = append(pg.Links, *lk)
			}
		case *ast.AutoLink:
			if n.AutoLinkType == ast.AutoLinkURL {
				if u := string(n.URL(src)); isExternal(u) && !r.book.Config.Unchecked(u) {
					file, line := origin(d, lines.line(inlineStart(n, src)))
					pg.External = append(pg.External, ExternalLink{URL: u, File: file, Line: line})
				}
			}
		case *ast.FencedCodeBlock:
			if e := r.markVerdict(d, n, blockIndex, src, lines); e != nil {
				errs = append(errs, e)
			}
			blockIndex++
			r.markSource(d, n, lines)
			if n.Info != nil {
				lang, _ := markdown.ParseInfo(string(n.Info.Segment.Value(src)))
				if p := r.book.Config.HideLines[lang]; p != "" {
					n.SetAttributeString(attrHidePrefix, []byte(p))
				}
			}
			r.markRun(n, src, pg)
			errs = append(errs, r.figure(d, n, src, lines)...)
		case *ast.CodeSpan, *east.Table:
			// The table of checks (claims.go): a class for its layout,
			// and names that may wrap.
			if generated[lines.line(firstSegment(n))] {
				inTable = append(inTable, n)
			}
		case *ast.Image:
			if e := r.checkImage(chPath, string(n.Destination)); e != nil {
				e.File, e.Line = origin(d, lines.line(inlineStart(n, src)))
				errs = append(errs, e)
			}
		}
		return ast.WalkContinue, nil
	})
	if err != nil {
		return nil, err
	}
	markChecksTable(inTable)
	// require-mutants is a rule about verified claims: a render without
	// SetClaims (nothing verified, no claim badges) has none to hold to it.
	if r.claims.set {
		errs = append(errs, pm.errors(r, chPath)...)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	if pg.Title == "" {
		pg.Title = d.Chapter.Title
	}
	if d.Title != "" {
		pg.Title = d.Title // mdBook's {{#title}}
	}
	pg.Sections, pg.Summary = sections(doc, src, pg.Title)

	var buf bytes.Buffer
	r.nr.footnotes = footnoteNames(doc)
	if err := r.md.Renderer().Render(&buf, applyRawEdits(src, edits), doc); err != nil {
		return nil, &diag.Error{File: d.Chapter.File(), Msg: "rendering: " + err.Error()}
	}
	pg.HTML = append(buf.Bytes(), pm.html()...)
	if r.Spool != nil && r.Cache == nil {
		off, err := r.Spool.put(pg.HTML)
		if err != nil {
			return nil, &diag.Error{File: d.Chapter.File(), Msg: err.Error()}
		}
		pg.body = spooled{spool: r.Spool, off: off, n: len(pg.HTML)}
		pg.HTML = nil
	}
	return pg, nil
}

// rewrite maps a link destination written in chapter chPath to the one the
// page gets. It returns the chapter link to check, if any. A link to a page
// that is not there (a missing file or folder page, a .md file that is not
// a chapter, a path that leaves the repository) is an error returned with
// the destination mdBook would write (".md" made ".html"), used when the
// book's broken links are warnings; any other error comes with "".
func (r *Renderer) rewrite(chPath, dest string) (string, *Link, *diag.Error) {
	if dest == "" {
		return dest, nil, nil
	}
	if strings.HasPrefix(dest, "#") {
		frag := dest[1:]
		if f, err := url.PathUnescape(frag); err == nil {
			frag = f // "#%CE%B5" names the id "ε"
		}
		return dest, &Link{Target: chPath, Fragment: frag}, nil
	}
	u, err := url.Parse(dest)
	if err != nil || u.Scheme != "" || u.Host != "" || strings.HasPrefix(dest, "/") || u.Path == "" {
		return dest, nil, nil // absolute, site-absolute or unparsable: leave alone
	}
	if r.book.Config.Unchecked(path.Join(path.Dir(chPath), u.Path)) {
		// [bookgen] unchecked-links: a sibling book's page
		// ("../std/index.html"), left as written, never sent to
		// the repository even when the path exists there.
		return dest, nil, nil
	}
	repoPath := path.Join(path.Dir(r.book.RepoPath(chPath)), u.Path)
	if repoPath == ".." || strings.HasPrefix(repoPath, "../") {
		return dest, nil, &diag.Error{Msg: fmt.Sprintf("link %q leaves the repository", dest)}
	}
	if bookPath, ok := r.book.InSrc(repoPath); ok {
		if ch, ok := r.pages[bookPath]; ok && !r.chapters[bookPath] {
			// A link to a chapter's page ("chapter_1.html#x"), as
			// mdBook authors may write: checked like one to its file.
			return dest, &Link{Target: ch, Fragment: u.Fragment}, nil
		}
		if strings.HasSuffix(bookPath, ".md") || r.chapters[bookPath] {
			// The chapter's page, where book.HTMLPath puts it:
			// "a/b.md" is "a/b.html", "a/README.md" is "a/index.html".
			out := htmlDest(u)
			if !r.chapters[bookPath] {
				return out, nil, &diag.Error{Msg: fmt.Sprintf("link %q names %s, which is not a chapter in SUMMARY.md", dest, repoPath)}
			}
			return out, &Link{Target: bookPath, Fragment: u.Fragment}, nil
		}
		if r.book.Root != "" {
			fi, err := r.stat(repoPath)
			if err != nil {
				return brokenDest(dest, err), nil, missing("link", dest, repoPath, err)
			}
			// A folder is a page only through its index: a chapter
			// index.md (written as index.html) or a copied index.html.
			if _, index := r.pages[path.Join(bookPath, "index.html")]; fi.IsDir() && !index {
				if _, err := r.stat(path.Join(repoPath, "index.html")); err != nil {
					return dest, nil, &diag.Error{Msg: fmt.Sprintf("link %q names the folder %s, which has no page on the site (no index.md chapter or index.html in it)", dest, repoPath)}
				}
			}
		}
		return dest, nil, nil // an asset copied with the book
	}
	fi, err := r.stat(repoPath)
	if err != nil {
		return brokenDest(dest, err), nil, missing("link", dest, repoPath, err)
	}
	repo := strings.TrimSuffix(r.book.Config.Repository, "/")
	if repo == "" {
		return dest, nil, nil
	}
	kind := "blob"
	if fi.IsDir() {
		kind = "tree"
	}
	out := repo + "/" + kind + "/main/" + (&url.URL{Path: repoPath}).EscapedPath()
	if u.Fragment != "" {
		out += "#" + u.EscapedFragment()
	}
	return out, nil, nil
}

// htmlDest is the destination of a link to the chapter file u names, as
// book.HTMLPath writes its page: "a/b.md#x" is "a/b.html#x", "a/README.md"
// is "a/index.html".
func htmlDest(u *url.URL) string {
	ep := u.EscapedPath()
	i := strings.LastIndexByte(ep, '/')
	base, err := url.PathUnescape(ep[i+1:])
	if err != nil {
		base = ep[i+1:]
	}
	out := ep[:i+1] + (&url.URL{Path: book.HTMLPath(base)}).EscapedPath()
	if u.RawQuery != "" {
		out += "?" + u.RawQuery
	}
	if u.Fragment != "" {
		out += "#" + u.EscapedFragment()
	}
	return out
}

// brokenDest is what rewrite returns with the error for a link whose file
// r.stat did not find: the destination as written when the file does not
// exist (a broken link, a warning when the book asks), "" when it was
// refused (hidden, not a regular file, or outside the repository: always an
// error).
func brokenDest(dest string, err error) string {
	if errors.Is(err, ErrNotPublished) || errors.Is(err, ErrOutside) || errors.Is(err, ErrNotRegular) {
		return ""
	}
	return dest
}

// isExternal reports whether dest is an absolute http or https URL.
func isExternal(dest string) bool {
	u, err := url.Parse(dest)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// markSource gives a fenced block whose lines come from one file under
// examples/ the attributes its footer is made from: data-src (the file,
// with "#L<first>-L<last>" on the repository URL when one is configured)
// and data-try (the command that runs it: "go run ./dir" for a main
// package, "go test ./dir" for a library).
func (r *Renderer) markSource(d *expand.Doc, n *ast.FencedCodeBlock, lines lineIndex) {
	if n.Lines().Len() == 0 {
		return
	}
	first := d.Origin(lines.line(n.Lines().At(0).Start))
	last := d.Origin(lines.line(n.Lines().At(n.Lines().Len() - 1).Start))
	if !strings.HasPrefix(first.File, "examples/") || last.File != first.File {
		return
	}
	n.SetAttributeString(attrSrcFile, []byte(first.File))
	if repo := strings.TrimSuffix(r.book.Config.Repository, "/"); repo != "" {
		u := repo + "/blob/main/" + (&url.URL{Path: first.File}).EscapedPath()
		if first.Line > 0 && last.Line >= first.Line {
			u += fmt.Sprintf("#L%d-L%d", first.Line, last.Line)
		}
		n.SetAttributeString(attrSrcURL, []byte(u))
	}
	if strings.HasSuffix(first.File, ".go") && !strings.HasSuffix(first.File, "_test.go") {
		dir := path.Dir(first.File)
		verb := "test"
		if r.isMain(first.File) {
			verb = "run"
		}
		n.SetAttributeString(attrTry, []byte("go "+verb+" ./"+dir))
	}
}

// isMain reports whether the Go file at the repository path p declares
// package main.
func (r *Renderer) isMain(p string) bool {
	if r.book.Root == "" {
		return false
	}
	main := false
	if data, err := os.ReadFile(filepath.Join(r.book.Root, filepath.FromSlash(p))); err == nil {
		main = packageName(data) == "main"
	}
	r.probe("main:"+p, strconv.FormatBool(main))
	return main
}

// packageName returns the name in a Go file's package clause.
func packageName(src []byte) string {
	for _, l := range strings.Split(string(src), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "package" {
			return f[1]
		}
	}
	return ""
}

// checkImage accepts an image that is a URL or a file of the source folder
// (book/; the site stage copies those); anything else would be missing from the site.
func (r *Renderer) checkImage(chPath, dest string) *diag.Error {
	u, err := url.Parse(dest)
	if dest == "" || err != nil || u.Scheme != "" || u.Host != "" || strings.HasPrefix(dest, "/") || u.Path == "" {
		return nil
	}
	if r.book.Config.Unchecked(path.Join(path.Dir(chPath), u.Path)) {
		return nil
	}
	repoPath := path.Join(path.Dir(r.book.RepoPath(chPath)), u.Path)
	if _, ok := r.book.InSrc(repoPath); !ok {
		return &diag.Error{Msg: fmt.Sprintf("image %q is outside %s/; only files under %s/ are copied to the site", dest, r.book.RepoPath(""), r.book.RepoPath(""))}
	}
	if r.book.Root != "" {
		if _, err := r.stat(repoPath); err != nil {
			return missing("image", dest, repoPath, err)
		}
	}
	return nil
}

// missing is the error for a link or image whose file r.stat did not find
// or refused.
func missing(what, dest, repoPath string, err error) *diag.Error {
	if errors.Is(err, ErrNotPublished) {
		return &diag.Error{Msg: fmt.Sprintf("%s %q names %s, a hidden file or an editor's leftover, which the site does not publish", what, dest, repoPath)}
	}
	if nr := (*notRegularError)(nil); errors.As(err, &nr) {
		return &diag.Error{Msg: fmt.Sprintf("%s %q names %s, %s, not a regular file; the site publishes only regular files", what, dest, repoPath, nr.kind)}
	}
	if errors.Is(err, ErrOutside) {
		return &diag.Error{Msg: fmt.Sprintf("%s %q names %s, a symbolic link that leads outside the repository; the site publishes only files inside it", what, dest, repoPath)}
	}
	return &diag.Error{Msg: fmt.Sprintf("%s %q names %s, which does not exist", what, dest, repoPath)}
}

// origin maps a 1-based line of the expanded Markdown to its source.
func origin(d *expand.Doc, line int) (string, int) {
	if line >= 1 && line <= len(d.Origins) {
		o := d.Origins[line-1]
		return o.File, o.Line
	}
	return d.Chapter.File(), line
}

// inlineStart returns the byte offset where inline node n (a link, an
// image, an autolink) is written: the start of its first text (for a link
// whose text starts on a later line of a paragraph than the paragraph
// itself), else the end of the text before it, else the start of its
// block. An error about a link is reported at the link's own line, not at
// its paragraph's first line.
func inlineStart(n ast.Node, src []byte) int {
	if off := firstSegment(n); off >= 0 {
		return off
	}
	if al, ok := n.(*ast.AutoLink); ok {
		// An autolink keeps its text out of the tree; find it after the
		// text that precedes it.
		url := al.URL(src)
		from := 0
		if prev := lastSegmentBefore(n, src); prev >= 0 {
			from = prev
		} else if b := blockStart(n); b >= 0 {
			from = b
		}
		if i := bytes.Index(src[from:], url); i >= 0 {
			return from + i
		}
	}
	if prev := lastSegmentBefore(n, src); prev >= 0 {
		return prev
	}
	return blockStart(n)
}

// firstSegment is the source offset of the first text under n, -1 if none.
func firstSegment(n ast.Node) int {
	if t, ok := n.(*ast.Text); ok {
		return t.Segment.Start
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if off := firstSegment(c); off >= 0 {
			return off
		}
	}
	return -1
}

// lastSegment is the source offset of the end of the last text under n,
// -1 if none.
func lastSegment(n ast.Node, src []byte) int {
	if t, ok := n.(*ast.Text); ok {
		if t.SoftLineBreak() || t.HardLineBreak() {
			// What follows starts on the next line.
			if i := bytes.IndexByte(src[t.Segment.Stop:], '\n'); i >= 0 {
				return t.Segment.Stop + i + 1
			}
		}
		return t.Segment.Stop
	}
	for c := n.LastChild(); c != nil; c = c.PreviousSibling() {
		if off := lastSegment(c, src); off >= 0 {
			return off
		}
	}
	return -1
}

// lastSegmentBefore is the end of the last text written before inline node
// n within its block, -1 if none.
func lastSegmentBefore(n ast.Node, src []byte) int {
	for p := n; p != nil && p.Type() != ast.TypeBlock; p = p.Parent() {
		for s := p.PreviousSibling(); s != nil; s = s.PreviousSibling() {
			if off := lastSegment(s, src); off >= 0 {
				return off
			}
		}
	}
	return -1
}

// blockStart returns the byte offset of the first line of the nearest block
// that contains n, -1 when unknown.
func blockStart(n ast.Node) int {
	for p := n; p != nil; p = p.Parent() {
		if p.Type() == ast.TypeBlock && p.Lines() != nil && p.Lines().Len() > 0 {
			return p.Lines().At(0).Start
		}
	}
	return -1
}

// lineIndex converts byte offsets to 1-based line numbers.
type lineIndex []int // starts of lines

func newLineIndex(src []byte) lineIndex {
	idx := lineIndex{0}
	for i, c := range src {
		if c == '\n' {
			idx = append(idx, i+1)
		}
	}
	return idx
}

func (l lineIndex) line(off int) int {
	if off < 0 {
		return 0
	}
	return sort.Search(len(l), func(i int) bool { return l[i] > off })
}

func headingID(n *ast.Heading) string { return nodeID(n) }

// nodeID returns n's id attribute, "" when it has none.
func nodeID(n ast.Node) string {
	if v, ok := n.AttributeString("id"); ok {
		switch v := v.(type) {
		case []byte:
			return string(v)
		case string:
			return v
		}
	}
	return ""
}

// plainText returns the text of n's inline content, entities decoded and
// line breaks turned into spaces.
func plainText(n ast.Node, src []byte) string { return plainTextOf(n, src, " ", false) }

// idText is the text an id is made from: plainText, except that a hard
// line break counts as nothing (mdBook takes the text nodes of the
// rendered heading or term, and <br> is none).
func idText(n ast.Node, src []byte) string { return plainTextOf(n, src, "", false) }

// altText is an image's alt text: plainText, keeping raw HTML as written
// ("<em>x</em>"), as cmark and mdBook write an image description's plain
// string content. A line break that ends the description is a space at
// the end, as pulldown-cmark keeps it ("![a\nb\n](x.png)" is alt="a b ",
// mdBook's tests/testsuite/markdown/basic_markdown images.md); only white
// space at the start is dropped.
func altText(n ast.Node, src []byte) string {
	return strings.TrimLeftFunc(plainTextUntrimmed(n, src, " ", true), unicode.IsSpace)
}

// plainTextOf is plainText with hard line breaks written as hard, and raw
// HTML kept as text when raw is set.
func plainTextOf(n ast.Node, src []byte, hard string, raw bool) string {
	return strings.TrimSpace(plainTextUntrimmed(n, src, hard, raw))
}

// plainTextUntrimmed is plainTextOf with the white space at both ends kept.
func plainTextUntrimmed(n ast.Node, src []byte, hard string, raw bool) string {
	var b strings.Builder
	hidden := 0 // inside inline <script> or <style>: not text
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		if r, ok := c.(*ast.RawHTML); ok && raw {
			b.Write(r.Segments.Value(src))
			return ast.WalkSkipChildren, nil
		}
		if r, ok := c.(*ast.RawHTML); ok {
			tag := strings.ToLower(string(r.Segments.Value(src)))
			for name := range hiddenText {
				switch {
				case strings.HasPrefix(tag, "<"+name+">"), strings.HasPrefix(tag, "<"+name+" "):
					hidden++
				case strings.HasPrefix(tag, "</"+name) && hidden > 0:
					hidden--
				}
			}
			return ast.WalkSkipChildren, nil
		}
		if hidden > 0 {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.Text:
			// What the reader sees: "\<title\>" is "<title>",
			// "&amp;" is "&".
			b.Write(book.PlainSegment(c.Segment.Value(src)))
			switch {
			case c.HardLineBreak():
				b.WriteString(hard)
			case c.SoftLineBreak():
				b.WriteByte(' ')
			}
		case *ast.String:
			// Typographer output ("&rsquo;") is HTML; decode it.
			b.WriteString(html.UnescapeString(string(c.Value)))
		case *ast.AutoLink:
			b.Write(c.Label(src))
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// blockText returns the plain text of a block: its inline text, or its lines
// for code blocks.
func blockText(n ast.Node, src []byte) string {
	var parts []string
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c.(type) {
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			if fig := figureOf(c); fig != nil {
				parts = append(parts, fig.Text)
				return ast.WalkSkipChildren, nil
			}
			var b strings.Builder
			for i := 0; i < c.Lines().Len(); i++ {
				seg := c.Lines().At(i)
				b.Write(seg.Value(src))
			}
			parts = append(parts, b.String())
			return ast.WalkSkipChildren, nil
		case *ast.HTMLBlock:
			// Its text is the page's text too; a script's or a
			// style sheet's is not.
			if t := htmlBlockText(c, src); t != "" {
				parts = append(parts, t)
			}
			return ast.WalkSkipChildren, nil
		}
		if c.Type() == ast.TypeBlock && c.FirstChild() != nil && c.FirstChild().Type() == ast.TypeInline {
			parts = append(parts, plainText(c, src))
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return strings.Join(strings.Fields(strings.Join(parts, " ")), " ")
}

// sections splits the document's top-level blocks at headings and returns
// them with the first paragraph's text.
func sections(doc ast.Node, src []byte, title string) ([]Section, string) {
	cur := Section{Title: title}
	var out []Section
	var texts []string
	summary := ""
	flush := func() {
		cur.Text = strings.Join(texts, " ")
		if cur.Anchor != "" || cur.Text != "" {
			out = append(out, cur)
		}
		texts = nil
	}
	for c := doc.FirstChild(); c != nil; c = c.NextSibling() {
		if h, ok := c.(*ast.Heading); ok {
			flush()
			cur = Section{Title: plainText(h, src), Anchor: headingID(h)}
			continue
		}
		t := blockText(c, src)
		if t != "" {
			texts = append(texts, t)
		}
		if _, ok := c.(*ast.Paragraph); ok && summary == "" {
			summary = t
		}
	}
	flush()
	return out, summary
}
