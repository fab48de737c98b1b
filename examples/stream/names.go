package stream

import (
	"fmt"
	"unicode/utf8"
)

// MaxNameBytes is the longest stream name accepted, in bytes.
const MaxNameBytes = 1024

// DefaultMaxProducerIDBytes is the longest Producer-Id a server accepts
// unless configured otherwise, in bytes. Every producer id a stream has seen
// stays in its state (and in every snapshot) until the producer expires, so
// the cap bounds what one request can make the stream keep.
const DefaultMaxProducerIDBytes = 256

// CheckName reports whether s can be a stream name or a producer id (what
// names the kind in the error) of at most max bytes. It must be non-empty,
// valid UTF-8 and free of control characters (U+0000 to U+001F, U+007F to
// U+009F). The log encodes commands as JSON, which carries only valid
// UTF-8: other bytes would be replaced by U+FFFD, so two different names
// would become one (PROTOCOL.md leaves names to the server; this server
// refuses what it cannot keep exactly). A control character cannot be
// written back in a header (Location, Stream-Forked-From, Producer-Id).
func CheckName(what, s string, max int) error {
	switch {
	case s == "":
		return fmt.Errorf("%s is empty", what)
	case len(s) > max:
		return fmt.Errorf("%s is %d bytes long, over the limit of %d", what, len(s), max)
	case !utf8.ValidString(s):
		return fmt.Errorf("%s %q is not valid UTF-8", what, s)
	}
	for _, r := range s {
		if r < 0x20 || r >= 0x7f && r < 0xa0 {
			return fmt.Errorf("%s %q holds the control character %U", what, s, r)
		}
	}
	return nil
}
