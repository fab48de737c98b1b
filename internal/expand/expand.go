// Package expand replaces mdBook include directives ({{#include path}},
// {{#include path:anchor}}, {{#include path:N:M}} ...) in a chapter with the
// text they name, and keeps, for every output line, the file and line it came
// from.
//
// CONTRACT (shared by the bookgen stages; implementation in progress).
package expand

import (
	"errors"

	"github.com/ownership-book/ownership/internal/book"
)

// Origin is where one line of expanded Markdown came from.
type Origin struct {
	File string // repository-relative slash path ("book/ownership.md", "examples/ownership/state.go")
	Line int    // 1-based line in File
}

// Doc is a chapter with its includes expanded.
type Doc struct {
	Chapter  *book.Item
	Markdown []byte
	// Origins[i] is the origin of line i+1 of Markdown.
	Origins []Origin
	// Deps lists the repository-relative files included, sorted, without
	// duplicates (the chapter file itself is not in it).
	Deps []string
}

// Expand expands ch's includes. Errors are *diag.Error values naming the
// chapter file and the line of the directive.
func Expand(b *book.Book, ch *book.Item) (*Doc, error) {
	return nil, errors.New("expand.Expand: not implemented yet")
}
