// Package book loads a book: book.toml and SUMMARY.md (mdBook's format)
// and the chapter files they name, in reading order. The files are laid
// out as bookgen lays them out (book/book.toml, chapters in book/) or as
// mdBook does (book.toml at the root, chapters in src/); see Layout and
// Locate.
//
// Load is the stage's entry point; ParseSummary and ParseConfig are its two
// parsers, usable on their own (tests, fuzzing). Every error is a
// *diag.Error (or a diag.List of them) naming a repository-relative file and
// a 1-based line.
package book

import (
	"path"
	"strings"

	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/markdown"
)

// Config is book.toml, laid out as mdBook lays it out:
//
//	[book]         title, authors, description, language, src
//	[output.html]  site-url, git-repository-url, edit-url-template
//	[bookgen]      timeout (default per-command timeout of transcripts, e.g. "60s"),
//	               unchecked-links (links left unchecked, as written)
//	               strict-console (every console block is a transcript)
//	               figure-timeout (longest time one figure may take to draw)
//	               wasm-tags (build tags of the programs built for the page)
//	               broken-links ("warn" or "error": a link to a missing page or #anchor)
type Config struct {
	Title       string
	Authors     []string
	Description string
	Language    string // BCP 47 tag, "en" when unset
	SiteURL     string // absolute URL ending in "/", "" when unset
	Repository  string // e.g. "https://github.com/o/r", "" when unset
	// EditURLTemplate has "{path}" replaced by the repository-relative path of
	// a chapter file ("book/ownership.md"; in mdBook's layout the path
	// from the book's root, "src/guide/README.md", as mdBook does).
	EditURLTemplate string
	// Src is [book] src as written ("" when unset) and SrcLine its line
	// in book.toml (0 when unset): the folder of SUMMARY.md and the
	// chapters, relative to book.toml's folder (see Locate).
	Src     string
	SrcLine int
	// Timeout is the default timeout of one transcript command, in Go
	// duration syntax ("60s" when unset).
	Timeout string
	// AlsoBuild is [bookgen] also-build: folders of the repository, as
	// written (slash paths relative to the root: "manual"), each holding
	// another book (its own book.toml and SUMMARY.md, chapters read as
	// LoadDir reads them) that bookgen builds with this one, into the
	// subfolder of the output of the same name (site/manual/). AlsoBuildLine
	// is the key's line in book.toml (0 when unset). A folder that is
	// absolute, leaves the root or is named twice is an error at that line.
	AlsoBuild     []string
	AlsoBuildLine int
	// RequireMutants is [bookgen] require-mutants: chapters (book-relative
	// paths, "reference.md") or sections of them ("reference.md#invariants",
	// the section under the heading of that id, its subsections included)
	// where every paragraph, list item or table row holding a claim must
	// name a mutant that its check kills (see verify.Mutant);
	// RequireMutantsLine is the key's line in book.toml.
	RequireMutants     []string
	RequireMutantsLine int
	// StrictConsole is [bookgen] strict-console: every console block not
	// marked "ignore" is a transcript, and one bookgen cannot run (a
	// command other than go run or go test, text before the first "$"
	// line, no go.mod) is an error. Unset, such a block is shown as it is.
	StrictConsole bool
	// FigureTimeout bounds the time one figure (a d2 or goat block) may
	// take to draw, in Go duration syntax (DefaultFigureTimeout when
	// unset): past it the build fails at the block's line.
	FigureTimeout string
	// WasmTags is [bookgen] wasm-tags: build tags given to "go build" when
	// a program is built for the page (GOOS=js GOARCH=wasm), for a
	// dependency that needs one there (hashicorp/go-metrics' compat
	// package builds on js only with "hashicorpmetrics"). Empty when unset.
	WasmTags []string
	// Input404 is [output.html] input-404: the book file that is the 404
	// page's content ("404.md" when unset, as in mdBook).
	Input404 string
	// Markdown is what of mdBook's Markdown the book turns off:
	// [output.html] smart-punctuation, definition-lists and admonitions
	// = false (mdbook-core's HtmlConfig; each on when unset, as in
	// mdBook 0.5). Every stage parses the book's chapters with it.
	Markdown markdown.Features
	// SitePath is the path the site is served under, from site-url
	// ("/" when unset, "/book/" for site-url = "/book/" or
	// "https://example.org/book/"). SiteURL is "" when site-url is only a
	// path, as mdBook allows.
	SitePath string
	// Redirects is [output.html.redirect]: an old site path ("/old.html",
	// from the site root, as mdBook writes them) to the URL readers are sent
	// to (relative to the old page, site-absolute or absolute, with an
	// optional #fragment). Sorted by Redirect.From.
	Redirects []Redirect
	// SearchChapters is [output.html.search.chapter]: which chapters
	// the search index leaves out, sorted as mdBook sorts the keys.
	SearchChapters []SearchChapter
	// FragmentRedirects are the keys of [output.html.redirect] with a
	// #fragment, sorted by From and Fragment.
	FragmentRedirects []Redirect
	// HideLines is [output.html.code.hidelines]: a language ("python") to
	// the prefix that hides a line of its code blocks ("~"), mdBook's
	// format/mdbook.md "Hiding code lines". Rust's "# " needs no entry.
	HideLines map[string]string
	// UncheckedLinks is [bookgen] unchecked-links: the links bookgen
	// neither checks nor rewrites, left as written (see Unchecked), for
	// books published beside others that link to them with relative
	// paths ("../std/", "../reference/"). UncheckedLinksLine is its line.
	UncheckedLinks     []string
	UncheckedLinksLine int
	// BrokenLinks is what a link to a page or #anchor that is not there
	// is: BrokenLinksError (the build fails at the link) or
	// BrokenLinksWarn (a warning at the link, the page built with the
	// link as written, .md made .html, as mdBook, which checks no link,
	// builds it). [bookgen] broken-links sets it (BrokenLinksLine is
	// its line, 0 when unset); unset, it is BrokenLinksWarn for a plain
	// mdBook book (mdBook's layout and no [bookgen] table in book.toml,
	// or no book.toml) and BrokenLinksError for every other (see
	// Locate). BookgenTable says book.toml has a [bookgen] table.
	BrokenLinks     string
	BrokenLinksLine int
	BookgenTable    bool
	// Plain says the book is a plain mdBook book: mdBook's layout and
	// no [bookgen] table in book.toml (or no book.toml). Such a book
	// gets mdBook's tolerances where bookgen's own are stricter (a
	// README.md that is not the first chapter is the site's
	// index.html, as mdBook writes it); see Locate.
	Plain bool
	// Preprocessors are the [preprocessor.NAME] tables of book.toml that
	// name a preprocessor bookgen does not run (any but mdBook's links
	// and index), in file order; each is one warning in Warnings, and
	// the pages are built without it.
	Preprocessors []Preprocessor
	// Warnings are the problems of book.toml that do not stop the build:
	// keys bookgen does not read (an mdBook book.toml has many), at
	// ConfigFile and the key's line.
	Warnings []*diag.Error
}

