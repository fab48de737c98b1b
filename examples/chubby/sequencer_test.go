package chubby

import (
	"errors"
	"testing"
)

// A sequencer's text form reads back to the same sequencer, and bad text is
// refused with ErrBadArgument rather than read as something else.
func FuzzParseSequencer(f *testing.F) {
	for _, s := range []string{"/ls/cell/doc:exclusive:33", "a:b:shared:0", ":exclusive:1", "x:exclusive:", "x:owner:1", "x:shared:18446744073709551616", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		seq, err := ParseSequencer(text)
		if err != nil {
			if !errors.Is(err, ErrBadArgument) {
				t.Fatalf("ParseSequencer(%q): %v, want ErrBadArgument", text, err)
			}
			return
		}
		again, err := ParseSequencer(seq.String())
		if err != nil || again != seq {
			t.Fatalf("round trip of %q: %v, %v; want %v", text, again, err, seq)
		}
	})
}

func TestSequencerString(t *testing.T) {
	seq := Sequencer{Lock: Lock, Mode: Exclusive, Generation: 33}
	if got := seq.String(); got != "/ls/cell/doc:exclusive:33" {
		t.Fatalf("String() = %q", got)
	}
}
