// Package expand replaces mdBook include directives ({{#include path}},
// {{#include path:anchor}}, {{#include path:N:M}} ...) in a chapter with the
// text they name, and keeps, for every output line, the file and line it came
// from.
//
// The rules are mdBook's (https://rust-lang.github.io/mdBook/format/mdbook.html,
// "Including files" and "Including portions of a file"):
//
//	{{#include file}}          the whole file
//	{{#include file:N}}        line N only
//	{{#include file:N:M}}      lines N to M, inclusive
//	{{#include file:N:}}       line N to the end
//	{{#include file::M}}       line 1 to line M
//	{{#include file::}}        the whole file (so is "file:")
//	{{#include file:name}}     the lines between "ANCHOR: name" and
//	                           "ANCHOR_END: name"
//	\{{#include file}}         not a directive: printed as {{#include file}}
//
// An anchor marker is any line containing "ANCHOR: name" or
// "ANCHOR_END: name" (name is letters, digits, '_' and '-'), so it can sit in
// any comment style ("// ANCHOR: x", "# ANCHOR: x", "<!-- ANCHOR: x -->").
// Marker lines of every name are dropped from whatever is included, so they
// never reach a page. The included text replaces the directive; its last
// line's newline is not included (the directive's own line end follows it),
// as in mdBook. Directives are expanded everywhere in the chapter, including
// inside fenced code blocks: that is how code gets into them.
//
// As in mdBook 0.5 (mdbook-driver builtin_preprocessors/links.rs
// replace_all), the text before a directive on its line is repeated on every
// included line after the first: indentation and block quote markers
// ("   {{#include x.go}}" in a list item's code block, "> {{#include x.go}}")
// keep the included text inside the container, and "# {{#include x.rs}}" in
// a rust block hides every included line, not only the first. An empty
// included line gets the prefix without its trailing white space.
//
// mdBook's other directives work too: {{#rustdoc_include file:...}} (the
// whole file, lines outside the range or anchor prefixed with rustdoc's
// "# ", which a rust block hides), {{#playground file attrs}} (the file in
// a rust code block) and {{#title T}} (Doc.Title; nothing on the page).
// Text that only looks like a directive is left alone: "{{#include}}" with
// no file, other names ("{{#toc}}"), an escaped "\{{#include x}}" (printed
// without the backslash). An anchor opened and closed more than once names
// all its regions, joined.
//
// The typos mdBook tolerates are done as mdBook does them, with a warning
// at the directive (Doc.Warnings): an anchor never closed is included to
// the end of the file, a line range past the end is clamped, and includes
// nested MaxDepth deep (a file that includes itself) stop there, the
// deepest directive dropped.
//
// Where bookgen is stricter than mdBook, it reports an error instead of
// including less than the author meant: an anchor that is not found, an
// included file that is not UTF-8 text, a missing file, a path that leaves the
// repository (after resolving symlinks; the repository is the git work
// tree that holds the book, the nearest folder at or above its root with
// a .git, or the book's root when there is none: see book.RepoOf), a
// directive not closed with "}}"
// on its line, and {{#template}} (mdbook-template's), which bookgen does
// not implement. Included Markdown files (.md) have their own directives
// expanded, relative to their own directory, up to MaxDepth levels; other files (Go source) are included verbatim, except for
// a UTF-8 byte order mark at the start of a file, which is dropped.
package expand

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/diag"
)

// utf8BOM is the UTF-8 byte order mark, dropped from the start of included
// files.
var utf8BOM = []byte("\ufeff")

// MaxDepth is how deeply included Markdown files may include others
// (mdBook's MAX_LINK_NESTED_DEPTH).
const MaxDepth = 10

