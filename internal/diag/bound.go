package diag

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits on what one problem prints, so that a program that printed one
// enormous line or millions of lines before it failed or timed out gives
// a readable report (in the terminal and in bookgen serve's error overlay)
// rather than megabytes. What is cut is counted in the text that replaces
// it.
const (
	// MaxLineBytes is the longest line of a message or detail, in bytes.
	MaxLineBytes = 1000
	// MaxDetailLines is how many lines of a detail are printed.
	MaxDetailLines = 200
)

// clipLine cuts s to MaxLineBytes at a UTF-8 boundary, saying how many
// bytes were cut: "xxxx… (2411520 more bytes on this line)".
func clipLine(s string) string {
	if len(s) <= MaxLineBytes {
		return s
	}
	n := MaxLineBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return fmt.Sprintf("%s… (%d more bytes on this line)", s[:n], len(s)-n)
}

// detailLines returns the lines of a detail to print: at most
// MaxDetailLines, each clipped, with a last line saying how many were left
// out.
func detailLines(detail string) []string {
	lines := strings.Split(strings.TrimRight(detail, "\n"), "\n")
	cut := 0
	if len(lines) > MaxDetailLines {
		cut = len(lines) - MaxDetailLines
		lines = lines[:MaxDetailLines]
	}
	out := make([]string, 0, len(lines)+1)
	for _, l := range lines {
		out = append(out, clipLine(l))
	}
	if cut > 0 {
		out = append(out, fmt.Sprintf("… (%d more lines)", cut))
	}
	return out
}
