package expand

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// This file parses what a chapter writes: the {{#include ...}} directives
// of a line (ScanLine, ParseDirective) and the lines a directive selects
// from the file it names (Directive.selectLines: ranges and anchors, with
// the typos mdBook tolerates). expand.go reads files and puts the selected
// lines in place.

// Directive is one parsed {{#include ...}}.
type Directive struct {
	// Args is the text after "#include", trimmed ("file.go:state").
	Args string
	// Path is the file, relative to the including file's directory.
	Path string
	// Anchor is the anchor name, "" for a line range or the whole file.
	Anchor string
	// Start and End are the 1-based inclusive line range; 0 means "from
	// the first line" (Start) or "to the last line" (End).
	Start, End int
	// Kind is the directive's name: "include", "rustdoc_include" (the
	// named lines as they are, the others with rustdoc's "# " so that a
	// rust block hides them), "playground" (the file in a rust code block;
	// Props are its info string attributes) or "title" (Title replaces the
	// page's title; nothing is included).
	Kind  string
	Props []string
	Title string
	// Unsupported is the name of a directive bookgen does not implement
	// ("template", mdbook-template's); the other fields are then empty.
	Unsupported string
}

// mdBookDirectives are the directive names that are mdBook's (or a common
// preprocessor's) and that bookgen does not implement: an error, rather
// than text that silently reaches the page.
var mdBookDirectives = map[string]bool{"template": true}

