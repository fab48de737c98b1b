// Command nemesis runs the negative controls for Raymond's tree algorithm:
// an exhaustive breadth-first search over every interleaving of small trees
// (examples/raymond's Search) shows that reordering alone breaks nothing, and
// finds the shortest run in which one duplicated message puts two nodes in
// the critical section, and the shortest in which one lost message leaves
// every node waiting forever. Its output is deterministic.
//
//	go run ./examples/raymond/nemesis
package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ownership-book/ownership/examples/raymond"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "nemesis:", err)
		os.Exit(1)
	}
}

var small = []raymond.Tree{raymond.Line(2), raymond.Line(3), raymond.Star(4)}

// shortest searches every small tree with the privilege at A and returns the
// shortest counterexample found, printing one line per tree.
func shortest(w io.Writer, b raymond.Bounds, goal func(raymond.World) error) (raymond.Exploration[raymond.World], raymond.Tree, error) {
	var best raymond.Exploration[raymond.World]
	var bestTree raymond.Tree
	for _, tr := range small {
		r := raymond.Search(tr, 0, b, goal)
		if r.Violation == nil {
			fmt.Fprintf(w, "  %-8s %s\n", tr.Name, r)
			continue
		}
		fmt.Fprintf(w, "  %-8s states %d: shortest run %d moves\n", tr.Name, r.States, len(r.Trace))
		if best.Violation == nil || len(r.Trace) < len(best.Trace) {
			best, bestTree = r, tr
		}
	}
	if best.Violation == nil {
		return best, bestTree, fmt.Errorf("no counterexample found with %+v", b)
	}
	return best, bestTree, nil
}

func printRun(w io.Writer, tr raymond.Tree, r raymond.Exploration[raymond.World]) {
	fmt.Fprintf(w, "Shortest: %s, privilege at A, %d moves:\n", tr.Name, len(r.Trace))
	for i, l := range r.Trace {
		fmt.Fprintf(w, "  %2d. %s\n", i+1, l)
	}
	fmt.Fprintf(w, "  => %v\n", r.Violation)
	for _, n := range r.Bad.Nodes {
		fmt.Fprintf(w, "     %v\n", n)
	}
	var fl []string
	for _, m := range r.Bad.InFlight {
		fl = append(fl, m.String())
	}
	if len(fl) == 0 {
		fl = []string{"nothing"}
	}
	fmt.Fprintf(w, "     in flight: %s\n", strings.Join(fl, ", "))
}

func run(w io.Writer) error {
	fmt.Fprintln(w, "Every interleaving of line(2), line(3) and star(4) (A is the centre of the star).")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Reordering only (any message in flight may arrive next), 2 requests per\n"+
		"node, every starting holder:")
	for _, tr := range small {
		for h := range tr.N() {
			r := raymond.Search(tr, raymond.NodeID(h), raymond.Bounds{Requests: 2}, raymond.Safe)
			fmt.Fprintf(w, "  %-8s privilege at %s: %s\n", tr.Name, raymond.NodeID(h), r)
			if r.Violation != nil {
				return fmt.Errorf("reordering broke %s: %v", tr.Name, r.Trace)
			}
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The network may also duplicate one message (2 requests per node);\n"+
		"goal: two nodes USING.")
	r, tr, err := shortest(w, raymond.Bounds{Requests: 2, Dups: 1}, raymond.TwoUsing)
	if err != nil {
		return err
	}
	printRun(w, tr, r)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The network may instead lose one message (1 request per node);")
	fmt.Fprintln(w, "goal: every node waiting, nothing in flight, no privilege.")
	r, tr, err = shortest(w, raymond.Bounds{Requests: 1, Losses: 1}, raymond.EveryoneBlocked)
	if err != nil {
		return err
	}
	printRun(w, tr, r)
	return nil
}
