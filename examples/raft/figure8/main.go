// Command figure8 replays the sequence of Figure 8 of the Raft paper (Diego
// Ongaro and John Ousterhout, "In Search of an Understandable Consensus
// Algorithm (Extended Version)", 2014) on the book's pure model of Raft,
// twice: with the rule of section 5.4.2 switched off, so that a leader
// commits an entry of an earlier term by counting its replicas, and with
// the rule. After each step it prints every server's log as the terms of
// its entries, and at the end the Figure 3 properties the checker found
// broken.
//
// With -d2 it prints instead the D2 source of the figure the book shows:
// steps (a) to (d) of the run without the rule and step (e) of the run
// with it, each server's log drawn as boxes holding the terms of its
// entries, committed entries with a heavy border.
//
//	go run ./examples/raft/figure8
//	go run ./examples/raft/figure8 -d2
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ownership-book/ownership/examples/raft"
)

func main() {
	d2 := flag.Bool("d2", false, "print the figure as D2 source instead of the transcript")
	flag.Parse()
	run := run
	if *d2 {
		run = drawD2
	}
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

// termFill colours an entry by its term, so that the figure reads like the
// paper's.
var termFill = map[uint64]string{1: "#dbe7fb", 2: "#fbe3c2", 3: "#d5efd5", 4: "#f3d3e6", 5: "#e2dcf5"}

// drawD2 writes the figure: one grid per step, one row per server.
func drawD2(w io.Writer) error {
	off, _, err := raft.Figure8Steps(raft.CommitByCounting)
	if err != nil {
		return err
	}
	on, _, err := raft.Figure8Steps(0)
	if err != nil {
		return err
	}
	var steps []raft.Figure8Step
	for _, st := range off {
		if st.Label != "start:" {
			steps = append(steps, st)
		}
	}
	steps = append(steps, on[len(on)-1])
	titles := map[string]string{
		"(a)": "(a) term 2",
		"(b)": "(b) term 3",
		"(c)": "(c) term 4, rule off",
		"(d)": "(d) term 5, rule off",
		"(e)": "(e) term 4, rule on",
	}
	// Three steps to a row: five side by side are too wide for a
	// page's column with labels still legible. Rows named first: d2
	// then fills the grid row by row, (a) (b) (c) above (d) (e).
	fmt.Fprintf(w, "grid-rows: %d\n", (len(steps)+2)/3)
	fmt.Fprintln(w, "grid-columns: 3")
	fmt.Fprintln(w, "grid-gap: 16")
	for i, st := range steps {
		fmt.Fprintf(w, "step%d: \"%s\" {\n", i, titles[st.Label])
		fmt.Fprintln(w, "  grid-columns: 1")
		fmt.Fprintln(w, "  grid-gap: 4")
		for _, sv := range st.Servers {
			name := sv.ID.String()
			switch sv.Role {
			case "leader":
				name += " leader"
			case "crashed":
				name += " crashed"
			case "candidate":
				name += " candidate"
			}
			fmt.Fprintf(w, "  %s: \"\" {\n", strings.ToLower(sv.ID.String()))
			fmt.Fprintln(w, "    grid-columns: 4")
			fmt.Fprintln(w, "    grid-gap: 2")
			fmt.Fprintln(w, "    style.stroke-width: 0")
			fmt.Fprintln(w, "    style.fill: transparent")
			fmt.Fprintf(w, "    id: \"%s\" {shape: text; width: 96}\n", name)
			for k := range 3 {
				if k >= len(sv.Log) {
					fmt.Fprintf(w, "    e%d: \"\" {width: 30; height: 30; style.opacity: 0}\n", k+1)
					continue
				}
				stroke := 1
				if uint64(k+1) <= sv.Commit {
					stroke = 4
				}
				fmt.Fprintf(w, "    e%d: \"%d\" {width: 30; height: 30; style.fill: \"%s\"; style.stroke-width: %d}\n",
					k+1, sv.Log[k], termFill[sv.Log[k]], stroke)
			}
			fmt.Fprintln(w, "  }")
		}
		fmt.Fprintln(w, "}")
	}
	return nil
}
