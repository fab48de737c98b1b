package main

import (
	"fmt"
	"io"
	"strings"
)

// The -figure flag draws the two runs as one D2 diagram: a box per order,
// and in each a grid whose rows are the two log entries in log order and
// whose columns are the entry and the three voters' decisions. An applied
// append is filled pale green, a refused one pale red (the site's palette
// maps both onto its light and dark themes). The cells are made from the
// same runs the transcript prints, so the two cannot differ.

// Fills for a voter's decision; the site's figure palette has both.
const (
	fillApplied = "#d3f0d8"
	fillRefused = "#fbd5d5"
)

// writeFigure prints runs as D2. It fails on a run whose voters did not all
// see the same entries, which the grid could not draw.
func writeFigure(w io.Writer, runs []run) error {
	fmt.Fprintln(w, "grid-columns: 1")
	for i, r := range runs {
		id := fmt.Sprintf("order%d", i+1)
		fmt.Fprintf(w, "%s: %s {\n", id, quote(r.Title))
		// Rows first, so that the cells fill the grid row by row.
		fmt.Fprintf(w, "  grid-rows: %d\n", 1+len(r.Entries))
		fmt.Fprintf(w, "  grid-columns: %d\n", 1+len(r.Voters))
		fmt.Fprintln(w, "  grid-gap: 12")
		fmt.Fprintln(w, `  h: "log entry" {shape: text}`)
		for _, v := range r.Voters {
			fmt.Fprintf(w, "  h%s: %s {shape: text}\n", v, quote("voter "+v))
		}
		for n, e := range r.Entries {
			if len(e.Decisions) != len(r.Voters) {
				return fmt.Errorf("%s: entry %d has %d decisions for %d voters", r.Title, n+1, len(e.Decisions), len(r.Voters))
			}
			fmt.Fprintf(w, "  e%d: %s\n", n+1, quote(fmt.Sprintf("%d. %s\n%s", n+1, e.Writer, e.Request)))
			for v, d := range e.Decisions {
				fill := fillApplied
				if strings.HasPrefix(d, "refused") {
					fill = fillRefused
				}
				fmt.Fprintf(w, "  e%d%s: %s {style.fill: %q}\n", n+1, r.Voters[v], quote(breakDecision(d)), fill)
			}
		}
		fmt.Fprintln(w, "}")
	}
	return nil
}

// breakDecision puts a decision's explanation on a second line, so that
// the grid's columns stay narrow.
func breakDecision(d string) string {
	if head, tail, ok := strings.Cut(d, "; "); ok {
		return head + "\n" + tail
	}
	return d
}

// quote returns s as a D2 double-quoted string (a line break as \n).
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}
