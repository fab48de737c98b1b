package render

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/expand"
)

// Cache keeps rendered chapters between builds of the same book (bookgen
// serve), so that a rebuild after an edit to one chapter renders that
// chapter only. An entry is found by a key of everything the page is made
// from: the chapter's path and expanded Markdown, the origin of every line,
// the book's chapters and repository URL. Besides, an entry remembers what
// rendering learnt from the file system (which linked files exist, whether
// an included file is package main) and is used only while that still
// holds. A failed rendering is never cached. The zero Cache is ready; a nil
// *Cache caches nothing. A Cache is safe for concurrent use.
type Cache struct {
	mu      sync.Mutex
	entries map[string]*cacheEntry
	sums    docSums // see keymemo.go
}

type cacheEntry struct {
	page   *Page
	probes map[string]string
}

// Len returns the number of cached pages.
func (c *Cache) Len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

func (c *Cache) get(key string, r *Renderer) *Page {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	e := c.entries[key]
	c.mu.Unlock()
	if e == nil {
		return nil
	}
	for name, want := range e.probes {
		if r.reprobe(name) != want {
			return nil
		}
	}
	return e.page
}

func (c *Cache) put(key string, pg *Page, probes map[string]string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]*cacheEntry{}
	}
	c.entries[key] = &cacheEntry{page: pg, probes: probes}
}

// cacheKey hashes what the page of d is made from.
func (r *Renderer) cacheKey(d *expand.Doc) string {
	var sums *docSums
	if r.Cache != nil {
		sums = &r.Cache.sums
	}
	doc := sums.docSum(d)
	h := sha256.New()
	h.Write(doc[:])
	h.Write(r.bookKey[:])
	r.claimsKey(h, d)
	r.programsKey(h)
	r.verdictsKey(h, d)
	return hex.EncodeToString(h.Sum(nil))
}

// bookHash hashes what every page of the book is made from besides its own
// Markdown: the set of chapters (links are checked against it), the
// repository URL, the root and the source folder. It is computed once per Renderer, so that
// a cache key costs the size of its chapter, not of the book.
func bookHash(b *book.Book, chapters map[string]bool) [sha256.Size]byte {
	h := sha256.New()
	names := make([]string, 0, len(chapters))
	for p := range chapters {
		names = append(names, p)
	}
	slices.Sort(names)
	for _, p := range names {
		fmt.Fprintf(h, "ch:%s\x00", p)
	}
	fmt.Fprintf(h, "repo:%s\x00root:%s\x00src:%s", b.Config.Repository, b.Root, b.Src)
	langs := make([]string, 0, len(b.Config.HideLines))
	for l := range b.Config.HideLines {
		langs = append(langs, l)
	}
	slices.Sort(langs)
	for _, l := range langs {
		fmt.Fprintf(h, "\x00hide:%s=%s", l, b.Config.HideLines[l])
	}
	for _, p := range b.Config.UncheckedLinks {
		fmt.Fprintf(h, "\x00unchecked:%s", p)
	}
	fmt.Fprintf(h, "\x00broken-links:%s\x00csp:%s", b.Config.BrokenLinks, b.CSP)
	fmt.Fprintf(h, "\x00markdown:%+v", b.Config.Markdown)
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// stat looks up a repository-relative path and records the answer. A path
// that resolves, through a symbolic link, outside the repository is
// reported as missing (an error wrapping ErrOutside): the site stage does
// not publish such a file, so a link to it would be broken.
func (r *Renderer) stat(repoPath string) (fs.FileInfo, error) {
	fi, err := statInside(r.book, repoPath)
	r.probe("stat:"+repoPath, statString(fi, err))
	return fi, err
}

// ErrOutside is returned (wrapped) for a repository path that a symbolic
// link takes outside the repository.
var ErrOutside = errors.New("resolves outside the repository")

// ErrNotPublished is returned (wrapped) for a path in the source folder
// (book/) that the
// site stage does not copy: a hidden file or folder (".name") or an
// editor's leftover (book.Scratch).
var ErrNotPublished = errors.New("is not published")

// statInside is os.Stat of b.Root/repoPath, refusing a path whose real
// location (symbolic links resolved) is outside the root's, and a path in
// the source folder that the site stage does not copy (ErrNotPublished).
func statInside(b *book.Book, repoPath string) (fs.FileInfo, error) {
	root := b.Root
	if rest, ok := b.InSrc(repoPath); ok {
		for _, part := range strings.Split(rest, "/") {
			if strings.HasPrefix(part, ".") || book.Scratch(part) {
				return nil, fmt.Errorf("%s: %w", repoPath, ErrNotPublished)
			}
		}
	}
	abs := filepath.Join(root, filepath.FromSlash(repoPath))
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, err
	}
	if _, inSrc := b.InSrc(repoPath); inSrc && !fi.IsDir() && !fi.Mode().IsRegular() {
		return nil, &notRegularError{path: repoPath, kind: fileKind(fi.Mode())}
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	if rel, err := filepath.Rel(realRoot, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("%s: %w (%s)", repoPath, ErrOutside, real)
	}
	return fi, nil
}

// ErrNotRegular is returned (wrapped) for a path in the source folder
// that is neither a regular file nor a folder (a named pipe, a socket, a
// device): the site stage copies only regular files, and reading a pipe
// would wait for a writer.
var ErrNotRegular = errors.New("is not a regular file")

// notRegularError is ErrNotRegular for one path, with the file's kind.
type notRegularError struct{ path, kind string }

func (e *notRegularError) Error() string        { return e.path + ": " + e.kind + ", not a regular file" }
func (e *notRegularError) Is(target error) bool { return target == ErrNotRegular }

// fileKind names the type of a file that is not regular.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "mode " + m.Type().String()
}

func statString(fi fs.FileInfo, err error) string {
	switch {
	case errors.Is(err, ErrNotRegular):
		return "special"
	case errors.Is(err, ErrOutside):
		return "outside"
	case errors.Is(err, ErrNotPublished):
		return "unpublished"
	case err != nil:
		return "missing"
	case fi.IsDir():
		return "dir"
	default:
		return "file"
	}
}

func (r *Renderer) probe(name, answer string) {
	if r.probes != nil {
		r.probes[name] = answer
	}
}

// reprobe answers a recorded question again.
func (r *Renderer) reprobe(name string) string {
	kind, p, _ := strings.Cut(name, ":")
	switch kind {
	case "stat":
		fi, err := statInside(r.book, p)
		return statString(fi, err)
	case "main":
		data, err := os.ReadFile(filepath.Join(r.book.Root, filepath.FromSlash(p)))
		return strconv.FormatBool(err == nil && packageName(data) == "main")
	}
	return ""
}
