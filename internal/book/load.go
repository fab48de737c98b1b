package book

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/markdown"
	"github.com/pelletier/go-toml/v2"
)

// ConfigFile is the repository-relative path of the book's configuration in
// bookgen's layout (Book.ConfigFile is the loaded book's).
const ConfigFile = "book/book.toml"

// DefaultTimeout is Config.Timeout when book.toml does not set one.
const DefaultTimeout = "60s"

// DefaultFigureTimeout is Config.FigureTimeout when book.toml does not set
// one: far above what a readable diagram takes (the book's largest d2
// figure draws in under a second), far below a layout that never ends.
const DefaultFigureTimeout = "60s"

// Load reads the book at root: book.toml, SUMMARY.md and every chapter
// file they list, laid out as bookgen lays them out (root/book/book.toml,
// chapters in root/book/ or [book] src relative to it) or as mdBook does
// (root/book.toml, chapters in root/src/ or [book] src); see Locate. root
// is the repository root; it is made absolute. A [book] src that is
// absolute, leaves root or names no folder is an error at book.toml's line.
//
// A missing book.toml gives the default Config (Language "en", Timeout
// "60s"). Errors are *diag.Error values naming file and line; when several
// chapters have problems they are returned together as a diag.List. The
// problems reported: TOML syntax, unknown keys and wrongly typed values in
// book.toml (at their line), a malformed SUMMARY.md (see ParseSummary), a
// listed chapter file that does not exist or is not a regular file (at the
// SUMMARY.md line that lists it), a chapter file whose real path leaves the
// repository, and a chapter that is not valid UTF-8 (at the chapter's line
// holding the first bad byte). A UTF-8 byte order mark at the start of
// SUMMARY.md or a chapter is dropped (Item.Source never starts with one).
//
// Load never writes anything.
func Load(root string) (*Book, error) {
	return load(root, "", nil)
}

// LoadDir is Load for a book kept in the folder dir of the repository at
// root (a slash path relative to root, "manual"), laid out as bookgen lays
// out book/: dir/book.toml, dir/SUMMARY.md, chapters in dir or in [book]
// src relative to it. root stays the repository root, so the book's
// transcripts run there, as the main book's do. dir "" is Load.
func LoadDir(root, dir string) (*Book, error) {
	return load(root, dir, nil)
}

func load(root, dir string, c *Cache) (*Book, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("book.Load: %w", err)
	}
	realRoot, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, diag.Errorf("", 0, "repository root %s: %v", abs, err)
	}
	layout, confFile, src, cfg, err := LocateIn(abs, dir)
	if err != nil {
		return nil, err
	}
	b := &Book{Root: abs, Repo: RepoOf(realRoot), Dir: filepath.Join(abs, filepath.FromSlash(src)), Src: src, Layout: layout,
		ConfigFile: confFile, SummaryFile: path.Join(src, "SUMMARY.md"), Config: *cfg, CSP: readCSP(abs)}

	sumSrc, err := os.ReadFile(filepath.Join(b.Dir, "SUMMARY.md"))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if fi, err := os.Stat(b.Dir); err != nil || !fi.IsDir() {
				why := fmt.Sprintf("src = %q", b.Config.Src)
				if b.Config.Src == "" {
					why = "the default when [book] src is unset, as in mdBook"
				}
				return nil, diag.Errorf(b.ConfigFile, b.Config.SrcLine, "the book's source folder %s/ does not exist (%s)", b.Src, why)
			}
			for _, s := range []string{"src"} {
				if _, err := os.Stat(filepath.Join(b.Dir, s, "SUMMARY.md")); err == nil {
					return nil, diag.Errorf(b.SummaryFile, 0, "does not exist, but %s/%s/SUMMARY.md does: set src = %q under [book] in %s, as mdBook does", b.Src, s, s, b.ConfigFile)
				}
			}
			return nil, diag.Errorf(b.SummaryFile, 0, "does not exist: a book needs a table of contents (mdBook's SUMMARY.md format)")
		}
		return nil, diag.Errorf(b.SummaryFile, 0, "%v", err)
	}
	if line, col, ok := firstInvalidUTF8(sumSrc); !ok {
		return nil, diag.Errorf(b.SummaryFile, line, "invalid UTF-8 (byte %d of the line)", col)
	}
	b.Title, b.Items, b.Warnings, err = parseSummary(bytes.TrimPrefix(sumSrc, utf8BOM), b.Src, b.Config.Plain)
	if err != nil {
		return nil, err
	}

	var errs diag.List
	rp := &realPaths{dirs: map[string]string{}}
	var walk func(items []*Item)
	walk = func(items []*Item) {
		for _, it := range items {
			it.src = b.Src
			if it.Kind == KindChapter && !it.Draft {
				if err := readChapter(b, realRoot, rp, c, it); err != nil {
					errs = append(errs, err)
				} else {
					b.Chapters = append(b.Chapters, it)
				}
			}
			walk(it.Children)
		}
	}
	walk(b.Items)
	if err := readNotFound(b, realRoot); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 { // a chapter that failed to load is not missing
		errs = requiredChapters(b)
	}
	switch len(errs) {
	case 0:
		return b, nil
	case 1:
		return nil, errs[0]
	}
	return nil, errs
}

