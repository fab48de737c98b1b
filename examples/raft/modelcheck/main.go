// Command modelcheck explores every state that three servers of the book's
// pure model of Raft can reach within small bounds (terms up to 2, one
// entry, two messages in flight when a server sends, one crash), checking the five
// properties of Figure 3 of the Raft paper (Diego Ongaro and John
// Ousterhout, "In Search of an Understandable Consensus Algorithm
// (Extended Version)", 2014) in each. It prints the number of states, then
// repeats the search with one rule switched off at a time and prints the
// shortest schedule the search finds to a broken property.
//
//	go run ./examples/raft/modelcheck
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/ownership-book/ownership/examples/raft"
)

func main() {
	run(os.Stdout)
}

func run(w io.Writer) {
	b := raft.Bounds{MaxTerm: 2, MaxLog: 1, MaxInFlight: 2, MaxReboots: 1}
	fmt.Fprintf(w, "3 servers; terms up to %d, logs up to %d entry, at most %d messages in flight when sending, %d crash\n",
		b.MaxTerm, b.MaxLog, b.MaxInFlight, b.MaxReboots)
	fmt.Fprintf(w, "(states counted once up to renaming of the servers)\n\n")
	for _, f := range []raft.Fault{0, raft.VoteTwice, raft.GrantStaleVotes} {
		r := raft.Explore(raft.NewCluster(3, f), b, 0)
		name := "Raft as specified"
		if f != 0 {
			name = "mutant " + f.String()
		}
		if r.Violation == nil {
			fmt.Fprintf(w, "%s: %d states, %d transitions, all five properties hold in every state\n\n", name, r.States, r.Transitions)
			continue
		}
		fmt.Fprintf(w, "%s: %v\n  shortest schedule (%d steps):\n", name, r.Violation, len(r.Trace))
		for i, a := range r.Trace {
			fmt.Fprintf(w, "  %2d. %v\n", i+1, a)
		}
		fmt.Fprintln(w)
	}
}
