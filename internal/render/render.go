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
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

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
	// Sections splits the chapter's text at its headings, for search. A
	// Renderer with a Spool leaves each Text empty: SectionText reads it.
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

	body        spooled   // where HTML is, when the Renderer had a Spool (see Body)
	sectionText []spooled // where each section's Text is, then (see SectionText)
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
		// The sections' text waits for the search index in the spool too.
		for i := range pg.Sections {
			t := pg.Sections[i].Text
			off, err := r.Spool.put([]byte(t))
			if err != nil {
				return nil, &diag.Error{File: d.Chapter.File(), Msg: err.Error()}
			}
			pg.sectionText = append(pg.sectionText, spooled{spool: r.Spool, off: off, n: len(t)})
			pg.Sections[i].Text = ""
		}
	}
	return pg, nil
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
