package verify

import (
	"strings"
	"sync"

	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/expand"
	"github.com/ownership-book/ownership/internal/markdown"
)

// FragmentCache remembers the text of every Go fragment that parsed (the
// "parse" check), so that a rebuild (bookgen serve, Options.Fragments)
// does not parse again the fragments of the chapters that did not change:
// at 4,000 fragments in a 1,000-chapter book that is tens of milliseconds
// on the path from a save to the reload. Whether a fragment parses
// depends on its text alone; a fragment that did not parse is not
// remembered (its error names the chapter's file and line, so it is
// parsed again on every build). A fragment answered by the cache counts
// as a cached check (Check.Cached, Report.Cached). The cache is emptied
// when it holds more than fragmentCacheMax texts. The zero FragmentCache
// is ready; a nil one caches nothing. It is safe for concurrent use.
type FragmentCache struct {
	mu    sync.Mutex
	texts map[string]struct{}
	// blocks holds the fragments that parsed by identity: the blocks of an
	// unchanged chapter are the same markdown.Block values again (MarkdownCache.findBlocks),
	// so they are found without joining and hashing their lines.
	blocks map[*markdown.Block]struct{}
}

const fragmentCacheMax = 100000

// check is checkFragment through c; cached tells that the fragment had
// parsed before and was not parsed now.
// blk is one of the shared blocks of MarkdownCache.findBlocks.
func (c *FragmentCache) check(d *expand.Doc, blk *markdown.Block) (err *diag.Error, cached bool) {
	if c == nil {
		return checkFragment(d, *blk), false
	}
	c.mu.Lock()
	_, ok := c.blocks[blk]
	c.mu.Unlock()
	if ok {
		return nil, true
	}
	src := strings.Join(blk.Lines, "\n")
	c.mu.Lock()
	_, ok = c.texts[src]
	c.mu.Unlock()
	if !ok {
		if err := checkFragment(d, *blk); err != nil {
			return err, false
		}
	}
	c.mu.Lock()
	if c.texts == nil || len(c.texts) >= fragmentCacheMax || len(c.blocks) >= fragmentCacheMax {
		c.texts = map[string]struct{}{}
		c.blocks = map[*markdown.Block]struct{}{}
	}
	c.texts[src] = struct{}{}
	c.blocks[blk] = struct{}{}
	c.mu.Unlock()
	return nil, ok
}
