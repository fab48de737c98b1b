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

// blockCache holds markdown.FindBlocks of the chapters seen (key "").
var blockCache = newMDCache[[]markdown.Block]()

// findBlocksCached is markdown.FindBlocks through blockCache. The blocks returned
// are shared: callers must not modify them.
func findBlocksCached(md []byte) []markdown.Block {
	return blockCache.get("", md, func(_ string, md []byte) []markdown.Block { return markdown.FindBlocks(md) })
}

// prefetch fills blockCache and claimLinkCache for docs on every core, so
// that Verify's walk through the chapters in order (which must stay in
// order: its reports and errors are) finds each chapter's blocks and claim
// links already parsed. Parsing is most of a large book's verification
// when no check has to run.
func prefetch(docs []*expand.Doc) {
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
				findBlocksCached(docs[i].Markdown)
				claimLinksCached(docs[i].Chapter.File(), docs[i].Markdown)
			}
		}()
	}
	wg.Wait()
}
