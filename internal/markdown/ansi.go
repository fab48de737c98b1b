package markdown

import "regexp"

// ansiEscape matches the terminal escape sequences programs print for
// colour and cursor movement (ECMA-48): CSI sequences (ESC [ or the C1
// byte U+009B, parameters, intermediates, a final byte: "\x1b[1;31m"),
// OSC strings (ESC ], ended by BEL or ESC \: hyperlinks and window
// titles), the other string controls (ESC P, X, ^, _ up to ESC \), and
// the short escapes: ESC, intermediate bytes 0x20 to 0x2F, one final byte
// 0x30 to 0x7E ("\x1b7", "\x1b(B").
var ansiEscape = regexp.MustCompile("(?:\x1b\\[|\u009b)[0-?]*[ -/]*[@-~]" +
	"|\x1b\\][^\x07\x1b]*(?:\x07|\x1b\\\\)?" +
	"|\x1b[PX^_][^\x1b]*(?:\x1b\\\\)?" +
	"|\x1b[ -/]*[0-~]|\x1b")

// StripANSI removes terminal escape sequences from a program's output
// (see ansiEscape), so that a transcript compares, blesses and shows the
// text a reader sees, and no escape reaches a page or a chapter. A lone
// ESC is removed too.
func StripANSI(s string) string {
	if !containsEscape(s) {
		return s
	}
	return ansiEscape.ReplaceAllString(s, "")
}

func containsEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b || s[i] == 0xc2 && i+1 < len(s) && s[i+1] == 0x9b {
			return true
		}
	}
	return false
}
