package main

import (
	"flag"
	"testing"

	"github.com/ownership-book/ownership/examples/internal/golden"
)

var update = flag.Bool("update", false, "rewrite testdata/transfer.golden from the program's output")

// The program prints the same transcript on every run, equal to the golden
// file (and to the chapter's transcript, which bookgen checks).
func TestOutputMatchesGolden(t *testing.T) {
	golden.Check(t, "transfer", "./examples/raft/transfer", *update, run)
}

// Counts that differ between voters are printed voter by voter.
func TestPerVoterPrintsDisagreement(t *testing.T) {
	ids := []string{"A", "B"}
	if got := perVoter(ids, []int{200, 200}); got != "200 on each of 2" {
		t.Errorf("equal counts: %q", got)
	}
	if got := perVoter(ids, []int{200, 199}); got != "A=200 B=199" {
		t.Errorf("different counts: %q", got)
	}
}
