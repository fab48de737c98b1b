package expand

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/diag"
)

// Cache keeps expanded chapters between builds of the same book (bookgen
// serve), so that a rebuild after an edit expands only the chapters whose
// text, or one of whose included files, changed: scanning every line of a
// 1,000-chapter book for directives costs tens of milliseconds on the path
// from a save to the reload.
//
// An entry is used only while everything the expansion read is as it was:
// the chapter's text (Item.Source, which book.Load has just read), the
// real paths of the book's root and of the repository includes may read
// (book.Book.RepoRoot), and every included file's content and
// real path (read again on every build: a stat could miss a same-size
// edit within the file system's time granularity). A chapter that
// includes Markdown files is also checked for its own real path, which
// include-cycle detection compares against. An expansion that failed is
// never cached, so its errors are found again. The zero Cache is ready; a
// nil *Cache caches nothing. A Cache is safe for concurrent use.
//
// Docs handed out share their Markdown, Origins and Deps with the cache:
// callers must not modify them.
type Cache struct {
	mu      sync.Mutex
	entries map[string]*cacheEntry // by the chapter file's absolute path
}

type cacheEntry struct {
	bound  bound
	source string
	real   string // the chapter file's real path, checked when md is set
	md     bool   // the chapter includes Markdown files
	read   []readFile
	doc    Doc // Chapter is replaced on every use
}

// depState is an included file as an expansion read it.
type depState struct {
	real string // real path
	data string // content, byte order mark and all
}

type readFile struct {
	rel string
	depState
}

// All is AllContext with a background context.
func (c *Cache) All(b *book.Book) ([]*Doc, error) {
	return c.AllContext(context.Background(), b)
}

// AllContext is the package's AllContext (the same Docs, the same
// errors), expanding only the chapters for which c holds no entry that
// still holds (see Cache).
func (c *Cache) AllContext(ctx context.Context, b *book.Book) ([]*Doc, error) {
	if c == nil {
		return AllContext(ctx, b)
	}
	bd, err := boundOf(b)
	var docs []*Doc
	var errs diag.List
	for _, ch := range b.Chapters {
		var d *Doc
		var derr error
		switch {
		case ch.Path == "" || err != nil:
			// The package's errors: a draft, a root or repository that does not resolve.
			d, derr = ExpandContext(ctx, b, ch)
		default:
			d, derr = c.expand(ctx, b, ch, bd)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if derr != nil {
			errs = append(errs, diag.All(derr)...)
			continue
		}
		docs = append(docs, d)
	}
	return docs, errs.Err()
}

// Len returns the number of cached chapters.
func (c *Cache) Len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

func (c *Cache) expand(ctx context.Context, b *book.Book, ch *book.Item, bd bound) (*Doc, error) {
	key := filepath.Join(b.Root, filepath.FromSlash(ch.File()))
	c.mu.Lock()
	e := c.entries[key]
	c.mu.Unlock()
	if e != nil && e.holds(b, ch, bd) {
		d := e.doc
		d.Chapter = ch
		return &d, nil
	}
	real := chapterRealPath(b, ch)
	d, read, err := expandChapter(ctx, b, ch, bd, real, true)
	if err != nil || read == nil {
		c.mu.Lock()
		delete(c.entries, key)
		c.mu.Unlock()
		return d, err
	}
	ne := &cacheEntry{bound: bd, source: string(ch.Source), real: real, doc: *d}
	ne.doc.Chapter = nil
	for rel, st := range read {
		ne.read = append(ne.read, readFile{rel, st})
		if isMarkdown(rel) {
			ne.md = true
		}
	}
	slices.SortFunc(ne.read, func(a, b readFile) int { return strings.Compare(a.rel, b.rel) })
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[string]*cacheEntry{}
	}
	c.entries[key] = ne
	c.mu.Unlock()
	return d, nil
}

// holds reports whether e is still the expansion of ch.
func (e *cacheEntry) holds(b *book.Book, ch *book.Item, bd bound) bool {
	if e.bound != bd || e.source != string(ch.Source) {
		return false
	}
	if e.md && chapterRealPath(b, ch) != e.real {
		return false
	}
	for _, f := range e.read {
		abs := bd.abs(b, f.rel)
		fi, err := os.Stat(abs)
		if err != nil || !fi.Mode().IsRegular() {
			return false
		}
		if real, err := filepath.EvalSymlinks(abs); err != nil || real != f.real {
			return false
		}
		data, err := os.ReadFile(abs)
		if err != nil || string(data) != f.data {
			return false
		}
	}
	return true
}
