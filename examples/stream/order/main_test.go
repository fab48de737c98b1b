package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestBothOrdersOnEveryVoter plays the race on three real voters in both
// orders and checks every voter's decision: with the append first, all
// three apply it and the claim closes epoch 7 at seq 3; with the claim
// first, the claim closes epoch 7 at seq 2 and all three refuse the append,
// naming epoch 8. A voter that judged against its own clock or skipped the
// fence would break one of these rows.
//
// Reference: chapter "The epoch-fenced stream", section "Where the fence is
// checked"; Diego Ongaro and John Ousterhout, 2014, §5.3 (every voter
// applies the same log in the same order).
func TestBothOrdersOnEveryVoter(t *testing.T) {
	runs, err := playBoth()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]struct{ request, decision string }{
		{{"append epoch 7 seq 3", "applied"}, {"claim epoch 8 seq 0", "applied; closes epoch 7 at seq 3"}},
		{{"claim epoch 8 seq 0", "applied; closes epoch 7 at seq 2"}, {"append epoch 7 seq 3", "refused: epoch closed; current epoch 8"}},
	}
	if len(runs) != len(want) {
		t.Fatalf("%d runs, want %d", len(runs), len(want))
	}
	for i, r := range runs {
		if len(r.Voters) != 3 || len(r.Entries) != 2 {
			t.Fatalf("%s: %d voters and %d entries, want 3 and 2", r.Title, len(r.Voters), len(r.Entries))
		}
		for n, e := range r.Entries {
			if e.Request != want[i][n].request {
				t.Errorf("%s: entry %d is %q, want %q", r.Title, n+1, e.Request, want[i][n].request)
			}
			if len(e.Decisions) != 3 {
				t.Fatalf("%s: entry %d has %d decisions", r.Title, n+1, len(e.Decisions))
			}
			for v, d := range e.Decisions {
				if d != want[i][n].decision {
					t.Errorf("%s: entry %d on voter %s: %q, want %q", r.Title, n+1, r.Voters[v], d, want[i][n].decision)
				}
			}
		}
	}
}

// TestFigureDrawsTheRuns checks that -figure's D2 holds a box per order
// with a grid of the entry and three voters, every decision in a cell
// filled by what it was (green applied, red refused), and that a run with
// a missing decision is refused rather than drawn short.
func TestFigureDrawsTheRuns(t *testing.T) {
	runs := []run{
		{Title: "order 1: x", Voters: []string{"A", "B", "C"}, Entries: []entry{
			{"old owner", "append epoch 7 seq 3", []string{"applied", "applied", "applied"}},
			{"new owner", "claim epoch 8 seq 0", []string{"applied; closes epoch 7 at seq 3", "applied; closes epoch 7 at seq 3", "applied; closes epoch 7 at seq 3"}},
		}},
		{Title: "order 2: y", Voters: []string{"A", "B", "C"}, Entries: []entry{
			{"new owner", "claim epoch 8 seq 0", []string{"applied; closes epoch 7 at seq 2", "applied; closes epoch 7 at seq 2", "applied; closes epoch 7 at seq 2"}},
			{"old owner", "append epoch 7 seq 3", []string{"refused: epoch closed; current epoch 8", "refused: epoch closed; current epoch 8", "refused: epoch closed; current epoch 8"}},
		}},
	}
	var out bytes.Buffer
	if err := writeFigure(&out, runs); err != nil {
		t.Fatal(err)
	}
	fig := out.String()
	for _, want := range []string{
		"grid-columns: 1\n",
		"order1: \"order 1: x\" {\n  grid-rows: 3\n  grid-columns: 4\n",
		`  hC: "voter C" {shape: text}`,
		`  e2: "2. new owner\nclaim epoch 8 seq 0"`,
		`  e2B: "applied\ncloses epoch 7 at seq 3" {style.fill: "#d3f0d8"}`,
		`  e2C: "refused: epoch closed\ncurrent epoch 8" {style.fill: "#fbd5d5"}`,
	} {
		if !strings.Contains(fig, want) {
			t.Errorf("figure lacks %q:\n%s", want, fig)
		}
	}
	if n := strings.Count(fig, `{style.fill: "#fbd5d5"}`); n != 3 {
		t.Errorf("%d refused cells, want 3", n)
	}
	runs[1].Entries[1].Decisions = runs[1].Entries[1].Decisions[:2]
	if err := writeFigure(&bytes.Buffer{}, runs); err == nil {
		t.Error("drew a run with a voter's decision missing")
	}
}
