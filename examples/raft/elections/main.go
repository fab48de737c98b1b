// Command elections repeats the leader-election measurement of section 9.3
// of the Raft paper (Diego Ongaro and John Ousterhout, "In Search of an
// Understandable Consensus Algorithm (Extended Version)", 2014, Figure 16)
// in simulated time, on the book's pure model of Raft: five servers, a
// leader that sends one last heartbeat and crashes, and followers that
// elect a new one with election timeouts drawn from each range. It prints,
// per range, how many of the trials elected a leader within 10 s, the
// median, mean and longest time without a leader, and the split votes,
// first with one-way delays of 1 to 2 ms and then of 1 to 5 ms. The
// output is the same on every run (seeded).
//
//	go run ./examples/raft/elections
package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ownership-book/ownership/examples/raft"
)

func main() {
	run(os.Stdout)
}

func run(w io.Writer) {
	const ms = time.Millisecond
	fmt.Fprintln(w, "5 servers, one-way delay 1-2 ms, vote written to disk in 12 ms; time without leader, simulated")
	fmt.Fprintf(w, "%-12s %7s %9s %9s %9s %9s %11s\n", "timeout", "trials", "elected", "median", "mean", "max", "split votes")
	for _, r := range [][2]time.Duration{
		{150, 150}, {150, 151}, {150, 155}, {150, 175}, {150, 200}, {150, 300},
		{12, 24}, {25, 50}, {50, 100}, {100, 200},
	} {
		s := raft.ElectionSetup{TimeoutMin: r[0] * ms, TimeoutMax: r[1] * ms, Seed: 1}
		if r[0] == r[1] {
			s.Trials = 100 // as in the paper: "except for 100 trials for 150–150ms"
		}
		res := raft.Elect(s)
		row(w, r, res)
	}
	// The same crash with a less uniform network: one-way delays of 1 to
	// 5 ms, so the heartbeat can leave the followers' timers further
	// apart than a message's trip.
	fmt.Fprintln(w)
	fmt.Fprintln(w, "the same, one-way delay 1-5 ms")
	for _, r := range [][2]time.Duration{{150, 150}, {150, 155}, {150, 200}} {
		s := raft.ElectionSetup{TimeoutMin: r[0] * ms, TimeoutMax: r[1] * ms, DelayMin: 1 * ms, DelayMax: 5 * ms, Seed: 1}
		if r[0] == r[1] {
			s.Trials = 100
		}
		row(w, r, raft.Elect(s))
	}
}

// row prints one timeout range's result.
func row(w io.Writer, r [2]time.Duration, res raft.ElectionResult) {
	fmt.Fprintf(w, "%-12s %7d %9d %9s %9s %9s %11d\n", fmt.Sprintf("%d-%d ms", r[0], r[1]),
		res.Trials, res.Elected, show(res.Median, res), show(res.Mean, res), show(res.Max, res), res.Split)
}

// show prints d in whole milliseconds, or "-" when no trial elected a
// leader.
func show(d time.Duration, r raft.ElectionResult) string {
	if r.Elected == 0 {
		return "-"
	}
	return fmt.Sprintf("%d ms", d.Round(time.Millisecond)/time.Millisecond)
}