// Limits on one chapter's expansion. Included Markdown files may include
// others, so a few small files that each include the next several times
// grow exponentially (8 files of 10 include lines, 8 levels deep, would be
// 10^8 includes and gigabytes of text). No chapter of a book comes near
// these limits; a chapter that reaches one is an error naming the chain of
// includes that crossed it, and expansion stops there.
const (
	// MaxIncludes is how many include directives one chapter may expand,
	// counting those inside included Markdown files.
	MaxIncludes = 2000
	// MaxExpandedBytes is the largest expanded chapter, in bytes.
	MaxExpandedBytes = 16 << 20
)

// Origin is where one line of expanded Markdown came from.
type Origin struct {
	// File is a slash path relative to the book's root ("book/ownership.md",
	// "examples/ownership/state.go"; "../examples/x.rs" for a file of the
	// git work tree that holds the book, outside its root).
	File string
	Line int // 1-based line in File
}

// Doc is a chapter with its includes expanded.
type Doc struct {
	Chapter  *book.Item
	Markdown []byte
	// Origins[i] is the origin of line i+1 of Markdown.
	Origins []Origin
	// Sites[i] is, for line i+1 of Markdown that an include brought in,
	// the line of the chapter's directive that brought it (the outermost
	// one, for includes of includes); 0 for the chapter's own lines. An
	// error at an included file's line can so say which chapter line
	// included it (see IncludedFrom).
	Sites []int
	// Deps lists the files included, named as Origin.File names them,
	// sorted, without duplicates (the chapter file itself is not in it).
	Deps []string
	// Title is the text of the chapter's last {{#title ...}} directive
	// (mdBook's: it replaces the page's <title>), "" when it has none.
	Title string
	// Warnings are the include typos mdBook tolerates, done as mdBook
	// does them and named at the directive's line (with the chain of
	// includes in Detail): an anchor never closed (included to the end
	// of the file), a line range past the end (clamped), includes nested
	// MaxDepth deep (the directive dropped).
	Warnings []*diag.Error
}

// Origin returns the origin of 1-based line n of d.Markdown, or the chapter
// file and n when n is out of range.
func (d *Doc) Origin(n int) Origin {
	if n >= 1 && n <= len(d.Origins) {
		return d.Origins[n-1]
	}
	return Origin{File: d.Chapter.File(), Line: n}
}