// Preprocessor is an mdBook preprocessor a book's book.toml names and
// bookgen does not run: its name ("mermaid" for [preprocessor.mermaid])
// and the line of its table.
type Preprocessor struct {
	Name string
	Line int
}

// The values of Config.BrokenLinks.
const (
	BrokenLinksWarn  = "warn"
	BrokenLinksError = "error"
)

// WarnBrokenLinks reports whether a link to a missing page or #anchor is a
// warning rather than an error (Config.BrokenLinks).
func (c *Config) WarnBrokenLinks() bool { return c.BrokenLinks == BrokenLinksWarn }

// Unchecked reports whether a link is one of [bookgen] unchecked-links,
// which bookgen neither checks nor rewrites. target is the link's
// destination as a slash path from the book's source folder (the site
// root), its "#fragment" and "?query" removed: "../std/index.html" for
// "../../std/index.html" written in src/a/b.md; or an absolute URL as
// written. An entry ending in "/" matches every target under it
// ("../std/" matches "../std/x/y.html"); any other entry is a glob in
// path.Match syntax ("*" stops at "/"): "../*/index.html". This is the
// escape hatch mdBook's link checkers give (mdbook-linkcheck's
// exclude list): mdBook itself checks no link.
func (c *Config) Unchecked(target string) bool {
	for _, p := range c.UncheckedLinks {
		if strings.HasSuffix(p, "/") {
			if strings.HasPrefix(target, p) || target == strings.TrimSuffix(p, "/") {
				return true
			}
			continue
		}
		if ok, _ := path.Match(p, target); ok {
			return true
		}
	}
	return false
}

