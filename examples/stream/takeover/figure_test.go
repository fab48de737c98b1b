package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestFigureDrawsTheTranscript converts the golden transcript (what the
// program prints, TestTakeoverTranscript checks) and checks that the
// figure shows the seed's takeover in order: A's append applied, B's claim
// closing epoch 7 at seq 41, B's append under epoch 8, A's next append
// refused with 403 epoch-closed, and A's reset as the last message.
//
// Reference: chapter "Owning a database through its stream", section "The claim".
func TestFigureDrawsTheTranscript(t *testing.T) {
	golden, err := os.ReadFile("testdata/takeover.golden")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := writeFigure(&out, string(golden)); err != nil {
		t.Fatal(err)
	}
	fig := out.String()
	order := []string{
		"shape: sequence_diagram\nA: \"process A\"\nstream: \"stream orders\\nproducer id orders-db\"\nB: \"process B\"\n",
		`A -> stream: "append epoch 7 seq 41"`,
		`stream -> A: "200 applied"`,
		`B -> stream: "claim epoch 8 seq 0"`,
		`stream -> B: "200 applied, closed epoch 7 at seq 41"`,
		`B -> stream: "append epoch 8 seq 1"`,
		`A -> stream: "append epoch 7 seq 42"`,
		`stream -> A: "403 epoch-closed, current epoch 8"`,
		`A -> A: "reset; the listener runs with\norders:\ndatabase reset (fenced):`,
	}
	at := 0
	for _, want := range order {
		i := strings.Index(fig[at:], want)
		if i < 0 {
			t.Fatalf("figure lacks %q after offset %d:\n%s", want, at, fig)
		}
		at += i + len(want)
	}
	if strings.Contains(fig, "Synced") {
		t.Errorf("figure goes on past the reset:\n%s", fig)
	}
}

// TestFigureRefusesWhatItCannotDraw checks that a transcript line the
// figure has no rule for, or a run in which nobody was reset, is an error
// rather than a figure that leaves something out.
func TestFigureRefusesWhatItCannotDraw(t *testing.T) {
	for _, tr := range []string{
		"A  append epoch 7 seq 41 -> 200 applied\nsomething else\nA  reset\n",
		"A  append epoch 7 seq 41 -> 200 applied\n",
	} {
		if err := writeFigure(&bytes.Buffer{}, tr); err == nil {
			t.Errorf("drew %q", tr)
		}
	}
}
