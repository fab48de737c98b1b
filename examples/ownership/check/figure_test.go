package check

import (
	"bytes"
	"strings"
	"testing"
)

// TestCounterexampleFigure draws Abort reusing epoch 42's counterexample
// and checks that the figure is the trace the report prints: the same six
// steps in order, each between the participants it joins (a send at its
// sender, an arrival from sender to receiver), B's grant arriving last, and
// the note on B naming the grant property. A mutation no property catches
// has no figure, and every mutation's slug finds it again.
//
// Reference: chapter "One owner at a time", section on the model checker's
// mutations.
func TestCounterexampleFigure(t *testing.T) {
	var out bytes.Buffer
	if err := WriteCounterexample(&out, AbortReusesEpoch); err != nil {
		t.Fatal(err)
	}
	fig := out.String()
	order := []string{
		"shape: sequence_diagram\np0: \"A\"\np1: \"B\"\np3: \"coordinator\"\np4: \"record\"\n",
		`p0 -> p0: "start: Owned(A, 41), A holds its token for 41"`,
		`p0 -> p0: "1. reads the record, Owned(A, 41),\nsends BeginTransfer(A -> B)@41"`,
		`p0 -> p4: "2. BeginTransfer(A -> B)@41 arrives:\nTransferring(A, B, 41, 42)"`,
		`p0 -> p0: "3. reads the record, Transferring(A, B, 41, 42),\nsends B a grant for 42"`,
		`p3 -> p3: "4. reads the record, Transferring(A, B, 41, 42),\nsends Abort@42"`,
		`p3 -> p4: "5. Abort@42 arrives:\nUnowned(42, A)"`,
		`p0 -> p1: "6. A's grant for 42 to B arrives:\npasses the fence (record Unowned(42, A));\nB sends Acquire(B)@42"`,
		`p1.broken: "broken: an abandoned grant is fenced\n`,
	}
	at := 0
	for _, want := range order {
		i := strings.Index(fig[at:], want)
		if i < 0 {
			t.Fatalf("figure lacks %q after offset %d:\n%s", want, at, fig)
		}
		at += i + len(want)
	}
	if n := strings.Count(fig, " -> "); n != 7+2 { // start, six steps; two in labels
		t.Errorf("%d arrows (and arrows in labels), want 9:\n%s", n, fig)
	}
	if err := WriteCounterexample(&bytes.Buffer{}, FenceEquals); err == nil {
		t.Error("drew a counterexample for the equivalent mutation")
	}
	for _, mut := range Mutations {
		if got, ok := MutationBySlug(mut.Slug()); !ok || got != mut {
			t.Errorf("slug %q finds %v, %v", mut.Slug(), got, ok)
		}
	}
	if s := AbortReusesEpoch.Slug(); s != "abort-reusing-epoch-42" {
		t.Errorf("slug %q", s)
	}
}
