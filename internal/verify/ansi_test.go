package verify

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ownership-book/ownership/internal/markdown"
)

// TestTranscriptOutputWithoutEscapes checks that the actual output a
// transcript is compared with (and blessed from) has no escapes, and that
// a console block holding one in its expected text is refused at that
// line.
func TestTranscriptOutputWithoutEscapes(t *testing.T) {
	got := outputLines("\x1b[32mok\x1b[0m  \n\x1b[1mepoch 2\x1b[0m\n")
	if !slices.Equal(got, []string{"ok", "epoch 2"}) {
		t.Errorf("outputLines = %q", got)
	}
	if ok, _ := markdown.Compare([]string{"ok", "epoch 2"}, got); !ok {
		t.Error("colourless transcript does not match coloured output")
	}
	if d := clipOutput("\x1b[31mpanic\x1b[0m\n"); d != "panic" {
		t.Errorf("clipOutput = %q", d)
	}
	_, err := markdown.ParseTranscript([]string{"$ go run ./x", "ok", "\x1b[1mepoch 2\x1b[0m"})
	var te *markdown.TranscriptError
	if !errors.As(err, &te) || te.Line != 2 || !strings.Contains(te.Msg, "terminal escape sequence") {
		t.Errorf("ParseTranscript = %v, want a refusal at line index 2", err)
	}
}
