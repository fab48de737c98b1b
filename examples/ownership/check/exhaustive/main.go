// Command exhaustive model-checks the ownership protocol of package
// ownership with package check: it explores every reachable state within
// each row's bounds, prints the table of bounds against states, transitions,
// depth and result, and a table of mutations (one mechanism of the protocol
// broken at a time), each with its shortest counterexample. It exits with
// status 1 if the real model breaks a property or a mutation goes
// undetected. Without -time its output is deterministic.
//
//	go run ./examples/ownership/check/exhaustive          # the chapter's table, seconds
//	go run ./examples/ownership/check/exhaustive -large   # also larger bounds, about a minute
//	go run ./examples/ownership/check/exhaustive -figure abort-reusing-epoch-42
//	                                                      # one counterexample as D2
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/ownership-book/ownership/examples/ownership/check"
)

func main() {
	large := flag.Bool("large", false, "also run the larger bounds (about a minute)")
	times := flag.Bool("time", false, "add each run's wall time to the table (not deterministic)")
	figure := flag.String("figure", "", "print this mutation's shortest counterexample as a D2 sequence diagram instead (its name in the table, lower case, words joined by hyphens: abort-reusing-epoch-42)")
	flag.Parse()
	if *figure != "" {
		mut, ok := check.MutationBySlug(*figure)
		err := fmt.Errorf("no mutation %q", *figure)
		if ok {
			err = check.WriteCounterexample(os.Stdout, mut)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "exhaustive:", err)
			os.Exit(1)
		}
		return
	}
	opt := check.Options{Bounds: check.DefaultBounds, Times: *times}
	if *large {
		opt.Bounds = append(append([]check.Bounds(nil), check.DefaultBounds...), check.LargeBounds...)
	}
	if err := check.WriteReport(os.Stdout, opt); err != nil {
		fmt.Fprintln(os.Stderr, "exhaustive:", err)
		os.Exit(1)
	}
}
