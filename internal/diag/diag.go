// Package diag holds the error type every bookgen stage reports with: a
// position in a source file (repository-relative path and 1-based line) and a
// message, with an optional multi-line detail such as a transcript diff.
package diag

import (
	"errors"
	"fmt"
	"strings"
)

// Error is one problem found in the book's sources.
//
// File is a slash-separated path relative to the repository root
// (for example "book/ownership.md"); Line is 1-based, 0 when the problem is
// about the file as a whole. Detail, when set, is printed after the message,
// indented, and is meant for humans (a line diff, a compiler's output).
type Error struct {
	File   string
	Line   int
	Msg    string
	Detail string
}

// Error formats the problem as "file:line: msg" followed by the detail.
// Long lines are cut to MaxLineBytes and the detail to MaxDetailLines
// lines, saying how much was cut (see bound.go).
func (e *Error) Error() string {
	var b strings.Builder
	msg := clipLine(e.Msg)
	switch {
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d: %s", e.File, e.Line, msg)
	case e.File != "":
		fmt.Fprintf(&b, "%s: %s", e.File, msg)
	default:
		b.WriteString(msg)
	}
	if e.Detail != "" {
		for _, l := range detailLines(e.Detail) {
			b.WriteString("\n    ")
			b.WriteString(l)
		}
	}
	return b.String()
}

// Errorf returns an *Error at file:line with a formatted message.
func Errorf(file string, line int, format string, args ...any) *Error {
	return &Error{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// List is several problems reported together; a stage that can go on after a
// problem (verification of independent chapters) collects them in a List.
type List []*Error

// Error joins the problems, one per line.
func (l List) Error() string {
	parts := make([]string, len(l))
	for i, e := range l {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

// Err returns nil for an empty list and the list itself otherwise.
func (l List) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// All returns every *Error inside err: err itself, the members of a List, or
// the errors found by errors.As through wrapping. An error of another type is
// returned as an Error with only a message.
func All(err error) []*Error {
	if err == nil {
		return nil
	}
	var l List
	if errors.As(err, &l) {
		return l
	}
	var e *Error
	if errors.As(err, &e) {
		return []*Error{e}
	}
	return []*Error{{Msg: err.Error()}}
}
