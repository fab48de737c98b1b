package verify

import (
	"hash/maphash"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ownership-book/ownership/internal/expand"
	"github.com/ownership-book/ownership/internal/markdown"
)

// mdCache remembers what a function of a chapter's Markdown (and a key:
// the chapter's file, or "") returned, so that a rebuild after an edit
// (bookgen serve) parses only the chapters that changed: parsing every
// chapter of a 1,000-chapter book with goldmark costs tens of milliseconds
// on the path from a save to the reload. An unchanged chapter is found by
// its Markdown's identity (see sameBytes); other Markdown by a hash of the
// key and the text, checked against both. The cache is emptied when it
// holds more than mdCacheMax chapters. Values are shared: callers must not
// modify them. It is safe for concurrent use.
type mdCache[V any] struct {
	mu      sync.Mutex
	seed    maphash.Seed
	entries map[uint64]mdEntry[V]
	same    map[sameKey]V
	// identity keeps only same: a cache for one verification, where the
	// same Doc's Markdown is asked for again and nothing outlives it, has
	// no use for a copy of every chapter's text.
	identity bool
}

const mdCacheMax = 20000

type mdEntry[V any] struct {
	key, md string
	v       V
}

type sameKey struct {
	key string
	md  sameBytes
}

// sameBytes names a byte slice by its backing array and length. A
// chapter's Markdown is never modified once expanded, and the expansion
// cache hands an unchanged chapter's Doc out again with the same slice, so
// a rebuild finds an unchanged chapter without hashing or comparing its
// text (at 1,000 chapters, 10 MB of both per rebuild). The key holds the
// array, so its address cannot be reused while the entry exists.
type sameBytes struct {
	p *byte
	n int
}

func newMDCache[V any]() *mdCache[V] {
	return &mdCache[V]{seed: maphash.MakeSeed(), entries: map[uint64]mdEntry[V]{}, same: map[sameKey]V{}}
}

// get returns f(key, md) through the cache.
func (c *mdCache[V]) get(key string, md []byte, f func(key string, md []byte) V) V {
	sk := sameKey{key, sameBytes{unsafe.SliceData(md), len(md)}}
	byID := len(md) > 0
	if byID {
		c.mu.Lock()
		v, ok := c.same[sk]
		c.mu.Unlock()
		if ok {
			return v
		}
	}
	if c.identity {
		v := f(key, md)
		if byID {
			c.mu.Lock()
			c.same[sk] = v
			c.mu.Unlock()
		}
		return v
	}
	var h maphash.Hash
	h.SetSeed(c.seed)
	h.WriteString(key)
	h.WriteByte(0)
	h.Write(md)
	k := h.Sum64()
	c.mu.Lock()
	e, ok := c.entries[k]
	c.mu.Unlock()
	hit := ok && e.key == key && e.md == string(md)
	v := e.v
	if !hit {
		v = f(key, md)
	}
	c.mu.Lock()
	if len(c.entries) >= mdCacheMax || len(c.same) >= mdCacheMax {
		clear(c.entries)
		clear(c.same)
		hit = false
	}
	if !hit { // a hit's entry is there already: its text is not copied again
		c.entries[k] = mdEntry[V]{key: key, md: string(md), v: v}
	}
	if byID {
		c.same[sk] = v
	}
	c.mu.Unlock()
	return v
}

// MarkdownCache remembers what verification parses out of each chapter's
// Markdown, its fenced blocks (markdown.FindBlocks) and its claim links
// (markdown.ClaimLinks), so that a rebuild parses only the chapters whose
// Markdown changed (see mdCache). Builds that follow one another (bookgen
// serve) share one through Options.Markdown; without one, a Verify parses
// into a cache of its own and drops it when it returns, so that a one-shot
// build of a large book does not keep a parse of every chapter to its
// end. The zero value is ready to use; a nil *MarkdownCache parses
// without remembering. It is safe for concurrent use.
type MarkdownCache struct {
	once   sync.Once
	blocks *mdCache[[]markdown.Block]
	claims *mdCache[[]markdown.ClaimLink]
	// oneVerify marks the cache a Verify makes for itself: it finds a
	// chapter again by its Markdown's identity only (see mdCache.identity).
	oneVerify bool
}

func (c *MarkdownCache) init() {
	c.once.Do(func() {
		c.blocks = newMDCache[[]markdown.Block]()
		c.claims = newMDCache[[]markdown.ClaimLink]()
		c.blocks.identity, c.claims.identity = c.oneVerify, c.oneVerify
	})
}

// findBlocks is markdown.FindBlocks through c. The blocks returned are
// shared: callers must not modify them.
func (c *MarkdownCache) findBlocks(md []byte) []markdown.Block {
	if c == nil {
		return markdown.FindBlocks(md)
	}
	c.init()
	return c.blocks.get("", md, func(_ string, md []byte) []markdown.Block { return markdown.FindBlocks(md) })
}

// claimLinks is markdown.ClaimLinks through c (the key is the chapter's
// file). It holds what the Markdown alone tells (the links, their lines
// and text); the Go files the links name and the origins of the lines are
// looked at again on every build (FindClaims), so an edit to a test file
// is seen. The links returned are shared: callers must not modify them.
func (c *MarkdownCache) claimLinks(chFile string, md []byte) []markdown.ClaimLink {
	if c == nil {
		return markdown.ClaimLinks(chFile, md)
	}
	c.init()
	return c.claims.get(chFile, md, markdown.ClaimLinks)
}

// prefetch fills c for docs on every core, so that Verify's walk through
// the chapters in order (which must stay in order: its reports and errors
// are) finds each chapter's blocks and claim links already parsed.
// Parsing is most of a large book's verification when no check has to
// run.
func prefetch(c *MarkdownCache, docs []*expand.Doc) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(docs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(docs) {
					return
				}
				c.findBlocks(docs[i].Markdown)
				c.claimLinks(docs[i].Chapter.File(), docs[i].Markdown)
			}
		}()
	}
	wg.Wait()
}
