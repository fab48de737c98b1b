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
	if err := writeFigure(&out, string(golden), 1); err != nil {
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

// TestFigureDrawsTheClaimRace converts the golden transcript's third scene
// and checks that the figure shows the race in order: C and D both read
// epochs up to 9, C's claim of epoch 10 lands, D's is a 204 duplicate, D
// reads the stream and finds the claim is not its own, D re-claims at 11,
// which closes epoch 10, and C's next append is refused with 403, which is
// where the figure ends. B, fenced in the same scene, is not drawn, and
// neither is D's commit after the race.
//
// Reference: chapter "Owning a database through its stream", section "The claim".
func TestFigureDrawsTheClaimRace(t *testing.T) {
	golden, err := os.ReadFile("testdata/takeover.golden")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := writeFigure(&out, string(golden), 3); err != nil {
		t.Fatal(err)
	}
	fig := out.String()
	order := []string{
		"shape: sequence_diagram\nC: \"process C\"\nstream: \"stream orders\\nproducer id orders-db\"\nD: \"process D\"\n",
		`stream -> C: "takes 45 commits, epochs up to 9"`,
		`stream -> D: "takes 45 commits, epochs up to 9"`,
		`C -> stream: "claim epoch 10 seq 0"`,
		`stream -> C: "200 applied, closed epoch 9 at seq 1"`,
		`D -> stream: "claim epoch 10 seq 0"`,
		`stream -> D: "204 duplicate"`,
		`D -> stream: "reads the stream"`,
		`stream -> D: "the claim of epoch 10 there is not its own"`,
		`D -> D: "race lost"`,
		`D -> stream: "claim epoch 11 seq 0"`,
		`stream -> D: "200 applied, closed epoch 10 at seq 0"`,
		`C -> stream: "append epoch 10 seq 1"`,
		`stream -> C: "403 epoch-closed, current epoch 11"`,
		`C -> C: "Synced: fenced=true; fenced by D's re-claim\norders:\n`,
	}
	at := 0
	for _, want := range order {
		i := strings.Index(fig[at:], want)
		if i < 0 {
			t.Fatalf("figure lacks %q after offset %d:\n%s", want, at, fig)
		}
		at += i + len(want)
	}
	if strings.Contains(fig, "\nB") || strings.Contains(fig, "epoch 11 seq 1") {
		t.Errorf("figure goes on past C's fence:\n%s", fig)
	}
	if err := writeFigure(&bytes.Buffer{}, string(golden), 2); err == nil {
		t.Error("drew scene 2, in which nobody is fenced")
	}
	if err := writeFigure(&bytes.Buffer{}, string(golden), 4); err == nil {
		t.Error("drew scene 4 of a transcript with three")
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
		if err := writeFigure(&bytes.Buffer{}, tr, 1); err == nil {
			t.Errorf("drew %q", tr)
		}
	}
}