// ParseDirective parses the arguments of {{#include ARGS}}: a path, then
// optionally ":anchor", ":N", ":N:M", ":N:" or "::M" (mdBook's forms).
// The path is everything before the first ':'.
func ParseDirective(args string) (Directive, error) {
	d := Directive{Args: args}
	if args == "" {
		return d, errors.New("{{#include}} needs a path")
	}
	if i := strings.IndexAny(args, " \t"); i >= 0 {
		if c := strings.IndexByte(args, ':'); c >= 0 && c < i {
			return d, fmt.Errorf("{{#include %s}}: %q after the ':' contains a space; an anchor name is letters, digits, _ and - (mdBook would silently drop what follows the space)", args, args[c+1:])
		}
		return d, fmt.Errorf("{{#include %s}}: a path must not contain spaces", args)
	}
	p, spec, hasSpec := strings.Cut(args, ":")
	if p == "" {
		return d, fmt.Errorf("{{#include %s}}: empty path", args)
	}
	d.Path = p
	d.Kind = "include"
	if !hasSpec || spec == "" || spec == ":" {
		// "file", "file:" and "file::": the whole file (mdBook's
		// parse_range_or_anchor gives RangeFull for an empty start and
		// end).
		return d, nil
	}
	first, second, isRange := strings.Cut(spec, ":")
	if !isRange {
		if isNumber(first) {
			n, err := lineNumber(first, args)
			if err != nil {
				return d, err
			}
			d.Start, d.End = n, n
			return d, nil
		}
		if !anchorNameRE.MatchString(first) {
			return d, fmt.Errorf("{{#include %s}}: %q is neither a line number nor an anchor name (letters, digits, _ and -)", args, first)
		}
		d.Anchor = first
		return d, nil
	}
	if strings.Contains(second, ":") {
		return d, fmt.Errorf("{{#include %s}}: too many ':'; want path:N:M", args)
	}
	var err error
	if first != "" {
		if d.Start, err = lineNumber(first, args); err != nil {
			return d, err
		}
	}
	if second != "" {
		if d.End, err = lineNumber(second, args); err != nil {
			return d, err
		}
	}
	if d.Start > 0 && d.End > 0 && d.End < d.Start {
		return d, fmt.Errorf("{{#include %s}}: range ends (line %d) before it starts (line %d)", args, d.End, d.Start)
	}
	return d, nil
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func lineNumber(s, args string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || !isNumber(s) {
		return 0, fmt.Errorf("{{#include %s}}: %q is not a line number", args, s)
	}
	if n < 1 {
		return 0, fmt.Errorf("{{#include %s}}: line numbers start at 1", args)
	}
	return n, nil
}

var (
	// openDirectiveRE matches the start of an mdBook directive.
	openDirectiveRE = regexp.MustCompile(`^\{\{\s*#(include|rustdoc_include|playground|playpen|title|template)\b`)
	anchorNameRE    = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	anchorStartRE   = regexp.MustCompile(`ANCHOR:\s*([A-Za-z0-9_-]+)`)
	anchorEndRE     = regexp.MustCompile(`ANCHOR_END:\s*([A-Za-z0-9_-]+)`)
)

// IsAnchorLine reports whether text is an anchor marker line
// ("ANCHOR: name" or "ANCHOR_END: name" anywhere in it).
func IsAnchorLine(text string) bool {
	return anchorStartRE.MatchString(text) || anchorEndRE.MatchString(text)
}

// selectLines returns the lines of a file (all, numbered from 1) that d
// names, without anchor marker lines, and a warning for a typo mdBook
// tolerates (an anchor never closed: to the end of the file, as mdBook's
// take_anchored_lines; a range past the end: clamped, as its take_lines).
func (d Directive) selectLines(all []line, file string) ([]line, string, error) {
	var sel []line
	keep := func(ls []line) {
		for _, l := range ls {
			if !IsAnchorLine(l.text) {
				sel = append(sel, l)
			}
		}
	}
	// in marks the lines d names (before marker lines are dropped).
	in := make([]bool, len(all))
	if d.Anchor != "" {
		// A name may be opened and closed more than once: the regions
		// are joined, in file order (mdBook's rustdoc_include does so;
		// its include stops at the first ANCHOR_END, see the README's
		// differences). A region that is never closed is an error.
		open := -1
		found := false
		var names []string
		for i, l := range all {
			if m := anchorStartRE.FindStringSubmatch(l.text); m != nil {
				names = append(names, m[1])
				if m[1] == d.Anchor && open < 0 {
					open, found = i, true
				}
				continue
			}
			if m := anchorEndRE.FindStringSubmatch(l.text); m != nil && m[1] == d.Anchor && open >= 0 {
				open = -1
				continue
			}
			in[i] = open >= 0
		}
		if !found {
			known := "it has no anchors"
			if len(names) > 0 {
				known = "its anchors: " + strings.Join(names, ", ")
			}
			return nil, "", fmt.Errorf("anchor %q not found in %s (%s)", d.Anchor, file, known)
		}
		if open >= 0 {
			return d.mark(all, in), fmt.Sprintf("anchor %q opened at %s:%d has no ANCHOR_END: %s; included to the end of the file, as mdBook does", d.Anchor, file, all[open].origin.Line, d.Anchor), nil
		}
		return d.mark(all, in), "", nil
	}
	n := len(all)
	if d.Start == 0 && d.End == 0 {
		if d.Kind == "rustdoc_include" {
			for i := range in {
				in[i] = true
			}
			return d.mark(all, in), "", nil
		}
		keep(all)
		return sel, "", nil
	}
	start, end := d.Start, d.End
	if start == 0 {
		start = 1
	}
	if end == 0 {
		end = n
	}
	warning := ""
	if start > n || end > n {
		bad := start
		if start <= n {
			bad = end
		}
		what := fmt.Sprintf("included up to line %d", n)
		if start > n {
			what = "nothing included"
		}
		warning = fmt.Sprintf("line %d is past the end of %s (%d lines); %s, as mdBook clamps the range", bad, file, n, what)
		end = min(end, n)
	}
	for i := start - 1; i < end; i++ {
		in[i] = true
	}
	return d.mark(all, in), warning, nil
}

// mark returns the lines of all that in marks, without anchor marker
// lines; for rustdoc_include, every other line too, prefixed with "# " so
// that a rust code block hides it (mdBook's take_rustdoc_include_lines).
func (d Directive) mark(all []line, in []bool) []line {
	var sel []line
	for i, l := range all {
		switch {
		case IsAnchorLine(l.text):
		case in[i]:
			sel = append(sel, l)
		case d.Kind == "rustdoc_include":
			sel = append(sel, line{text: "# " + l.text, origin: l.origin})
		}
	}
	return sel
}

// Segment is a piece of one line: literal Text, or a Directive (Text is then
// the directive as written, "{{#include x}}").
type Segment struct {
	Text      string
	Directive *Directive
}

// ScanLine splits one line into literal text and directives. An escaped
// directive "\{{#name ...}}" becomes literal text without the backslash. A
// "{{" that does not start a well-formed "{{#name args}}" is literal text,
// and so is a directive of a name mdBook does not define (it may be another
// template language's). Malformed include arguments are an error, and so
// is an mdBook directive that is not closed with "}}" on its line.
func ScanLine(s string) ([]Segment, error) {
	var segs []Segment
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			segs = append(segs, Segment{Text: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], "{{")
		if j < 0 {
			lit.WriteString(s[i:])
			break
		}
		j += i
		name, args, end, ok := matchDirective(s, j)
		if !ok {
			if m := openDirectiveRE.FindStringSubmatch(s[j:]); m != nil && (j == 0 || s[j-1] != '\\') {
				// "{{#include x.go" without "}}": a typo that would
				// otherwise reach the page as text.
				return nil, fmt.Errorf("{{#%s ...: the directive is not closed with }} on its line (escape it as \\{{#%s to show it as text)", m[1], m[1])
			}
			lit.WriteString(s[i : j+2])
			i = j + 2
			continue
		}
		if j > 0 && s[j-1] == '\\' {
			lit.WriteString(s[i : j-1])
			lit.WriteString(s[j:end])
			i = end
			continue
		}
		lit.WriteString(s[i:j])
		switch {
		case args == "" && (name == "include" || name == "rustdoc_include" || name == "playground" || name == "title"):
			// "{{#include}}" names no file: mdBook's pattern needs
			// arguments, so it is text ("`{{#include}}`d files").
			lit.WriteString(s[j:end])
		case name == "include" || name == "rustdoc_include":
			d, err := ParseDirective(args)
			if err != nil {
				if name != "include" {
					err = errors.New(strings.Replace(err.Error(), "{{#include ", "{{#"+name+" ", 1))
				}
				return nil, err
			}
			d.Kind = name
			flush()
			segs = append(segs, Segment{Text: s[j:end], Directive: &d})
		case name == "playground" || name == "playpen":
			f := strings.Fields(args)
			flush()
			segs = append(segs, Segment{Text: s[j:end], Directive: &Directive{Args: args, Path: f[0], Props: f[1:], Kind: "playground"}})
		case name == "title":
			flush()
			segs = append(segs, Segment{Text: s[j:end], Directive: &Directive{Args: args, Title: args, Kind: "title"}})
		case mdBookDirectives[name]:
			flush()
			segs = append(segs, Segment{Text: s[j:end], Directive: &Directive{Args: args, Unsupported: name}})
		default:
			lit.WriteString(s[j:end])
		}
		i = end
	}
	flush()
	return segs, nil
}

// matchDirective matches "{{ #name args }}" at s[i:] (mdBook's
// `\{\{\s*#([a-zA-Z0-9_]+)\s*([^}]*)\}\}`), returning the name, the trimmed
// args and the index just past "}}".
func matchDirective(s string, i int) (name, args string, end int, ok bool) {
	j := i + 2
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	if j >= len(s) || s[j] != '#' {
		return "", "", 0, false
	}
	j++
	k := j
	for k < len(s) && (s[k] == '_' || s[k] >= 'a' && s[k] <= 'z' || s[k] >= 'A' && s[k] <= 'Z' || s[k] >= '0' && s[k] <= '9') {
		k++
	}
	if k == j {
		return "", "", 0, false
	}
	name = s[j:k]
	rest := s[k:]
	c := strings.Index(rest, "}}")
	if c < 0 || strings.Contains(rest[:c], "}") {
		return "", "", 0, false
	}
	if c > 0 && rest[0] != ' ' && rest[0] != '\t' {
		// "{{#includex}}" is a different name, not include + "x".
		return "", "", 0, false
	}
	return name, strings.TrimSpace(rest[:c]), k + c + 2, true
}
