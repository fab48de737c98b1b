package verify

import (
	"hash/maphash"
	"sync"
)

// claimLinkCache remembers scanClaimLinks of the chapters it has seen, so
// that a rebuild after an edit (bookgen serve) parses for claim links only
// the chapters whose Markdown changed: parsing every chapter of a
// 1,000-chapter book with goldmark costs tens of milliseconds on the path
// from a save to the reload. An entry is keyed by a hash of the chapter's
// path and Markdown and checked against both. It holds what the Markdown
// alone tells (the links, their lines and text); the Go files the links
// name and the origins of the lines are looked at again on every build
// (FindClaims), so an edit to a test file is seen. The cache is emptied
// when it holds more than blockCacheMax chapters.
var claimLinkCache = struct {
	sync.Mutex
	seed    maphash.Seed
	entries map[uint64]claimLinkEntry
	same    map[sameClaimKey][]claimLink // see sameBytes
}{seed: maphash.MakeSeed(), entries: map[uint64]claimLinkEntry{}, same: map[sameClaimKey][]claimLink{}}

type sameClaimKey struct {
	chFile string
	md     sameBytes
}

type claimLinkEntry struct {
	chFile string
	md     string
	links  []claimLink
}

// claimLinksCached is scanClaimLinks through claimLinkCache. The links
// returned are shared: callers must not modify them.
func claimLinksCached(chFile string, md []byte) []claimLink {
	id, byID := sameOf(md)
	sk := sameClaimKey{chFile, id}
	if byID {
		claimLinkCache.Lock()
		links, ok := claimLinkCache.same[sk]
		claimLinkCache.Unlock()
		if ok {
			return links
		}
	}
	var h maphash.Hash
	h.SetSeed(claimLinkCache.seed)
	h.WriteString(chFile)
	h.WriteByte(0)
	h.Write(md)
	k := h.Sum64()
	claimLinkCache.Lock()
	e, ok := claimLinkCache.entries[k]
	claimLinkCache.Unlock()
	links := e.links
	if !ok || e.chFile != chFile || e.md != string(md) {
		links = scanClaimLinks(chFile, md)
	}
	claimLinkCache.Lock()
	if len(claimLinkCache.entries) >= blockCacheMax || len(claimLinkCache.same) >= blockCacheMax {
		clear(claimLinkCache.entries)
		clear(claimLinkCache.same)
	}
	claimLinkCache.entries[k] = claimLinkEntry{chFile: chFile, md: string(md), links: links}
	if byID {
		claimLinkCache.same[sk] = links
	}
	claimLinkCache.Unlock()
	return links
}
