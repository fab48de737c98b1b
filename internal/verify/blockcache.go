package verify

import (
	"hash/maphash"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ownership-book/ownership/internal/expand"
)

// blockCache remembers FindBlocks of the chapters it has seen, so that a
// rebuild after an edit (bookgen serve) parses only the chapters that
// changed: finding the blocks of a 1,000-chapter book costs tens of
// milliseconds, every one of them on the path from a save to the reload.
// Entries are keyed by a hash of the Markdown and checked against the
// Markdown itself; the cache is emptied when it holds more than
// blockCacheMax chapters.
var blockCache = struct {
	sync.Mutex
	seed    maphash.Seed
	entries map[uint64]blockEntry
	same    map[sameBytes][]Block
}{seed: maphash.MakeSeed(), entries: map[uint64]blockEntry{}, same: map[sameBytes][]Block{}}

// sameBytes names a byte slice by its backing array and length. A
// chapter's Markdown is never modified once expanded, and the expansion
// cache hands an unchanged chapter's Doc out again with the same slice, so
// a rebuild finds an unchanged chapter here without hashing or comparing
// its text (at 1,000 chapters, 10 MB of both per rebuild). The key holds
// the array, so its address cannot be reused while the entry exists.
type sameBytes struct {
	p *byte
	n int
}

func sameOf(b []byte) (sameBytes, bool) {
	return sameBytes{unsafe.SliceData(b), len(b)}, len(b) > 0
}

const blockCacheMax = 20000

type blockEntry struct {
	md     string
	blocks []Block
}

// findBlocksCached is FindBlocks through blockCache. The blocks returned
// are shared: callers must not modify them.
func findBlocksCached(md []byte) []Block {
	id, byID := sameOf(md)
	if byID {
		blockCache.Lock()
		blocks, ok := blockCache.same[id]
		blockCache.Unlock()
		if ok {
			return blocks
		}
	}
	h := maphash.Bytes(blockCache.seed, md)
	blockCache.Lock()
	e, ok := blockCache.entries[h]
	blockCache.Unlock()
	blocks := e.blocks
	if !ok || e.md != string(md) {
		blocks = FindBlocks(md)
	}
	blockCache.Lock()
	if len(blockCache.entries) >= blockCacheMax || len(blockCache.same) >= blockCacheMax {
		clear(blockCache.entries)
		clear(blockCache.same)
	}
	blockCache.entries[h] = blockEntry{md: string(md), blocks: blocks}
	if byID {
		blockCache.same[id] = blocks
	}
	blockCache.Unlock()
	return blocks
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
