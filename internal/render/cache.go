package render

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
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
	h := sha256.New()
	fmt.Fprintf(h, "render v3\x00%s\x00%s\x00%d\x00", d.Chapter.Path, d.Chapter.Title, len(d.Markdown))
	h.Write(d.Markdown)
	// The origin of every line: the file where it changes, the line
	// number of each (binary, no formatting: a large book hashes tens of
	// thousands per build).
	var buf []byte
	file := ""
	for _, o := range d.Origins {
		if o.File != file {
			file = o.File
			buf = append(append(append(buf, 0), file...), 0)
		}
		buf = binary.AppendUvarint(buf, uint64(o.Line))
	}
	h.Write(buf)
	h.Write(r.bookKey[:])
	r.claimsKey(h, d)
	return hex.EncodeToString(h.Sum(nil))
}

// bookHash hashes what every page of the book is made from besides its own
// Markdown: the set of chapters (links are checked against it), the
// repository URL and the root. It is computed once per Renderer, so that
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
	fmt.Fprintf(h, "repo:%s\x00root:%s", b.Config.Repository, b.Root)
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// stat looks up a repository-relative path and records the answer.
func (r *Renderer) stat(repoPath string) (fs.FileInfo, error) {
	fi, err := os.Stat(filepath.Join(r.book.Root, filepath.FromSlash(repoPath)))
	r.probe("stat:"+repoPath, statString(fi, err))
	return fi, err
}

func statString(fi fs.FileInfo, err error) string {
	switch {
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
		fi, err := os.Stat(filepath.Join(r.book.Root, filepath.FromSlash(p)))
		return statString(fi, err)
	case "main":
		data, err := os.ReadFile(filepath.Join(r.book.Root, filepath.FromSlash(p)))
		return strconv.FormatBool(err == nil && packageName(data) == "main")
	}
	return ""
}
