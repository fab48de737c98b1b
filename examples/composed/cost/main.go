// Command cost prints what Composed pays for exclusivity: ownership-record
// writes per critical-section entry (BeginTransfer, CompleteRelease and
// Acquire for every PRIVILEGE hop) next to Raymond's messages per entry, at
// light load (one request at a time, mean over all requester and holder
// pairs) and heavy load (every node always requesting), measured by running
// examples/composed. Its output is deterministic.
//
//	go run ./examples/composed/cost
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/ownership-book/ownership/examples/composed"
	"github.com/ownership-book/ownership/examples/raymond"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "cost:", err)
		os.Exit(1)
	}
}

func light(tr raymond.Tree) (msgs, writes float64, err error) {
	tm, tw, pairs := 0, 0, 0
	for t := range tr.N() {
		for u := range tr.N() {
			if u == t {
				continue
			}
			m, w, err := composed.Isolated(tr, raymond.NodeID(u), raymond.NodeID(t))
			if err != nil {
				return 0, 0, err
			}
			tm, tw, pairs = tm+m, tw+w, pairs+1
		}
	}
	return float64(tm) / float64(pairs), float64(tw) / float64(pairs), nil
}

func run(w io.Writer) error {
	fmt.Fprintln(w, "Per critical-section entry: Raymond's messages and Composed's")
	fmt.Fprintln(w, "ownership-record writes (each entry also makes one write to the resource).")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  %-7s %4s   %18s   %18s\n", "", "", "light load", "heavy load")
	fmt.Fprintf(w, "  %-7s %4s   %8s %9s   %8s %9s\n", "tree", "N", "messages", "record", "messages", "record")
	for _, c := range []struct {
		build func(int) raymond.Tree
		sizes []int
	}{
		{raymond.Binary, []int{7, 15, 31, 63}},
		{raymond.Line, []int{7, 15}},
		{raymond.Star, []int{7, 15, 31, 63}},
	} {
		for _, n := range c.sizes {
			tr := c.build(n)
			lm, lw, err := light(tr)
			if err != nil {
				return err
			}
			hm, hw, err := composed.HeavyLoad(tr, 0, 1, 20*n)
			if err != nil {
				return err
			}
			name := tr.Name[:len(tr.Name)-len(fmt.Sprintf("(%d)", n))]
			fmt.Fprintf(w, "  %-7s %4d   %8.2f %9.2f   %8.2f %9.2f\n", name, n, lm, lw, hm, hw)
		}
	}
	return nil
}
