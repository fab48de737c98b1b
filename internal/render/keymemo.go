package render

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"sync"
	"unsafe"

	"github.com/ownership-book/ownership/internal/expand"
)

// docSums remembers, per chapter path, the hash of a Doc's own part of its
// cache key (docSum: path, titles, Markdown, origins), found by the identity
// of the Doc's Markdown and Origins: an expand.Cache hands out the same
// slices while a chapter is unchanged, so a rebuild hashes only the
// chapters that changed rather than every chapter's text. The entry holds
// the slices, so their memory cannot be reused for other content while it
// is remembered; Docs are not modified once expanded (expand.Cache).
type docSums struct {
	mu      sync.Mutex
	entries map[string]docSumEntry
}

type docSumEntry struct {
	title    string // the chapter's title in SUMMARY.md
	docTitle string // its {{#title}} (expand.Doc.Title)
	md       []byte
	origins  []expand.Origin
	sum      [sha256.Size]byte
}

// sameSlice reports whether a and b are the same slice (same array, same
// length).
func sameSlice[T any](a, b []T) bool {
	return len(a) == len(b) && unsafe.SliceData(a) == unsafe.SliceData(b)
}

// docSum returns the hash of what the page of d is made from in d itself,
// from m when it has it (a nil m computes it).
func (m *docSums) docSum(d *expand.Doc) [sha256.Size]byte {
	if m != nil {
		m.mu.Lock()
		e, ok := m.entries[d.Chapter.Path]
		m.mu.Unlock()
		if ok && e.title == d.Chapter.Title && e.docTitle == d.Title && sameSlice(e.md, d.Markdown) && sameSlice(e.origins, d.Origins) {
			return e.sum
		}
	}
	h := sha256.New()
	fmt.Fprintf(h, "render v4\x00%s\x00%s\x00%s\x00%d\x00", d.Chapter.Path, d.Chapter.Title, d.Title, len(d.Markdown))
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
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	if m != nil {
		m.mu.Lock()
		if m.entries == nil {
			m.entries = map[string]docSumEntry{}
		}
		m.entries[d.Chapter.Path] = docSumEntry{title: d.Chapter.Title, docTitle: d.Title, md: d.Markdown, origins: d.Origins, sum: sum}
		m.mu.Unlock()
	}
	return sum
}
