package verify

import (
	"strings"
	"sync"

	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/expand"
)

// parsedFragments remembers the text of every Go fragment that parsed
// (checkFragment), so that a rebuild (bookgen serve) does not parse again
// the fragments of the chapters that did not change: at 4,000 fragments in
// a 1,000-chapter book that is tens of milliseconds on the path from a
// save to the reload. Whether a fragment parses depends on its text alone;
// a fragment that did not parse is not remembered (its error names the
// chapter's file and line, so it is parsed again on every build). The set
// is emptied when it holds more than parsedFragmentsMax texts.
var parsedFragments = struct {
	sync.Mutex
	texts map[string]struct{}
}{texts: map[string]struct{}{}}

const parsedFragmentsMax = 100000

// checkFragmentCached is checkFragment through parsedFragments; cached
// tells that the fragment had parsed before and was not parsed now.
func checkFragmentCached(d *expand.Doc, blk Block) (err *diag.Error, cached bool) {
	src := strings.Join(blk.Lines, "\n")
	parsedFragments.Lock()
	_, ok := parsedFragments.texts[src]
	parsedFragments.Unlock()
	if ok {
		return nil, true
	}
	if err := checkFragment(d, blk); err != nil {
		return err, false
	}
	parsedFragments.Lock()
	if len(parsedFragments.texts) >= parsedFragmentsMax {
		clear(parsedFragments.texts)
	}
	parsedFragments.texts[src] = struct{}{}
	parsedFragments.Unlock()
	return nil, false
}