// requiredChapters returns an error at book.toml's require-mutants line
// for each chapter it names that SUMMARY.md does not list (or lists as a
// draft): a requirement on a page the book never builds would check
// nothing.
func requiredChapters(b *Book) diag.List {
	var errs diag.List
	for _, r := range b.Config.RequireMutants {
		p, _, _ := strings.Cut(r, "#")
		found := false
		for _, ch := range b.Chapters {
			if ch.Path == p {
				found = true
				break
			}
		}
		if !found {
			errs = append(errs, diag.Errorf(b.ConfigFile, b.Config.RequireMutantsLine, "require-mutants names %s, which is not a chapter of %s", r, b.SummaryFile))
		}
	}
	return errs
}

// readNotFound sets b.NotFound from the book's 404 file (Config.Input404)
// when it exists and is no chapter (a chapter named 404.md is refused by
// the site stage instead).
func readNotFound(b *Book, realRoot string) *diag.Error {
	name := b.Config.Input404
	if name == "" {
		name = "404.md"
	}
	name = path.Clean(strings.TrimPrefix(name, "./"))
	if name == ".." || strings.HasPrefix(name, "../") || path.IsAbs(name) {
		return diag.Errorf(b.ConfigFile, 0, "input-404 %q is not a file of the book folder %s/", b.Config.Input404, b.Src)
	}
	for _, ch := range b.Chapters {
		if ch.Path == name {
			return nil
		}
	}
	if fi, err := os.Stat(filepath.Join(b.Dir, filepath.FromSlash(name))); err != nil || !fi.Mode().IsRegular() {
		if b.Config.Input404 != "" && b.Config.Input404 != "404.md" {
			return diag.Errorf(b.ConfigFile, 0, "input-404 names %s, which is not a file", b.RepoPath(name))
		}
		return nil
	}
	it := &Item{Kind: KindChapter, Title: "Page not found", TitleHTML: "Page not found", Path: name, Line: 0, src: b.Src}
	if err := readChapter(b, realRoot, &realPaths{dirs: map[string]string{}}, nil, it); err != nil {
		return err
	}
	b.NotFound = it
	return nil
}

// readChapter fills it.Source from the chapter file.
func readChapter(b *Book, realRoot string, rp *realPaths, c *Cache, it *Item) *diag.Error {
	file := filepath.Join(b.Dir, filepath.FromSlash(it.Path))
	fi, err := os.Lstat(file)
	link := err == nil && fi.Mode()&fs.ModeSymlink != 0
	if link {
		fi, err = os.Stat(file)
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return diag.Errorf(b.SummaryFile, it.Line, "chapter file %s does not exist", it.File())
		}
		return diag.Errorf(b.SummaryFile, it.Line, "chapter file %s: %v", it.File(), err)
	}
	if !fi.Mode().IsRegular() {
		return diag.Errorf(b.SummaryFile, it.Line, "chapter file %s is not a regular file", it.File())
	}
	real, err := rp.of(file, link)
	if err != nil {
		return diag.Errorf(b.SummaryFile, it.Line, "chapter file %s: %v", it.File(), err)
	}
	if !within(realRoot, real) {
		return diag.Errorf(b.SummaryFile, it.Line, "chapter file %s resolves to %s, outside the repository", it.File(), real)
	}
	if src, ok := c.get(file, fi); ok {
		it.Source = src
		return nil
	}
	read := time.Now()
	src, err := os.ReadFile(file)
	if err != nil {
		return diag.Errorf(it.File(), 0, "%v", err)
	}
	if line, col, ok := firstInvalidUTF8(src); !ok {
		return diag.Errorf(it.File(), line, "invalid UTF-8 (byte %d of the line): chapters must be UTF-8 text", col)
	}
	// A byte order mark would make the first line "\ufeff# Title",
	// which Markdown reads as a paragraph, not a heading.
	it.Source = bytes.TrimPrefix(src, utf8BOM)
	c.put(file, fi, it.Source, read)
	return nil
}

