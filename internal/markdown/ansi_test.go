package markdown

import (
	"testing"
)

// TestStripANSI checks that colour (SGR), cursor, OSC hyperlink and
// two-byte escapes are removed from a program's output and the text
// around them kept.
func TestStripANSI(t *testing.T) {
	for in, want := range map[string]string{
		"\x1b[1;31mFAIL\x1b[0m epoch 3":                           "FAIL epoch 3",
		"\x1b[2K\rprogress\x1b[1A":                                "\rprogress",
		"\x1b]8;;https://example.org\x07link\x1b]8;;\x07 done":    "link done",
		"\x1b]0;title\x1b\\text":                                  "text",
		"\x1b7saved\x1b8 \x1b(Bascii":                             "saved ascii",
		"\u009b32mgreen\u009b0m":                                  "green",
		"plain ε text":                                            "plain ε text",
		"lone \x1b":                                               "lone ",
		"\x1b[38;5;208mholder\x1b[m=\x1b[38;2;1;2;3mnode-1\x1b[m": "holder=node-1",
	} {
		if got := StripANSI(in); got != want {
			t.Errorf("StripANSI(%q) = %q, want %q", in, got, want)
		}
	}
}
