// Command figure8 replays the sequence of Figure 8 of the Raft paper (Diego
// Ongaro and John Ousterhout, "In Search of an Understandable Consensus
// Algorithm (Extended Version)", 2014) on the book's pure model of Raft,
// twice: with the rule of section 5.4.2 switched off, so that a leader
// commits an entry of an earlier term by counting its replicas, and with
// the rule. After each step it prints every server's log as the terms of
// its entries, and at the end the Figure 3 properties the checker found
// broken.
//
//	go run ./examples/raft/figure8
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/ownership-book/ownership/examples/raft"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "figure8:", err)
		os.Exit(1)
	}
}

func run(w io.Writer) error {
	for _, c := range []struct {
		title string
		fault raft.Fault
	}{
		{"Rule of section 5.4.2 off: a leader commits an old-term entry by counting replicas", raft.CommitByCounting},
		{"Rule of section 5.4.2 on: only entries of the leader's own term are committed by counting", 0},
	} {
		fmt.Fprintf(w, "== %s\n", c.title)
		vs, err := raft.Figure8(w, c.fault)
		if err != nil {
			return err
		}
		if len(vs) == 0 {
			fmt.Fprintln(w, "checker: all five Figure 3 properties hold")
		}
		for _, v := range vs {
			fmt.Fprintf(w, "checker: %v\n", v)
		}
		fmt.Fprintln(w)
	}
	return nil
}