// realPaths resolves the real paths of the chapter files of one Load
// (filepath.EvalSymlinks), resolving each folder once: a file that is not
// a symbolic link is its folder's real path joined with its name, so a
// 1,000-chapter book costs one lstat per chapter rather than one per
// component of every chapter's path.
type realPaths struct {
	dirs map[string]string // folder -> its real path
}

// of returns the real path of file; link tells whether file itself is a
// symbolic link (os.Lstat).
func (rp *realPaths) of(file string, link bool) (string, error) {
	if link {
		return filepath.EvalSymlinks(file)
	}
	dir := filepath.Dir(file)
	real, ok := rp.dirs[dir]
	if !ok {
		var err error
		if real, err = filepath.EvalSymlinks(dir); err != nil {
			return "", err
		}
		rp.dirs[dir] = real
	}
	return filepath.Join(real, filepath.Base(file)), nil
}

// utf8BOM is the UTF-8 byte order mark some editors put at the start of a
// file; Load drops it from SUMMARY.md and chapter files.
var utf8BOM = []byte("\ufeff")

// within reports whether the cleaned absolute path p is dir or inside it.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// firstInvalidUTF8 returns the 1-based line and byte column of the first
// byte of src that is not valid UTF-8 and false, or 0, 0, true when src is
// valid UTF-8.
func firstInvalidUTF8(src []byte) (line, col int, ok bool) {
	if utf8.Valid(src) {
		return 0, 0, true
	}
	for i := 0; i < len(src); {
		r, size := utf8.DecodeRune(src[i:])
		if r == utf8.RuneError && size == 1 {
			start := bytes.LastIndexByte(src[:i], '\n') + 1
			return 1 + bytes.Count(src[:i], []byte("\n")), i - start + 1, false
		}
		i += size
	}
	return 0, 0, true
}

// tomlFile is book.toml's layout, the subset of mdBook's that bookgen reads.
type tomlFile struct {
	Book struct {
		Title       string   `toml:"title"`
		Authors     []string `toml:"authors"`
		Description string   `toml:"description"`
		Language    string   `toml:"language"`
		Src         string   `toml:"src"`
	} `toml:"book"`
	Output struct {
		HTML struct {
			SiteURL         string            `toml:"site-url"`
			GitRepository   string            `toml:"git-repository-url"`
			EditURLTemplate string            `toml:"edit-url-template"`
			Redirect        map[string]string `toml:"redirect"`
			Input404        string            `toml:"input-404"`
			// mdBook's Markdown switches (mdbook-core's HtmlConfig):
			// pointers, so that unset means mdBook's default, on.
			SmartPunctuation *bool `toml:"smart-punctuation"`
			DefinitionLists  *bool `toml:"definition-lists"`
			Admonitions      *bool `toml:"admonitions"`
			Code             struct {
				HideLines map[string]string `toml:"hidelines"`
			} `toml:"code"`
			Search struct {
				Chapter map[string]struct {
					Enable *bool `toml:"enable"`
				} `toml:"chapter"`
			} `toml:"search"`
		} `toml:"html"`
	} `toml:"output"`
	Bookgen struct {
		Timeout        string   `toml:"timeout"`
		UncheckedLinks []string `toml:"unchecked-links"`
		StrictConsole  bool     `toml:"strict-console"`
		FigureTimeout  string   `toml:"figure-timeout"`
		WasmTags       []string `toml:"wasm-tags"`
		RequireMutants []string `toml:"require-mutants"`
		BrokenLinks    string   `toml:"broken-links"`
		AlsoBuild      []string `toml:"also-build"`
	} `toml:"bookgen"`
}

