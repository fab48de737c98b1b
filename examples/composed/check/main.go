// Command check runs the exhaustive explicit-state check of Composed
// (examples/composed): every interleaving of a three-node line and a
// three-node star, with a network that may duplicate and lose a message and
// reorder any, and a coordinator that may revoke once. It prints the state
// counts for Composed and for each mutant, and each caught mutant's
// shortest counterexample (a mutant the check cannot catch is printed as
// equivalent; composed.Mutant.Caught says which and why). Its output is deterministic.
//
//	go run ./examples/composed/check         # 1 request per node (seconds)
//	go run ./examples/composed/check -full   # 2 requests per node (minutes)
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/ownership-book/ownership/examples/composed"
	"github.com/ownership-book/ownership/examples/raymond"
)

func main() {
	full := flag.Bool("full", false, "check at 2 requests per node (takes minutes)")
	flag.Parse()
	b := composed.Bounds{Requests: 1, Dups: 1, Losses: 1, Revokes: 1}
	if *full {
		b.Requests = 2
	}
	if err := run(os.Stdout, b, *full); err != nil {
		fmt.Fprintln(os.Stderr, "check:", err)
		os.Exit(1)
	}
}

// run checks at bounds b; hashed selects hash compaction (for -full).
func run(w io.Writer, b composed.Bounds, hashed bool) error {
	trees := []raymond.Tree{raymond.Line(3), raymond.Star(3)}
	fmt.Fprintln(w, "Exhaustive check, breadth-first over every interleaving; privilege at A")
	fmt.Fprintln(w, "(an end of the line, the centre of the star), owned at epoch 1.")
	fmt.Fprintf(w, "Bounds: %d request(s) per node; the network duplicates <= %d and loses <= %d\n", b.Requests, b.Dups, b.Losses)
	fmt.Fprintf(w, "messages and delivers in any order; the coordinator revokes <= %d.\n", b.Revokes)
	if hashed {
		fmt.Fprintln(w, "Hash compaction: seen states are kept as 64-bit hashes (a collision,")
		fmt.Fprintln(w, "chance below states^2/2^65, could hide a state).")
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  %-32s %-8s %8s %12s %6s  %s\n", "system", "tree", "states", "transitions", "depth", "result")
	type found struct {
		mut  composed.Mutant
		tree raymond.Tree
		r    raymond.Exploration[*composed.System]
	}
	var shortest []found
	for _, mut := range append([]composed.Mutant{composed.Correct}, composed.Mutants...) {
		var best *found
		for _, tr := range trees {
			var r raymond.Exploration[*composed.System]
			if hashed {
				r = composed.ExploreHashed(tr, 0, b, mut, func(n, t, d, q int) {
					fmt.Fprintf(os.Stderr, "check: %v on %s: %d states, %d transitions, depth %d, %d waiting\n", mut, tr.Name, n, t, d, q)
				})
			} else {
				r = composed.Explore(tr, 0, b, mut, 0)
			}
			result := "safe"
			if mut != composed.Correct {
				result = "safe: equivalent"
			}
			if r.Violation != nil {
				result = fmt.Sprintf("counterexample, %d moves", len(r.Trace))
			}
			fmt.Fprintf(w, "  %-32s %-8s %8d %12d %6d  %s\n", mut, tr.Name, r.States, r.Transitions, r.Depth, result)
			if mut.Caught() != (r.Violation != nil) {
				return fmt.Errorf("%v on %s: %v", mut, tr.Name, r)
			}
			if r.Violation != nil && (best == nil || len(r.Trace) < len(best.r.Trace)) {
				best = &found{mut, tr, r}
			}
		}
		if best != nil {
			shortest = append(shortest, *best)
		}
	}
	for _, f := range shortest {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "Counterexample, %s (%s):\n", f.mut, f.tree.Name)
		for i, l := range f.r.Trace {
			fmt.Fprintf(w, "  %2d. %s\n", i+1, l)
		}
		fmt.Fprintf(w, "  => %v\n", f.r.Violation)
	}
	return nil
}