// IncludedFrom returns, for a problem at file:line of a file the chapters
// include (not a chapter itself), where the chapters include that line:
// "book/ch.md:12" for each chapter line whose directive brought it in, in
// reading order, without repeats. An author with hundreds of listings can
// so find the chapter behind an error in one of them. It returns nil for a
// chapter's own line and for a line no chapter includes.
func IncludedFrom(docs []*Doc, file string, line int) []string {
	var out []string
	seen := map[string]bool{}
	for _, d := range docs {
		for i, o := range d.Origins {
			if o.File != file || o.Line != line || i >= len(d.Sites) || d.Sites[i] == 0 {
				continue
			}
			s := fmt.Sprintf("%s:%d", d.Chapter.File(), d.Sites[i])
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	return out
}

// Expand expands ch's includes. Errors are *diag.Error values naming the
// file and line of the directive (the chapter's, or an included Markdown
// file's, with the chain of includes in Detail); several problems in one
// chapter come back together as a diag.List.
func Expand(b *book.Book, ch *book.Item) (*Doc, error) {
	return ExpandContext(context.Background(), b, ch)
}

// ExpandContext is Expand, stopping with ctx.Err() once ctx is done.
func ExpandContext(ctx context.Context, b *book.Book, ch *book.Item) (*Doc, error) {
	if ch.Path == "" {
		return nil, diag.Errorf(b.SummaryFile, ch.Line, "chapter %q is a draft: nothing to expand", ch.Title)
	}
	bd, err := boundOf(b)
	if err != nil {
		return nil, err
	}
	d, _, err := expandChapter(ctx, b, ch, bd, chapterRealPath(b, ch), false)
	return d, err
}

// bound is where a book's includes may read: the repository that holds
// it (book.Book.RepoRoot), a git work tree's top above the book's root
// or the root itself.
type bound struct {
	real     string // the repository's real path
	realRoot string // the book root's real path, inside real
	up       string // realRoot relative to real, a clean slash path ("guide", ".")
}

// boundOf returns b's bound; a root that does not resolve is an error.
func boundOf(b *book.Book) (bound, error) {
	realRoot, err := filepath.EvalSymlinks(b.Root)
	if err != nil {
		return bound{}, diag.Errorf("", 0, "repository root %s: %v", b.Root, err)
	}
	bd := bound{real: realRoot, realRoot: realRoot, up: "."}
	if repo := b.RepoRoot(); repo != b.Root {
		real, err := filepath.EvalSymlinks(repo)
		if err != nil {
			return bound{}, diag.Errorf("", 0, "repository %s: %v", repo, err)
		}
		if up, err := filepath.Rel(real, realRoot); err == nil && within(up) {
			bd.real, bd.up = real, filepath.ToSlash(up)
		}
	}
	return bd, nil
}

// within reports whether the clean relative path rel (slash or
// filepath separated) stays inside the folder it is relative to.
func within(rel string) bool {
	return rel != ".." && !strings.HasPrefix(rel, "../") && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// abs returns the absolute path of rel, a slash path relative to b's
// root. One that leaves the root is joined to the root's real path, as
// the file system resolves "..", not to a symbolic link's folder.
func (bd bound) abs(b *book.Book, rel string) string {
	if within(rel) {
		return filepath.Join(b.Root, filepath.FromSlash(rel))
	}
	return filepath.Join(bd.realRoot, filepath.FromSlash(rel))
}

// leaves describes, for errors, the repository a path left.
func (bd bound) leaves() string {
	if bd.up == "." {
		return fmt.Sprintf("the repository (%s: no folder above it holds .git, so the book's folder is its repository)", bd.real)
	}
	return fmt.Sprintf("the repository (the git work tree %s)", bd.real)
}

// chapterRealPath returns the real path of ch's file (symbolic links
// resolved), or its path when that fails.
func chapterRealPath(b *book.Book, ch *book.Item) string {
	abs := filepath.Join(b.Root, filepath.FromSlash(ch.File()))
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// expandChapter expands ch, whose file's real path is real, reading
// inside bd. With record, it also returns what the expansion read (for
// Cache).
func expandChapter(ctx context.Context, b *book.Book, ch *book.Item, bd bound, real string, record bool) (*Doc, map[string]depState, error) {
	x := &expander{ctx: ctx, book: b, bound: bd, deps: map[string]bool{}}
	if record {
		x.read = map[string]depState{}
	}
	file := ch.File()
	src := splitLines(string(ch.Source), file)
	x.stack = []string{real}
	out := x.lines(src, path.Dir(file), 0, nil)
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if len(x.errs) == 1 {
		return nil, nil, x.errs[0]
	}
	if err := x.errs.Err(); err != nil {
		return nil, nil, err
	}
	d := &Doc{Chapter: ch, Title: x.title, Warnings: x.warnings}
	var md strings.Builder
	for i, l := range out {
		if i > 0 {
			md.WriteByte('\n')
		}
		md.WriteString(l.text)
		d.Origins = append(d.Origins, l.origin)
		d.Sites = append(d.Sites, l.site)
	}
	d.Markdown = []byte(md.String())
	if n := len(d.Origins); n > 0 && out[n-1].text == "" && strings.HasSuffix(string(ch.Source), "\n") {
		// The empty string after the final newline is not a line.
		d.Origins = d.Origins[:n-1]
		d.Sites = d.Sites[:n-1]
	}
	for f := range x.deps {
		d.Deps = append(d.Deps, f)
	}
	sort.Strings(d.Deps)
	if x.changed {
		return d, nil, nil
	}
	return d, x.read, nil
}

// All expands every chapter of b in reading order. It returns the Docs of
// the chapters that expanded cleanly and, when any did not, a diag.List of
// every problem found.
func All(b *book.Book) ([]*Doc, error) {
	return AllContext(context.Background(), b)
}

// AllContext is All, stopping with ctx.Err() once ctx is done.
func AllContext(ctx context.Context, b *book.Book) ([]*Doc, error) {
	var docs []*Doc
	var errs diag.List
	for _, ch := range b.Chapters {
		d, err := ExpandContext(ctx, b, ch)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			errs = append(errs, diag.All(err)...)
			continue
		}
		docs = append(docs, d)
	}
	return docs, errs.Err()
}

// line is one line of text with its origin.
type line struct {
	text   string
	origin Origin
	site   int // see Doc.Sites; set for the chapter's lines only
}

// splitLines splits src into lines numbered from 1 in file. A final "\n"
// yields a last, empty line (so that joining with "\n" gives src back).
func splitLines(src, file string) []line {
	parts := strings.Split(src, "\n")
	out := make([]line, len(parts))
	for i, p := range parts {
		out[i] = line{text: p, origin: Origin{file, i + 1}}
	}
	return out
}

type expander struct {
	ctx      context.Context
	book     *book.Book
	bound    bound
	stack    []string // real paths of the files being expanded
	deps     map[string]bool
	read     map[string]depState // with Cache: each included file as read
	changed  bool                // an included file read twice differed
	errs     diag.List
	warnings []*diag.Error
	deep     bool   // the depth limit was reached (warned once)
	title    string // the last {{#title}}, "" when none
	includes int    // include directives expanded so far
	size     int    // bytes of included text so far
	stopped  bool   // a limit was reached or ctx is done: expand no more
}

func (x *expander) fail(at Origin, chain []Origin, format string, args ...any) {
	x.errs = append(x.errs, chained(at, chain, format, args...))
}

// warn records a warning at the directive at, as fail records an error.
func (x *expander) warn(at Origin, chain []Origin, format string, args ...any) {
	x.warnings = append(x.warnings, chained(at, chain, format, args...))
}

// chained is the problem at `at`, with "included from file:line" for each
// directive of chain in Detail, innermost first.
func chained(at Origin, chain []Origin, format string, args ...any) *diag.Error {
	e := diag.Errorf(at.File, at.Line, format, args...)
	var d []string
	for i := len(chain) - 1; i >= 0; i-- {
		d = append(d, fmt.Sprintf("included from %s:%d", chain[i].File, chain[i].Line))
	}
	e.Detail = strings.Join(d, "\n")
	return e
}

// lines expands the directives in src, whose relative paths resolve
// against dir (relative to the book's root). chain holds the directive positions
// that led here.
func (x *expander) lines(src []line, dir string, depth int, chain []Origin) []line {
	var out []line
	for _, l := range src {
		if x.stopped {
			out = append(out, l)
			continue
		}
		segs, err := ScanLine(l.text)
		if err != nil {
			x.fail(l.origin, chain, "%v", err)
			out = append(out, l)
			continue
		}
		cur := line{origin: l.origin}
		var b strings.Builder
		prefixBlank := true
		for _, s := range segs {
			if s.Directive == nil {
				b.WriteString(s.Text)
				if strings.TrimSpace(s.Text) != "" {
					prefixBlank = false
				}
				continue
			}
			inc, ok := x.include(*s.Directive, l.origin, dir, depth, chain)
			if !ok {
				b.WriteString(s.Text)
				continue
			}
			// mdBook's prefix: what the output line holds before the directive.
			prefix := b.String()
			for i, il := range inc {
				if i > 0 {
					cur.text = b.String()
					out = append(out, cur)
					b.Reset()
					cur = line{origin: il.origin}
					if depth == 0 {
						cur.site = l.origin.Line
					}
					if il.text == "" {
						b.WriteString(strings.TrimRight(prefix, " \t"))
					} else {
						b.WriteString(prefix)
					}
				} else if prefixBlank {
					cur.origin = il.origin
					if depth == 0 {
						cur.site = l.origin.Line
					}
				}
				b.WriteString(il.text)
			}
			prefixBlank = false
		}
		cur.text = b.String()
		out = append(out, cur)
	}
	return out
}

// include returns the lines a directive at `at` names.
func (x *expander) include(d Directive, at Origin, dir string, depth int, chain []Origin) ([]line, bool) {
	if x.stopped {
		return nil, false
	}
	if x.ctx.Err() != nil {
		x.stopped = true
		return nil, false
	}
	if x.includes++; x.includes > MaxIncludes {
		x.stopped = true
		x.fail(at, chain, "more than %d includes in one chapter (counting those of included Markdown files); do included files include each other many times over?", MaxIncludes)
		return nil, false
	}
	if d.Unsupported != "" && len(x.book.Config.Preprocessors) > 0 {
		// The book names a preprocessor bookgen does not run (book.toml
		// warns once); its directive is left as written.
		var names []string
		for _, p := range x.book.Config.Preprocessors {
			names = append(names, p.Name)
		}
		x.warn(at, chain, "{{#%s}} is left as written: bookgen does not run the book's preprocessors (%s)", d.Unsupported, strings.Join(names, ", "))
		return nil, false
	}
	if d.Unsupported != "" {
		x.fail(at, chain, "{{#%s}} is not supported by bookgen; use {{#include path}}, {{#include path:anchor}} or {{#include path:N:M}}", d.Unsupported)
		return nil, false
	}
	if d.Kind == "title" {
		// mdBook's {{#title}}: the page's <title>, nothing on the page.
		x.title = d.Title
		return []line{{text: "", origin: at}}, true
	}
	if filepath.IsAbs(d.Path) || strings.HasPrefix(d.Path, "/") {
		x.fail(at, chain, "include path %q is absolute; write it relative to %s", d.Path, at.File)
		return nil, false
	}
	if depth >= MaxDepth {
		// mdBook's links preprocessor expands includes MaxDepth levels
		// deep and drops a directive below that, saying "Stack depth
		// exceeded in X. Check for cyclic includes" (replace_all in
		// crates/mdbook-driver/src/builtin_preprocessors/links.rs): a
		// file that includes itself shows MaxDepth+1 copies.
		if !x.deep {
			x.deep = true
			x.warn(at, chain, "includes nested more than %d deep (%s); the directive is dropped here, as mdBook drops it", MaxDepth, x.cycle(path.Join(dir, d.Path)))
		}
		return []line{}, true
	}
	rel := path.Join(dir, d.Path)
	if !within(path.Join(x.bound.up, rel)) {
		x.fail(at, chain, "include path %q leaves %s", d.Path, x.bound.leaves())
		return nil, false
	}
	abs := x.bound.abs(x.book, rel)
	fi, err := os.Stat(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			x.fail(at, chain, "included file %s does not exist", rel)
		} else {
			x.fail(at, chain, "included file %s: %v", rel, err)
		}
		return nil, false
	}
	if !fi.Mode().IsRegular() {
		x.fail(at, chain, "included file %s is not a regular file", rel)
		return nil, false
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		x.fail(at, chain, "included file %s: %v", rel, err)
		return nil, false
	}
	if r, err := filepath.Rel(x.bound.real, real); err != nil || !within(r) {
		x.fail(at, chain, "included file %s resolves to %s, outside %s", rel, real, x.bound.leaves())
		return nil, false
	}
	// The size is known before the file is read: a file larger than a
	// whole chapter may be is refused without holding it in memory (a
	// 1 GB include would otherwise be read whole before the limit below).
	if fi.Size() > MaxExpandedBytes {
		x.stopped = true
		x.fail(at, chain, "included file %s is %s, more than the %d MiB a chapter may hold with its includes", rel, sizeText(fi.Size()), MaxExpandedBytes>>20)
		return nil, false
	}
	data, err := readAtMost(abs, MaxExpandedBytes)
	if err != nil {
		x.fail(at, chain, "included file %s: %v", rel, err)
		return nil, false
	}
	seen := x.deps[rel]
	x.deps[rel] = true
	if x.read != nil {
		if old, ok := x.read[rel]; ok && (old.real != real || old.data != string(data)) {
			// The file changed while the chapter was expanded: the
			// expansion holds both versions and must not be cached.
			x.changed = true
		}
		x.read[rel] = depState{real: real, data: string(data)}
	}

	// A byte order mark is not text: Go and editors accept one at the
	// start of a file, but on a page it would sit inside the first line.
	data = bytes.TrimPrefix(data, utf8BOM)
	if !utf8.Valid(data) {
		line := invalidUTF8Line(data)
		x.fail(at, chain, "included file %s is not UTF-8 text (line %d has a byte that is not UTF-8); only text files can be included", rel, line)
		return nil, false
	}
	all := splitLines(string(data), rel)
	if len(data) == 0 {
		all = nil
	} else if strings.HasSuffix(string(data), "\n") {
		all = all[:len(all)-1]
	}
	sel, warning, err := d.selectLines(all, rel)
	if err != nil {
		x.fail(at, chain, "{{#include %s}}: %v", d.Args, err)
		return nil, false
	}
	if warning != "" {
		x.warn(at, chain, "{{#include %s}}: %s", d.Args, warning)
	}
	for _, l := range sel {
		x.size += len(l.text) + 1
	}
	if x.size > MaxExpandedBytes {
		x.stopped = true
		if seen {
			x.fail(at, chain, "the chapter's includes add up to more than %d MiB; do included files include each other many times over?", MaxExpandedBytes>>20)
		} else {
			x.fail(at, chain, "the chapter's includes add up to more than %d MiB with %s (%s)", MaxExpandedBytes>>20, rel, sizeText(fi.Size()))
		}
		return nil, false
	}
	if d.Kind == "playground" {
		// mdBook's {{#playground file attrs}}: the file in a rust block.
		info := "rust"
		if len(d.Props) > 0 {
			info += "," + strings.Join(d.Props, ",")
		}
		out := append([]line{{text: "```" + info, origin: at}}, sel...)
		return append(out, line{text: "```", origin: at}), true
	}
	if !isMarkdown(rel) {
		return sel, true
	}
	if o, ok := unclosedFence(sel); ok {
		x.fail(o, append(chain[:len(chain):len(chain)], at), "code fence opened here is not closed in %s; included, it would turn the rest of the chapter into code", rel)
		return nil, false
	}
	x.stack = append(x.stack, real)
	defer func() { x.stack = x.stack[:len(x.stack)-1] }()
	n := len(x.errs)
	out := x.lines(sel, path.Dir(rel), depth+1, append(chain[:len(chain):len(chain)], at))
	return out, len(x.errs) == n
}

// cycle describes the chain that reached the depth limit at the include
// of rel: "a cycle: book/a.md includes itself" when a file of the chain is
// included again, else "no cycle".
func (x *expander) cycle(rel string) string {
	if real, err := filepath.EvalSymlinks(x.bound.abs(x.book, rel)); err == nil {
		for _, s := range x.stack {
			if s == real {
				return fmt.Sprintf("a cycle: %s includes itself", rel)
			}
		}
	}
	return "no cycle"

}

// readAtMost reads the file at p, refusing one that holds more than max
// bytes: the limit holds even for a file that grew after it was stat'ed
// (read through an io.LimitReader, never whole).
func readAtMost(p string, max int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("more than the %d MiB a chapter may hold with its includes", max>>20)
	}
	return data, nil
}

// sizeText writes n bytes for a reader: "1.5 GiB", "20.0 MiB", "512 bytes".
func sizeText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// invalidUTF8Line returns the 1-based line of the first byte of data that
// is not UTF-8.
func invalidUTF8Line(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			return 1 + bytes.Count(data[:i], []byte("\n"))
		}
		i += size
	}
	return 0
}

func isMarkdown(p string) bool {
	ext := strings.ToLower(path.Ext(p))
	return ext == ".md" || ext == ".markdown"
}