// supportedPreprocessors are the preprocessors mdBook ships that bookgen
// does the work of: links ({{#include}} and the other directives, see
// internal/expand) and index (README.md is its folder's index.html).
var supportedPreprocessors = map[string]bool{"links": true, "index": true}

// tableLine is the 1-based line of the table header [name] (or
// [ name ], ["name"] not handled) in src, 0 when none.
func tableLine(src []byte, name string) int {
	for i, l := range strings.Split(string(src), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "[") && strings.TrimSpace(strings.Trim(strings.SplitN(l, "]", 2)[0], "[")) == name {
			return i + 1
		}
	}
	return 0
}

// knownKeys is what the warning for an unknown key lists.
const knownKeys = "[book] title, authors, description, language, src; [output.html] site-url, git-repository-url, edit-url-template, redirect, code.hidelines, search.chapter, input-404, smart-punctuation, definition-lists, admonitions; [bookgen] timeout, strict-console, figure-timeout, wasm-tags, require-mutants, unchecked-links, broken-links, also-build"

// buildTagRE is what a Go build tag may hold (go help buildconstraint).
var buildTagRE = regexp.MustCompile(`^[A-Za-z0-9_.]+$`)

var typeErrRE = regexp.MustCompile(`cannot decode TOML (\w+) into .* of type (\S+)$`)

// ParseConfig parses the text of book/book.toml (mdBook's layout; see
// Config). TOML syntax, a wrongly typed value of a key bookgen reads, a
// timeout that is not a positive Go duration, a site-url that is neither an
// absolute http(s) URL nor a path starting with "/", a git-repository-url
// that is not an absolute http(s) URL and a redirect whose old page is not
// a site path are errors at ConfigFile and the line of the key. A key
// bookgen does not read (mdBook's [output.html] playground, fold,
// additional-css, [preprocessor.*] ...) is a warning in Config.Warnings
// naming the key, so that an mdBook book.toml works unchanged. [book] src
// is returned as written in Config.Src (Locate resolves and checks it).
//
// SiteURL gets a trailing "/" when it lacks one; SitePath is its path
// ("/" when unset). Language defaults to "en" and Timeout to
// DefaultTimeout.
func ParseConfig(src []byte) (*Config, error) {
	return parseConfig(src, ConfigFile, nil)
}

