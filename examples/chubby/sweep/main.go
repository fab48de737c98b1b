// Command sweep runs the seeded zombie-writer experiment of package chubby
// (chubby.DefaultExperiment): for three pause distributions and two network
// delay distributions it plays the same random trials under seven ways of
// protecting the file server, and prints how often client 1's stale write
// was applied after client 2's (unsafe), how often it was applied while
// client 2 held the lock but before its write (late), and how long each
// failover left the file server without a writer. Output depends only on
// the flags.
//
//	go run ./examples/chubby/sweep [-seed 1] [-trials 2000]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ownership-book/ownership/examples/chubby"
)

func main() {
	e := chubby.DefaultExperiment()
	flag.Uint64Var(&e.Seed, "seed", e.Seed, "seed of the random draws")
	flag.IntVar(&e.Trials, "trials", e.Trials, "trials per pause and delay distribution")
	flag.Parse()
	if flag.NArg() > 0 || e.Trials <= 0 {
		fmt.Fprintln(os.Stderr, "usage: sweep [-seed N] [-trials N>0]")
		os.Exit(2)
	}
	if err := run(os.Stdout, e); err != nil {
		fmt.Fprintln(os.Stderr, "sweep:", err)
		os.Exit(1)
	}
}

var d = chubby.FormatDuration

func pct(n, of int) string {
	if of == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(of))
}

func run(w io.Writer, e chubby.Experiment) error {
	cells, err := e.Run()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Zombie-writer sweep: seed %d, %d trials per row, lease %s, log-normal pauses (sigma %.1f)\n",
		e.Seed, e.Trials, d(e.Lease), e.Pauses[0].Sigma)
	fmt.Fprintf(w, "and network delays (sigma %.1f); client 2 works a median %s before writing.\n", e.Delays[0].Sigma, d(e.Think.Median))
	table := func(title string, cellText func(chubby.Outcome) string) {
		fmt.Fprintf(w, "\n%s\n", title)
		head := fmt.Sprintf("  %-6s %-6s", "pause", "delay")
		for _, p := range e.Protections {
			head += fmt.Sprintf(" %15s", p.Name)
		}
		fmt.Fprintln(w, head)
		for _, c := range cells {
			line := fmt.Sprintf("  %-6s %-6s", d(c.Pause.Median), d(c.Delay.Median))
			for _, o := range c.Outcomes {
				line += fmt.Sprintf(" %15s", cellText(o))
			}
			fmt.Fprintln(w, strings.TrimRight(line, " "))
		}
	}
	table("Failovers (client 2 got the lock), % of trials:", func(o chubby.Outcome) string { return pct(o.Failovers, o.Trials) })
	table("Unsafe: A applied after B, % of failovers:", func(o chubby.Outcome) string { return pct(o.Unsafe, o.Failovers) })
	table("Late: A applied while client 2 held the lock, before B, % of failovers:", func(o chubby.Outcome) string { return pct(o.Late, o.Failovers) })
	table("Outage after a failover (client 1's last act to B applied), mean / p99:", func(o chubby.Outcome) string {
		if len(o.Outages) == 0 {
			return "-"
		}
		return d(o.MeanOutage()) + "/" + d(o.Quantile(0.99))
	})
	return nil
}