// Redirect is one entry of [output.html.redirect] (mdBook's "redirect"
// table, https://rust-lang.github.io/mdBook/format/configuration/renderers.html#outputhtmlredirect).
type Redirect struct {
	From string // site path of the old page, without the leading "/" ("old/page.html")
	// Fragment is the old #fragment of a key such as
	// "/page.html#old" (with its "#"), "" for a whole page. A page
	// that exists sends a reader who arrives at page.html#old on to To
	// from the browser; a removed page's redirect takes a reader with
	// that fragment to To, any other to the whole page's target (mdBook
	// 0.5: mdbook-html hbs_renderer.rs collect_redirects_for_path,
	// combine_fragment_redirects; templates redirect.hbs, index.hbs).
	Fragment string
	To       string // where it sends the reader, as written in book.toml
	Line     int    // line in book.toml
}

// SearchChapter is one key of [output.html.search.chapter] (mdBook 0.5,
// format/configuration/renderers.md "[output.html.search.chapter]"):
// "cli/" = { enable = false } leaves every chapter under src/cli/ out of
// search.
type SearchChapter struct {
	Path   string // the key as a clean slash path from the source folder ("cli", "cli/watch.md")
	Key    string // as written
	Enable *bool  // nil when the table does not set it
	Line   int    // line in book.toml
}

// SearchEnabled reports whether the chapter at path p (relative to the
// source folder, as written in SUMMARY.md) is in the search index: each
// key that is p or a folder above it, component by component, sets it in
// turn, the last in SearchChapters' order winning (mdBook's search.rs
// get_chapter_settings); true when none does.
func (c *Config) SearchEnabled(p string) bool {
	on := true
	for _, s := range c.SearchChapters {
		if s.Enable != nil && PathWithin(p, s.Path) {
			on = *s.Enable
		}
	}
	return on
}

// PathWithin reports whether slash path p is dir or under it, whole
// components only ("cli/a.md" is within "cli", "client.md" is not); every
// path is within ".".
func PathWithin(p, dir string) bool {
	return dir == "." || dir == "" || p == dir || strings.HasPrefix(p, dir+"/")
}

// ItemKind tells what a SUMMARY.md entry is.
type ItemKind int

const (
	KindChapter   ItemKind = iota // a link: [Title](path.md) or a draft [Title]()
	KindPartTitle                 // "# Part title" between numbered chapters
	KindSeparator                 // "---"
)

// Section tells where in SUMMARY.md a chapter stands.
type Section int

const (
	Prefix   Section = iota // before the first numbered chapter, unnumbered
	Numbered                // in the numbered list
	Suffix                  // after the numbered list, unnumbered
)