// parseConfig is ParseConfig for the book.toml at the repository-relative
// path file, with the MDBOOK_ environment variables of env (see
// envOverrides) set over it, as mdBook sets them.
func parseConfig(src []byte, file string, env []envOverride) (*Config, error) {
	var f tomlFile
	var warnings []*diag.Error
	var pre []Preprocessor
	err := toml.NewDecoder(bytes.NewReader(src)).DisallowUnknownFields().Decode(&f)
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) {
		// mdBook's book.toml has many keys bookgen has no use for:
		// name each, then read the ones bookgen knows.
		seen := map[string]bool{}
		for i := range strict.Errors {
			e := &strict.Errors[i]
			row, _ := e.Position()
			if k := e.Key(); len(k) >= 2 && k[0] == "preprocessor" {
				// A preprocessor bookgen does not run: one line
				// for it, whatever keys its table holds.
				name := k[1]
				if seen[name] {
					continue
				}
				seen[name] = true
				if supportedPreprocessors[name] {
					continue
				}
				if l := tableLine(src, "preprocessor."+name); l > 0 {
					row = l
				}
				pre = append(pre, Preprocessor{Name: name, Line: row})
				continue
			}
			w := diag.Errorf(file, row, "key %s is not used by bookgen", strings.Join(e.Key(), "."))
			if len(warnings) == 0 {
				w.Detail = "bookgen reads " + knownKeys
			}
			warnings = append(warnings, w)
		}
		f = tomlFile{}
		err = toml.NewDecoder(bytes.NewReader(src)).Decode(&f)
	}
	var dec *toml.DecodeError
	switch {
	case errors.As(err, &dec):
		row, _ := dec.Position()
		msg := strings.TrimPrefix(dec.Error(), "toml: ")
		if m := typeErrRE.FindStringSubmatch(msg); m != nil {
			msg = fmt.Sprintf("%s is a TOML %s, want %s", strings.Join(dec.Key(), "."), m[1], m[2])
		}
		return nil, diag.Errorf(file, row, "%s", msg)
	case err != nil:
		return nil, diag.Errorf(file, 0, "%v", err)
	}
	envWarnings, envErrs := applyEnv(&f, env)
	if len(envErrs) > 0 {
		return nil, envErrs
	}
	warnings = append(warnings, envWarnings...)

	c := &Config{
		Title:           f.Book.Title,
		Authors:         f.Book.Authors,
		Description:     f.Book.Description,
		Language:        f.Book.Language,
		SiteURL:         f.Output.HTML.SiteURL,
		Repository:      f.Output.HTML.GitRepository,
		EditURLTemplate: f.Output.HTML.EditURLTemplate,
		Timeout:         f.Bookgen.Timeout,
		StrictConsole:   f.Bookgen.StrictConsole,
		FigureTimeout:   f.Bookgen.FigureTimeout,
		WasmTags:        f.Bookgen.WasmTags,
		SitePath:        "/",
		HideLines:       f.Output.HTML.Code.HideLines,
		Input404:        f.Output.HTML.Input404,
		Warnings:        warnings,
		Preprocessors:   pre,
	}
	off := func(b *bool) bool { return b != nil && !*b }
	c.Markdown = markdown.Features{
		NoSmartPunctuation: off(f.Output.HTML.SmartPunctuation),
		NoDefinitionLists:  off(f.Output.HTML.DefinitionLists),
		NoAdmonitions:      off(f.Output.HTML.Admonitions),
	}
	for _, p := range pre {
		c.Warnings = append(c.Warnings, diag.Errorf(file, p.Line, "preprocessor %s is not run by bookgen: the pages are built without it, its directives left as written", p.Name))
	}
	if len(f.Bookgen.RequireMutants) > 0 {
		c.RequireMutants, c.RequireMutantsLine = f.Bookgen.RequireMutants, keyLine(src, "require-mutants")
		for _, r := range c.RequireMutants {
			if p, _, _ := strings.Cut(r, "#"); !strings.HasSuffix(p, ".md") || strings.HasPrefix(p, "/") {
				return nil, diag.Errorf(file, c.RequireMutantsLine, "require-mutants %q is not a chapter's path in the book (\"reference.md\", or \"reference.md#invariants\" for one section)", r)
			}
		}
	}
	if f.Book.Src != "" {
		c.Src, c.SrcLine = f.Book.Src, keyLine(src, "src")
	}
	if len(f.Bookgen.AlsoBuild) > 0 {
		c.AlsoBuildLine = keyLine(src, "also-build")
		seen := map[string]bool{}
		for _, d := range f.Bookgen.AlsoBuild {
			clean := path.Clean(d)
			if d == "" || path.IsAbs(d) || strings.Contains(d, "\\") || clean == "." || clean == ".." || strings.HasPrefix(clean, "../") {
				return nil, diag.Errorf(file, c.AlsoBuildLine, "also-build %q: give a folder of the repository, relative to its root, such as \"manual\"", d)
			}
			if seen[clean] {
				return nil, diag.Errorf(file, c.AlsoBuildLine, "also-build names %q twice", d)
			}
			seen[clean] = true
			c.AlsoBuild = append(c.AlsoBuild, clean)
		}
	}
	if c.Language == "" {
		c.Language = "en"
	}
	if c.Input404 == "" {
		c.Input404 = "404.md"
	}
	if c.Timeout == "" {
		c.Timeout = DefaultTimeout
	} else if d, err := time.ParseDuration(c.Timeout); err != nil || d <= 0 {
		return nil, diag.Errorf(file, keyLine(src, "timeout"), "timeout %q is not a positive Go duration such as \"60s\" or \"2m\"", c.Timeout)
	}
	if len(f.Bookgen.UncheckedLinks) > 0 {
		line := keyLine(src, "unchecked-links")
		for _, pat := range f.Bookgen.UncheckedLinks {
			if _, err := path.Match(strings.TrimSuffix(pat, "/"), ""); err != nil || strings.TrimSpace(pat) == "" {
				return nil, diag.Errorf(file, line, "unchecked-links entry %q is not a path prefix ending in / or a glob (path.Match syntax)", pat)
			}
		}
		c.UncheckedLinks, c.UncheckedLinksLine = f.Bookgen.UncheckedLinks, line
	}
	var tables map[string]any
	if toml.Unmarshal(src, &tables) == nil {
		_, c.BookgenTable = tables["bookgen"]
	}
	switch f.Bookgen.BrokenLinks {
	case "":
		c.BrokenLinks = BrokenLinksError
	case BrokenLinksWarn, BrokenLinksError:
		c.BrokenLinks, c.BrokenLinksLine = f.Bookgen.BrokenLinks, keyLine(src, "broken-links")
	default:
		return nil, diag.Errorf(file, keyLine(src, "broken-links"), "broken-links %q is neither \"warn\" nor \"error\"", f.Bookgen.BrokenLinks)
	}
	if c.FigureTimeout == "" {
		c.FigureTimeout = DefaultFigureTimeout
	} else if d, err := time.ParseDuration(c.FigureTimeout); err != nil || d <= 0 {
		return nil, diag.Errorf(file, keyLine(src, "figure-timeout"), "figure-timeout %q is not a positive Go duration such as \"60s\" or \"2m\"", c.FigureTimeout)
	}
	for _, tag := range c.WasmTags {
		if !buildTagRE.MatchString(tag) {
			return nil, diag.Errorf(file, keyLine(src, "wasm-tags"), "wasm-tags: %q is not a Go build tag (letters, digits, _ and .)", tag)
		}
	}
	if c.Repository != "" {
		p, err := url.Parse(c.Repository)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return nil, diag.Errorf(file, keyLine(src, "git-repository-url"), "git-repository-url %q is not an absolute http(s) URL", c.Repository)
		}
	}
	if c.SiteURL != "" {
		// mdBook's site-url is often only a path ("/book/"): it says
		// where the site is served. sitemap.xml and canonical links
		// need a full URL, so they are written only with one.
		p, err := url.Parse(c.SiteURL)
		switch {
		case err == nil && (p.Scheme == "http" || p.Scheme == "https") && p.Host != "":
			c.SitePath = p.Path
		case err == nil && p.Scheme == "" && p.Host == "" && strings.HasPrefix(c.SiteURL, "/") && !strings.HasPrefix(c.SiteURL, "//"):
			c.SitePath = p.Path
			c.SiteURL = ""
		default:
			return nil, diag.Errorf(file, keyLine(src, "site-url"), "site-url %q is neither an absolute http(s) URL nor a path starting with /", c.SiteURL)
		}
		if !strings.HasPrefix(c.SitePath, "/") {
			c.SitePath = "/" + c.SitePath
		}
		if !strings.HasSuffix(c.SitePath, "/") {
			c.SitePath += "/"
		}
	}
	if c.SiteURL != "" && !strings.HasSuffix(c.SiteURL, "/") {
		c.SiteURL += "/"
	}
	if c.EditURLTemplate != "" && !strings.Contains(c.EditURLTemplate, "{path}") {
		return nil, diag.Errorf(file, keyLine(src, "edit-url-template"), "edit-url-template %q has no {path}", c.EditURLTemplate)
	}
	for key, set := range f.Output.HTML.Search.Chapter {
		p := strings.Trim(path.Clean("/"+key), "/")
		c.SearchChapters = append(c.SearchChapters, SearchChapter{Path: p, Key: key, Enable: set.Enable, Line: quotedKeyLine(src, key)})
	}
	// mdBook sorts the keys as paths, component by component, and the
	// later of two that match a chapter wins (search.rs
	// sort_search_config, get_chapter_settings).
	sort.Slice(c.SearchChapters, func(i, j int) bool {
		return slices.Compare(strings.Split(c.SearchChapters[i].Path, "/"), strings.Split(c.SearchChapters[j].Path, "/")) < 0
	})
	var errs diag.List
	for from, to := range f.Output.HTML.Redirect {
		line := quotedKeyLine(src, from)
		page, frag := from, ""
		if i := strings.IndexByte(from, '#'); i >= 0 {
			// At the first "#", where the browser's location.hash
			// starts (mdBook matches a chapter's keys by the prefix
			// "/page.html#", collect_redirects_for_path).
			page, frag = from[:i], from[i:]
			if frag == "#" {
				errs = append(errs, diag.Errorf(file, line, "redirect %q: the #fragment after the page is empty", from))
				continue
			}
		}
		p, ok := redirectPath(page)
		if !ok {
			errs = append(errs, diag.Errorf(file, line, "redirect %q: the old page must be a file path inside the site, such as \"/old/page.html\" or \"old/page.html\"", from))
			continue
		}
		if to == "" {
			errs = append(errs, diag.Errorf(file, line, "redirect %q has an empty target", from))
			continue
		}
		if frag != "" {
			c.FragmentRedirects = append(c.FragmentRedirects, Redirect{From: p, Fragment: frag, To: to, Line: line})
			continue
		}
		c.Redirects = append(c.Redirects, Redirect{From: p, To: to, Line: line})
	}
	if len(errs) > 0 {
		// Every bad key at once, in the file's order (the table is a
		// map: its order changes from run to run).
		sort.SliceStable(errs, func(i, j int) bool {
			if errs[i].Line != errs[j].Line {
				return errs[i].Line < errs[j].Line
			}
			return errs[i].Msg < errs[j].Msg
		})
		if len(errs) == 1 {
			return nil, errs[0]
		}
		return nil, errs
	}
	sort.Slice(c.Redirects, func(i, j int) bool { return c.Redirects[i].From < c.Redirects[j].From })
	sort.Slice(c.FragmentRedirects, func(i, j int) bool {
		a, b := c.FragmentRedirects[i], c.FragmentRedirects[j]
		return a.From < b.From || a.From == b.From && a.Fragment < b.Fragment
	})
	sort.SliceStable(c.Warnings, func(i, j int) bool { return c.Warnings[i].Line < c.Warnings[j].Line })
	return c, nil
}

