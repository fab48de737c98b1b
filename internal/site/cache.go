package site

import (
	"crypto/sha256"
	"fmt"
	"hash"
	"sync"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/render"
)

// The caches of an incremental build (Incremental) besides the previous
// site's files: what a rebuild after an edit to one chapter's prose would
// otherwise make again from every chapter of the book. Each is found by
// everything it is made from and answers only for exactly those inputs.

// outlineSum hashes the book's outline, which the sidebar of every page,
// the table of contents page and the print page's links are made from:
// every entry of SUMMARY.md (kind, title and its HTML, path, number,
// draft, nesting),
// the chapters in reading order, SUMMARY.md's title and book.toml.
func outlineSum(b *book.Book) [sha256.Size]byte {
	h := sha256.New()
	fmt.Fprintf(h, "outline\x00%s\x00%+v\x00", b.Title, b.Config)
	writeItems(h, b.Items)
	for _, ch := range b.Chapters {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00", ch.Path, ch.Title, ch.File())
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

func writeItems(h hash.Hash, items []*book.Item) {
	for _, it := range items {
		fmt.Fprintf(h, "%d\x00%s\x00%s\x00%s\x00%v\x00%v\x00%d\x00", it.Kind, it.Title, it.TitleHTML, it.Path, it.Number, it.Draft, len(it.Children))
		writeItems(h, it.Children)
	}
}

// sidebarCache remembers the shared sidebar script and the table of
// contents page of a large book (shareSidebar), keyed by a hash of the
// theme's template, the assets' names, the book's outline and the
// contents page's name.
type sidebarCache struct {
	mu       sync.Mutex
	key      [sha256.Size]byte
	valid    bool
	script   string // site path of the script
	js       []byte
	contents string // site path of the contents page
	page     []byte
}

func sidebarKey(tmplText []byte, a assets, outline [sha256.Size]byte, contents string) [sha256.Size]byte {
	h := sha256.New()
	fmt.Fprintf(h, "sidebar\x00%d\x00%s\x00%+v\x00%x\x00%s", len(tmplText), tmplText, a, outline, contents)
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

func (c *sidebarCache) get(key [sha256.Size]byte) (script string, js []byte, contents string, page []byte, ok bool) {
	if c == nil {
		return "", nil, "", nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.valid || c.key != key {
		return "", nil, "", nil, false
	}
	return c.script, c.js, c.contents, c.page, true
}

func (c *sidebarCache) put(key [sha256.Size]byte, script string, js []byte, contents string, page []byte) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.key, c.valid, c.script, c.js, c.contents, c.page = key, true, script, js, contents, page
}

// printCache remembers each chapter's section of print.html (printChapter)
// by the rendered page it was made from (a render.Cache hands out the same
// *Page while the chapter is unchanged; holding it keeps its address from
// being reused), the chapter's path, and the book's chapters (whose ids
// its links point to). Only the sections of the last print page are kept.
type printCache struct {
	mu       sync.Mutex
	chapters [sha256.Size]byte // hash of the chapters' paths, in order
	entries  map[*render.Page]printEntry
}

type printEntry struct {
	path string
	html []byte
}

// sections returns printChapter of every chapter, from c where it can.
func (c *printCache) sections(b *book.Book, pages []*render.Page, ids map[string]string) [][]byte {
	out := make([][]byte, len(b.Chapters))
	if c == nil {
		for i, ch := range b.Chapters {
			out[i] = printChapter(ch, pages[i].HTML, ids) // never spooled: only serve keeps a printCache, and its pages are in memory
		}
		return out
	}
	h := sha256.New()
	for _, ch := range b.Chapters {
		fmt.Fprintf(h, "%s\x00", ch.Path)
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.entries
	if c.chapters != sum {
		old = nil
	}
	next := make(map[*render.Page]printEntry, len(b.Chapters))
	for i, ch := range b.Chapters {
		if e, ok := old[pages[i]]; ok && e.path == ch.Path {
			out[i] = e.html
		} else {
			out[i] = printChapter(ch, pages[i].HTML, ids)
		}
		next[pages[i]] = printEntry{path: ch.Path, html: out[i]}
	}
	c.chapters, c.entries = sum, next
	return out
}

// idCache remembers the ids of each page (pageIDs) that CheckLinks checks
// links against, by the rendered page (a render.Cache hands out the same
// *Page while the chapter is unchanged, and a Page is not modified once
// rendered). Only the pages of the last build are kept.
type idCache struct {
	mu      sync.Mutex
	entries map[*render.Page]map[string]bool
}

// sets returns pageIDs of every page, from c where it can.
func (c *idCache) sets(pages []*render.Page) ([]map[string]bool, error) {
	out := make([]map[string]bool, len(pages))
	if c == nil {
		for i, pg := range pages {
			set, err := pageIDs(pg)
			if err != nil {
				return nil, err
			}
			out[i] = set
		}
		return out, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	next := make(map[*render.Page]map[string]bool, len(pages))
	for i, pg := range pages {
		set, ok := c.entries[pg]
		if !ok {
			var err error
			if set, err = pageIDs(pg); err != nil {
				return nil, err
			}
		}
		out[i], next[pg] = set, set
	}
	c.entries = next
	return out, nil
}

// pageMemo remembers one generated page that shows the book's outline but
// no chapter (404.html), keyed by a hash of what it is made from.
type pageMemo struct {
	mu    sync.Mutex
	key   [sha256.Size]byte
	valid bool
	data  []byte
}

// notFoundKey hashes what 404.html is made from: the template, the assets'
// names, the book's outline (its configuration, the table of contents, the
// first chapter), where the site is served and the book's own 404 page
// (nf, nil when it has none).
func notFoundKey(tmplText []byte, a assets, outline [sha256.Size]byte, servedAtRoot bool, nf *render.Page) [sha256.Size]byte {
	h := sha256.New()
	fmt.Fprintf(h, "404\x00%d\x00%s\x00%+v\x00%x\x00%v\x00", len(tmplText), tmplText, a, outline, servedAtRoot)
	if nf != nil {
		fmt.Fprintf(h, "page\x00%s\x00%d\x00", nf.Title, len(nf.HTML))
		h.Write(nf.HTML)
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// page returns the memo's page when its key is key, else make's, which it
// then keeps. A nil memo always makes the page.
func (m *pageMemo) page(key [sha256.Size]byte, make func() ([]byte, error)) ([]byte, error) {
	if m == nil {
		return make()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.valid && m.key == key {
		return m.data, nil
	}
	data, err := make()
	if err != nil {
		return nil, err
	}
	m.key, m.valid, m.data = key, true, data
	return data, nil
}
