package book

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ownership-book/ownership/internal/diag"
	"github.com/pelletier/go-toml/v2"
)

// ConfigFile is the repository-relative path of the book's configuration.
const ConfigFile = "book/book.toml"

// DefaultTimeout is Config.Timeout when book.toml does not set one.
const DefaultTimeout = "60s"

// Load reads root/book/book.toml, root/book/SUMMARY.md and every chapter
// file they list. root is the repository root (the directory of go.mod); it
// is made absolute.
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
	return load(root, nil)
}

func load(root string, c *Cache) (*Book, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("book.Load: %w", err)
	}
	b := &Book{Root: abs, Dir: filepath.Join(abs, "book")}
	realRoot, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, diag.Errorf("", 0, "repository root %s: %v", abs, err)
	}

	cfgSrc, err := os.ReadFile(filepath.Join(b.Dir, "book.toml"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		b.Config = Config{Language: "en", Timeout: DefaultTimeout}
	case err != nil:
		return nil, diag.Errorf(ConfigFile, 0, "%v", err)
	default:
		cfg, err := ParseConfig(cfgSrc)
		if err != nil {
			return nil, err
		}
		b.Config = *cfg
	}

	sumSrc, err := os.ReadFile(filepath.Join(b.Dir, "SUMMARY.md"))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, diag.Errorf(SummaryFile, 0, "does not exist: a book needs a table of contents (mdBook's SUMMARY.md format)")
		}
		return nil, diag.Errorf(SummaryFile, 0, "%v", err)
	}
	if line, col, ok := firstInvalidUTF8(sumSrc); !ok {
		return nil, diag.Errorf(SummaryFile, line, "invalid UTF-8 (byte %d of the line)", col)
	}
	b.Title, b.Items, err = ParseSummary(bytes.TrimPrefix(sumSrc, utf8BOM))
	if err != nil {
		return nil, err
	}

	var errs diag.List
	rp := &realPaths{dirs: map[string]string{}}
	var walk func(items []*Item)
	walk = func(items []*Item) {
		for _, it := range items {
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
	switch len(errs) {
	case 0:
		return b, nil
	case 1:
		return nil, errs[0]
	}
	return nil, errs
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
			return diag.Errorf(SummaryFile, it.Line, "chapter file %s does not exist", it.File())
		}
		return diag.Errorf(SummaryFile, it.Line, "chapter file %s: %v", it.File(), err)
	}
	if !fi.Mode().IsRegular() {
		return diag.Errorf(SummaryFile, it.Line, "chapter file %s is not a regular file", it.File())
	}
	real, err := rp.of(file, link)
	if err != nil {
		return diag.Errorf(SummaryFile, it.Line, "chapter file %s: %v", it.File(), err)
	}
	if !within(realRoot, real) {
		return diag.Errorf(SummaryFile, it.Line, "chapter file %s resolves to %s, outside the repository", it.File(), real)
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

// tomlFile is book.toml's layout, a subset of mdBook's.
type tomlFile struct {
	Book struct {
		Title       string   `toml:"title"`
		Authors     []string `toml:"authors"`
		Description string   `toml:"description"`
		Language    string   `toml:"language"`
	} `toml:"book"`
	Output struct {
		HTML struct {
			SiteURL         string `toml:"site-url"`
			GitRepository   string `toml:"git-repository-url"`
			EditURLTemplate string `toml:"edit-url-template"`
		} `toml:"html"`
	} `toml:"output"`
	Bookgen struct {
		Timeout string `toml:"timeout"`
	} `toml:"bookgen"`
}

var typeErrRE = regexp.MustCompile(`cannot decode TOML (\w+) into .* of type (\S+)$`)

// ParseConfig parses the text of book/book.toml (mdBook's layout; see
// Config). Unknown keys, wrong types, a timeout that is not a positive Go
// duration and a site-url or git-repository-url that is not an absolute
// http(s) URL are errors at ConfigFile and the line of the key. SiteURL gets
// a trailing "/" when it lacks one; Language defaults to "en" and Timeout to
// DefaultTimeout.
func ParseConfig(src []byte) (*Config, error) {
	var f tomlFile
	err := toml.NewDecoder(bytes.NewReader(src)).DisallowUnknownFields().Decode(&f)
	var strict *toml.StrictMissingError
	var dec *toml.DecodeError
	switch {
	case errors.As(err, &strict):
		var l diag.List
		for i := range strict.Errors {
			e := &strict.Errors[i]
			row, _ := e.Position()
			l = append(l, diag.Errorf(ConfigFile, row, "unknown key %s (bookgen reads [book] title, authors, description, language; [output.html] site-url, git-repository-url, edit-url-template; [bookgen] timeout)", strings.Join(e.Key(), ".")))
		}
		if len(l) == 1 {
			return nil, l[0]
		}
		return nil, l
	case errors.As(err, &dec):
		row, _ := dec.Position()
		msg := strings.TrimPrefix(dec.Error(), "toml: ")
		if m := typeErrRE.FindStringSubmatch(msg); m != nil {
			msg = fmt.Sprintf("%s is a TOML %s, want %s", strings.Join(dec.Key(), "."), m[1], m[2])
		}
		return nil, diag.Errorf(ConfigFile, row, "%s", msg)
	case err != nil:
		return nil, diag.Errorf(ConfigFile, 0, "%v", err)
	}

	c := &Config{
		Title:           f.Book.Title,
		Authors:         f.Book.Authors,
		Description:     f.Book.Description,
		Language:        f.Book.Language,
		SiteURL:         f.Output.HTML.SiteURL,
		Repository:      f.Output.HTML.GitRepository,
		EditURLTemplate: f.Output.HTML.EditURLTemplate,
		Timeout:         f.Bookgen.Timeout,
	}
	if c.Language == "" {
		c.Language = "en"
	}
	if c.Timeout == "" {
		c.Timeout = DefaultTimeout
	} else if d, err := time.ParseDuration(c.Timeout); err != nil || d <= 0 {
		return nil, diag.Errorf(ConfigFile, keyLine(src, "timeout"), "timeout %q is not a positive Go duration such as \"60s\" or \"2m\"", c.Timeout)
	}
	for _, u := range []struct {
		key string
		val *string
	}{{"site-url", &c.SiteURL}, {"git-repository-url", &c.Repository}} {
		if *u.val == "" {
			continue
		}
		p, err := url.Parse(*u.val)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return nil, diag.Errorf(ConfigFile, keyLine(src, u.key), "%s %q is not an absolute http(s) URL", u.key, *u.val)
		}
	}
	if c.SiteURL != "" && !strings.HasSuffix(c.SiteURL, "/") {
		c.SiteURL += "/"
	}
	if c.EditURLTemplate != "" && !strings.Contains(c.EditURLTemplate, "{path}") {
		return nil, diag.Errorf(ConfigFile, keyLine(src, "edit-url-template"), "edit-url-template %q has no {path}", c.EditURLTemplate)
	}
	return c, nil
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
