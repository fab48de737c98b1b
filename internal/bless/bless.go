// Package bless writes the edits of bookgen test --bless: each replaces a
// transcript's expected output, in the chapter or included file it comes
// from, with what the command printed. verify decides the edits and
// writes nothing; the build, which owns the book's files between builds,
// applies them with Apply and loads the chapters again (the same idea as
// Go's golden files and -update).
package bless

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ownership-book/ownership/internal/atomicfile"
	"github.com/ownership-book/ownership/internal/diag"
)

// Edit replaces the expected output of one transcript command (a console
// block's "$ " line, or a figure block's run=) in the file it comes from.
type Edit struct {
	File string // repository-relative
	// From and To are the 1-based inclusive lines replaced; To == From-1
	// inserts before From. Line From-1 is the command's "$ " line.
	From, To int
	// Lines is the output as printed; Apply puts before each line
	// what precedes "$" on the command line in the file (a list item's
	// indentation, "> "), which is not always what precedes it in the
	// expanded Markdown (an included transcript gets its container's
	// indentation there).
	Lines   []string
	Command string
}

// blessedLines returns e.Lines as they are written into the file whose
// lines are lines: after the command line's prefix and with its line end
// (a CRLF file stays CRLF). It reports false when line e.From-1 is not a
// command line.
func blessedLines(lines []string, e Edit) ([]string, bool) {
	if e.From < 2 || e.From-2 >= len(lines) {
		return nil, false
	}
	cmd := lines[e.From-2]
	cr := ""
	if strings.HasSuffix(cmd, "\r") {
		cmd, cr = strings.TrimSuffix(cmd, "\r"), "\r"
	}
	// The command line is a console block's "$ " line, or the opening
	// fence of a figure block with run= (whose body is the output).
	i := strings.Index(cmd, "$")
	fence := fenceAt(cmd)
	if fence >= 0 {
		i = fence
	}
	if i < 0 {
		return nil, false
	}
	prefix := cmd[:i]
	if fence >= 0 {
		// "- ```d2" in a list item: the body is indented, not marked.
		prefix = strings.Map(func(r rune) rune {
			if r == '>' || r == ' ' || r == '\t' {
				return r
			}
			return ' '
		}, prefix)
	}
	out := make([]string, len(e.Lines))
	for k, a := range e.Lines {
		if a == "" {
			out[k] = strings.TrimRight(prefix, " \t") + cr
		} else {
			out[k] = prefix + a + cr
		}
	}
	return out, true
}

// Apply writes the edits, each file once and atomically, keeping the
// line ending (LF or CRLF) of each edit's command line, and returns
// a description of each edit ("book/ch.md:13: go run ./x (2 lines -> 3
// lines)") and the problems met, each at its file and line; an edit whose
// command line has moved (the file changed since verification) is refused
// and its file left as it was.
func Apply(root string, edits []Edit) ([]string, []*diag.Error) {
	byFile := map[string][]Edit{}
	var files []string
	seen := map[string]bool{}
	for _, e := range edits {
		// A transcript included by two chapters yields the same edit twice.
		id := fmt.Sprintf("%s\x00%d\x00%d\x00%s", e.File, e.From, e.To, strings.Join(e.Lines, "\n"))
		if seen[id] {
			continue
		}
		seen[id] = true
		if _, ok := byFile[e.File]; !ok {
			files = append(files, e.File)
		}
		byFile[e.File] = append(byFile[e.File], e)
	}
	sort.Strings(files)
	var done []string
	var errs []*diag.Error
	for _, f := range files {
		es := byFile[f]
		sort.Slice(es, func(i, j int) bool { return es[i].From > es[j].From })
		name := filepath.Join(root, filepath.FromSlash(f))
		fi, err := os.Stat(name)
		if err != nil {
			errs = append(errs, diag.Errorf(f, 0, "bless: %v", err))
			continue
		}
		data, err := os.ReadFile(name)
		if err != nil {
			errs = append(errs, diag.Errorf(f, 0, "bless: %v", err))
			continue
		}
		lines := strings.Split(string(data), "\n")
		ok := true
		for i, e := range es {
			if e.From < 1 || e.To > len(lines) || (i > 0 && e.To >= es[i-1].From) {
				errs = append(errs, diag.Errorf(f, e.From, "bless: overlapping or stale edit for %q", e.Command))
				ok = false
				break
			}
			repl, good := blessedLines(lines, e)
			if !good {
				errs = append(errs, diag.Errorf(f, e.From, "bless: stale edit for %q: line %d is no longer its command line", e.Command, e.From-1))
				ok = false
				break
			}
			lines = append(lines[:e.From-1], append(repl, lines[e.To:]...)...)
		}
		if !ok {
			continue
		}
		if err := atomicfile.Write(name, []byte(strings.Join(lines, "\n")), fi.Mode().Perm()); err != nil {
			errs = append(errs, diag.Errorf(f, 0, "bless: %v", err))
			continue
		}
		for i := len(es) - 1; i >= 0; i-- {
			e := es[i]
			done = append(done, fmt.Sprintf("%s:%d: %s (%d lines -> %d lines)", f, e.From, e.Command, e.To-e.From+1, len(e.Lines)))
		}
	}
	return done, errs
}

// fenceAt returns the index of the ``` or ~~~ that opens a fenced block on
// line l (after a container's indentation, "> " or list marker such as
// "- " or "2. "), -1 when l opens none.
func fenceAt(l string) int {
	t := strings.TrimLeft(l, " \t>-*+0123456789.)")
	if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
		return len(l) - len(t)
	}
	return -1
}
