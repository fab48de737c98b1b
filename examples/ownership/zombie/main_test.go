package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestFenceRefusesTheZombie checks the story both ways: without a fence the
// paused owner's late write (epoch 41) overwrites the new owner's (epoch
// 42), the negative control; with storage that keeps the highest epoch it
// has seen, the late write is refused and the new owner's value stands.
//
// Reference: Martin Kleppmann, "How to do distributed locking" (2016);
// chapter "One owner at a time", section "The epoch moves first".
func TestFenceRefusesTheZombie(t *testing.T) {
	runs, err := both()
	if err != nil {
		t.Fatal(err)
	}
	last := func(r run) step { return r.steps[len(r.steps)-1] }
	late := func(r run) step { return r.steps[r.tail] }
	if got := late(runs[0]).answer; got != "accepted" {
		t.Errorf("without a fence the late write was %q, want accepted", got)
	}
	if got := last(runs[0]).what; got != "x = a2: B's write is lost" {
		t.Errorf("without a fence: %q", got)
	}
	if got := late(runs[1]).answer; got != "refused: epoch 41 < 42" {
		t.Errorf("with a fence the late write was %q, want refused", got)
	}
	if got := last(runs[1]).what; got != "x = b1: B's write stands" {
		t.Errorf("with a fence: %q", got)
	}
}

// TestFigureIsDeterministicAndComplete checks that -figure prints the same
// D2 twice, with the shared steps once and each ending in its own group.
func TestFigureIsDeterministicAndComplete(t *testing.T) {
	var a, b bytes.Buffer
	for _, w := range []*bytes.Buffer{&a, &b} {
		runs, err := both()
		if err != nil {
			t.Fatal(err)
		}
		if err := writeD2(w, runs); err != nil {
			t.Fatal(err)
		}
	}
	if a.String() != b.String() {
		t.Fatal("two runs printed different figures")
	}
	out := a.String()
	for _, want := range []string{"shape: sequence_diagram\n", `ending1: "Without a fence" {`, `ending2: "With a fence" {`, `storage -> A: "refused: epoch 41 < 42"`} {
		if !strings.Contains(out, want) {
			t.Errorf("figure lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, `B -> storage: "write x = b1 (epoch 42)"`); n != 1 {
		t.Errorf("B's write appears %d times, want once (shared by both endings)", n)
	}
}

// TestWriteD2RefusesRunsThatDifferEarly checks that the figure is not drawn
// when the runs part before their endings (it would hide the difference).
func TestWriteD2RefusesRunsThatDifferEarly(t *testing.T) {
	runs, err := both()
	if err != nil {
		t.Fatal(err)
	}
	runs[1].steps[0].answer = "refused"
	if err := writeD2(&bytes.Buffer{}, runs); err == nil {
		t.Error("runs that differ in their first step were drawn as one figure")
	}
}

// TestQuote checks that a label cannot break out of its D2 string.
func TestQuote(t *testing.T) {
	if got := quote(`say "hi" \ bye`); got != `"say \"hi\" \\ bye"` {
		t.Errorf("quote = %s", got)
	}
}
