// Command msgcount prints the message counts of Raymond's tree algorithm, as
// measured by running the algorithm in examples/raymond's simulator: messages
// per critical-section entry at light load (one request at a time) and at
// heavy load (every node always requesting), on balanced binary trees from 7
// to 255 nodes, with lines and stars for contrast, next to the formulas for
// Ricart-Agrawala and Suzuki-Kasami. Its output is deterministic.
//
//	go run ./examples/raymond/msgcount
package main

import (
	"fmt"
	"io"
	"math"
	"os"

	"github.com/ownership-book/ownership/examples/raymond"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "msgcount:", err)
		os.Exit(1)
	}
}

// shape is one tree family and the sizes it is measured at.
type shape struct {
	name  string
	build func(int) raymond.Tree
	sizes []int
}

var shapes = []shape{
	{"binary", raymond.Binary, []int{7, 15, 31, 63, 127, 255}},
	{"line", raymond.Line, []int{7, 15, 31, 63}},
	{"star", raymond.Star, []int{7, 15, 31, 63, 127, 255}},
}

// lightLoad returns the mean and the largest number of messages one
// isolated request costs, over every ordered pair (u, t), u != t, of
// requester u and privilege holder t.
func lightLoad(tr raymond.Tree) (mean float64, worst int, err error) {
	total, pairs := 0, 0
	for t := range tr.N() {
		var us []raymond.NodeID
		for u := range tr.N() {
			if u != t {
				us = append(us, raymond.NodeID(u))
			}
		}
		costs, err := raymond.IsolatedCosts(tr, raymond.NodeID(t), us)
		if err != nil {
			return 0, 0, err
		}
		for _, m := range costs {
			total += m
			pairs++
			worst = max(worst, m)
		}
	}
	return float64(total) / float64(pairs), worst, nil
}

func run(w io.Writer) error {
	fmt.Fprintln(w, "Messages per critical-section entry, Raymond's tree algorithm (measured)")
	fmt.Fprintln(w, "next to two algorithms without a tree (formulas, not runs).")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Light load: one request at a time, from u while t holds the privilege;")
	fmt.Fprintln(w, "mean and maximum over all ordered pairs u != t.")
	fmt.Fprintf(w, "  %-7s %4s %5s %8s %5s %7s   %15s %13s\n", "tree", "N", "diam", "mean", "max", "log2 N", "Ricart-Agrawala", "Suzuki-Kasami")
	fmt.Fprintf(w, "  %-7s %4s %5s %8s %5s %7s   %15s %13s\n", "", "", "", "", "", "", "2(N-1)", "N")
	for _, s := range shapes {
		for _, n := range s.sizes {
			tr := s.build(n)
			mean, worst, err := lightLoad(tr)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "  %-7s %4d %5d %8.2f %5d %7.2f   %15d %13d\n", s.name, n, tr.Diameter(), mean, worst, math.Log2(float64(n)), 2*(n-1), n)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Heavy load: every node always requesting, critical sections long")
	fmt.Fprintln(w, "compared with message delays; 20·N entries after a warm-up of N.")
	fmt.Fprintf(w, "  %-7s %4s %9s %9s\n", "tree", "N", "measured", "4(N-1)/N")
	for _, s := range shapes {
		for _, n := range s.sizes {
			got, err := raymond.HeavyLoad(s.build(n), 0, 1, 20*n)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "  %-7s %4d %9.3f %9.3f\n", s.name, n, got, 4*float64(n-1)/float64(n))
		}
	}
	return nil
}
