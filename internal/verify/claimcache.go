package verify

import "github.com/ownership-book/ownership/internal/markdown"

// claimLinkCache remembers markdown.ClaimLinks of the chapters it has seen, so
// that a rebuild after an edit (bookgen serve) parses for claim links only
// the chapters whose Markdown changed: parsing every chapter of a
// 1,000-chapter book with goldmark costs tens of milliseconds on the path
// from a save to the reload (see mdCache; the key is the chapter's file).
// It holds what the Markdown alone tells (the links, their lines and
// text); the Go files the links name and the origins of the lines are
// looked at again on every build (FindClaims), so an edit to a test file
// is seen.
var claimLinkCache = newMDCache[[]markdown.ClaimLink]()

// claimLinksCached is markdown.ClaimLinks through claimLinkCache. The links
// returned are shared: callers must not modify them.
func claimLinksCached(chFile string, md []byte) []markdown.ClaimLink {
	return claimLinkCache.get(chFile, md, markdown.ClaimLinks)
}
