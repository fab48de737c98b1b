package main

import (
	"flag"
	"testing"

	"github.com/ownership-book/ownership/examples/internal/golden"
)

var update = flag.Bool("update", false, "rewrite testdata/failover.golden from the program's output")

// The program prints the same transcript on every run, equal to the golden
// file (and to the chapter's transcript, which bookgen checks).
func TestOutputMatchesGolden(t *testing.T) {
	golden.Check(t, "failover", "./examples/raft/failover", *update, run)
}

// A count that differs between voters is printed voter by voter, so the
// golden comparison fails on it instead of on a folded "yes".
func TestSummarizePrintsDisagreement(t *testing.T) {
	ids := []string{"A", "B", "C"}
	for _, c := range []struct {
		counts []int
		want   string
	}{
		{[]int{30, 30, 30}, "30 on each of 3"},
		{[]int{30, 29, 30}, "A=30 B=29 C=30"},
		{[]int{20, -1, 20}, "A=20 B=down C=20"},
	} {
		if got := summarize(ids, c.counts); got != c.want {
			t.Errorf("summarize(%v) = %q, want %q", c.counts, got, c.want)
		}
	}
	if got := summarize([]string{"D"}, []int{20}); got != "20" {
		t.Errorf("one voter: %q, want \"20\"", got)
	}
}