// redirectPath returns the site path (without a leading "/") of the old
// page of an [output.html.redirect] key, as mdBook finds it: the key is
// joined to the output folder, so "/a/b.html", "a/b.html" and "./a/b.html"
// all name a/b.html (mdBook's emit_redirects trims the leading "/" and
// joins). A key that names no file inside the site ("", "/", "a/",
// "../x.html") is refused: mdBook would write outside its output folder.
func redirectPath(key string) (string, bool) {
	p := strings.TrimLeft(key, "/")
	if p == "" || strings.HasSuffix(p, "/") || strings.Contains(p, "\\") {
		return "", false
	}
	p = path.Clean(p)
	if p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return "", false
	}
	return p, true
}

// quotedKeyLine returns the first line of src that assigns the quoted key
// ("/old.html" = ...), 0 when none does.
func quotedKeyLine(src []byte, key string) int {
	for i, l := range strings.Split(string(src), "\n") {
		l = strings.TrimSpace(l)
		for _, q := range []string{`"`, `'`} {
			if rest, ok := strings.CutPrefix(l, q+key+q); ok && strings.HasPrefix(strings.TrimSpace(rest), "=") {
				return i + 1
			}
		}
	}
	return keyLine(src, key)
}

// keyLine returns the first line of src that assigns key, 0 when none does.
func keyLine(src []byte, key string) int {
	for i, l := range strings.Split(string(src), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, key) && strings.HasPrefix(strings.TrimSpace(l[len(key):]), "=") {
			return i + 1
		}
	}
	return 0
}

// readCSP returns the Content-Security-Policy that root/netlify.toml's
// [[headers]] rules give the site ("for" = "/*" first, else any rule's),
// "" when the file or the header is absent. A netlify.toml that does not
// parse gives "": bookgen serve, which reads it to send its headers,
// reports it.
func readCSP(root string) string {
	data, err := os.ReadFile(filepath.Join(root, "netlify.toml"))
	if err != nil {
		return ""
	}
	var cfg struct {
		Headers []struct {
			For    string            `toml:"for"`
			Values map[string]string `toml:"values"`
		} `toml:"headers"`
	}
	if toml.Unmarshal(data, &cfg) != nil {
		return ""
	}
	csp := ""
	for _, h := range cfg.Headers {
		if v := h.Values["Content-Security-Policy"]; v != "" && (csp == "" || h.For == "/*") {
			csp = v
		}
	}
	return csp
}
