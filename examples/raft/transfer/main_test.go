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