// Item is one SUMMARY.md entry.
type Item struct {
	Kind    ItemKind
	Section Section
	// Title is the entry's title as plain text (for <title>, search and
	// navigation): its Markdown emphasis and code marks dropped, as mdBook's
	// SUMMARY.md parser strips them.
	Title string
	// TitleHTML is the title's inline Markdown rendered as HTML ("<em>A</em>
	// <code>b</code>"), for the sidebar; it holds no links.
	TitleHTML string
	// Path is the chapter file relative to the book directory, slash
	// separated ("ownership.md", "stream/takeover.md"); "" for a draft.
	Path string
	// Number is the section number of a numbered chapter (1.2 is [1 2]),
	// nil otherwise.
	Number   []int
	Draft    bool
	Children []*Item // nested numbered chapters
	Line     int     // 1-based line in SUMMARY.md
	// Source is the chapter file's content (valid UTF-8), nil for a draft.
	Source []byte
	// src is Book.Src of the book that Load read the item for; "" (an
	// Item made by hand) means "book".
	src string
}

// HTMLPath returns the site path of the page of the chapter file p (a
// slash path relative to the book directory), as mdBook names pages: a file
// whose name without extension is "README" in any case ("README.md",
// "first/Readme.md", "second/README") is its folder's "index.html"
// (mdBook's index preprocessor), any other has its extension replaced by
// ".html" ("a/b.md" is "a/b.html", "notes" is "notes.html").
func HTMLPath(p string) string {
	dir, file := path.Split(p)
	stem := strings.TrimSuffix(file, path.Ext(file))
	if strings.EqualFold(stem, "readme") {
		return dir + "index.html"
	}
	return dir + stem + ".html"
}

// File returns the chapter file's path relative to the repository root
// ("book/ownership.md", "src/guide/README.md" in mdBook's layout), "" for
// a draft.
func (it *Item) File() string {
	if it.Path == "" {
		return ""
	}
	if it.src == "" {
		return "book/" + it.Path
	}
	return path.Join(it.src, it.Path)
}

// Book is a loaded book.
type Book struct {
	// Root is the absolute path of the repository root: the folder of
	// go.mod and book/ (bookgen's layout) or of book.toml (mdBook's).
	Root string
	// Repo is the absolute real path of the repository that holds the
	// book, the folder its includes may read from: the nearest folder at
	// or above Root's real path holding .git (a git work tree's top), or
	// Root's real path when there is none (see RepoOf). "" in a Book made
	// by hand means Root (see RepoRoot).
	Repo string
	// Dir is the absolute path of the source folder, the folder of
	// SUMMARY.md and the chapters (Root + "/" + Src).
	Dir string
	// Src is Dir relative to Root, a clean slash path: "book" in
	// bookgen's layout, "src" in mdBook's, "book/src" for [book] src =
	// "src" in book/book.toml, "." when the chapters are at the root.
	Src    string
	Layout Layout
	// ConfigFile and SummaryFile are the repository-relative slash paths
	// of book.toml ("book/book.toml" or "book.toml", whether or not it
	// exists) and SUMMARY.md (Src + "/SUMMARY.md"), for errors.
	ConfigFile, SummaryFile string
	Config                  Config
	// CSP is the Content-Security-Policy the site is served with: the
	// value a [[headers]] rule of the repository root's netlify.toml
	// gives it (serve.NetlifyFile, which bookgen serve sends too), ""
	// when there is none, as in a plain mdBook book. The renderer warns
	// of raw HTML that the policy blocks only when there is one.
	CSP   string
	Title string  // SUMMARY.md's "# Title", "" when absent
	Items []*Item // top-level SUMMARY.md entries in order; numbered ones nest by Children
	// Chapters is every non-draft chapter in reading order: prefix chapters,
	// numbered ones depth first, suffix chapters.
	Chapters []*Item
	// NotFound is the page shown for unknown addresses when the book has
	// one: mdBook's src/404.md (or [output.html] input-404), a file of the
	// book folder that is no chapter; nil otherwise. Its Source is read;
	// it is not in Chapters.
	NotFound *Item
	// Warnings are the problems of SUMMARY.md that do not stop the
	// build (text mdBook ignores), in line order; book.toml's are in
	// Config.Warnings.
	Warnings []*diag.Error
}
