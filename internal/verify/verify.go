// Package verify checks that what a book shows is true: every Go package under
// examples/ passes go vet and go test, every console transcript's commands
// print what the chapter says they print, and every go block compiles or
// parses. Results are cached under a key of everything that can change them.
//
// CONTRACT (shared by the bookgen stages; implementation in progress).
package verify

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/expand"
)

// Options tune a verification.
type Options struct {
	// Bless rewrites the expected output of every transcript from a real run
	// instead of failing on a difference.
	Bless bool
	// CacheDir holds cached results; "" means Root/.bookgen-cache.
	CacheDir string
	// Timeout is the default timeout of one command; 0 means the book's
	// configured timeout, or 60s.
	Timeout time.Duration
	// Log receives one line per check run (nil: silent).
	Log io.Writer
}

// Check is one verification that was run or found in the cache.
type Check struct {
	Kind    string // "vet", "test", "transcript", "compile", "parse"
	Subject string // package path, or "book/ch.md:12"
	Cached  bool
	Elapsed time.Duration
}

// Report is what a verification did.
type Report struct {
	Checks  []Check
	Ran     int // checks executed now
	Cached  int // checks answered by the cache
	Ignored int // go blocks marked "ignore"
}

// Verify checks the book. A failure is returned as a diag.List naming file
// and line of every failed check; the Report is returned in both cases.
func Verify(ctx context.Context, b *book.Book, docs []*expand.Doc, opt Options) (*Report, error) {
	return &Report{}, errors.New("verify.Verify: not implemented yet")
}
