package main

import (
	"fmt"
	"io"
	"strings"
)

// The -figure flag draws each walk as a box with a grid of two columns:
// the commit, and what the walk decided for it. A commit that landed or was
// taken is filled pale green, one resent pale yellow, one discarded pale red
// (all from the site's figure palette).

var fills = map[string]string{"landed": "#d3f0d8", "taken": "#d3f0d8", "resent": "#fbf1c2", "discarded": "#fbd5d5"}

func writeFigure(w io.Writer, walks []walk) error {
	fmt.Fprintln(w, "grid-columns: 1")
	for i, wk := range walks {
		fmt.Fprintf(w, "walk%d: %s {\n", i+1, quote(fmt.Sprintf("%s:\n%s reopens and claims epoch %d", wk.Title, wk.Who, wk.Epoch)))
		fmt.Fprintf(w, "  grid-rows: %d\n  grid-columns: 2\n  grid-gap: 12\n", 1+len(wk.Rows))
		fmt.Fprintf(w, "  h1: %s {shape: text}\n  h2: %s {shape: text}\n", quote("commit"), quote("the walk decides"))
		for n, r := range wk.Rows {
			fill, ok := fills[r.Fate]
			if !ok {
				return fmt.Errorf("%s: commit %d has no fate the figure knows (%q)", wk.Title, r.Commit.Index, r.Fate)
			}
			fmt.Fprintf(w, "  c%d: %s\n", n+1, quote(fmt.Sprintf("commit %d by %s\n%s=%s", r.Commit.Index, r.Commit.Writer, r.Commit.Key, r.Commit.Value)))
			fmt.Fprintf(w, "  f%d: %s {style.fill: %q}\n", n+1, quote(wrap(r.text(wk), 22)), fill)
		}
		fmt.Fprintln(w, "}")
	}
	return nil
}

// wrap breaks text after a colon and where a line would pass width bytes,
// so that the figure stays narrow enough for a phone.
func wrap(text string, width int) string {
	var lines []string
	for _, part := range strings.SplitAfter(text, ": ") {
		line := ""
		for _, word := range strings.Fields(part) {
			if line != "" && len(line)+1+len(word) > width {
				lines = append(lines, line)
				line = ""
			}
			if line != "" {
				line += " "
			}
			line += word
		}
		if line != "" {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "\n")
}

// quote returns s as a D2 double-quoted string (a line break as \n).
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}
