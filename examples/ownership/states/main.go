// Command states finds the ownership state machine's diagram by running it:
// it applies every transition, with every caller, to one actor in each of
// the three shapes, and prints each transition that succeeds: from which
// shape to which, who may ask for it (named by role: the owner, the
// incoming node, the intended owner, the coordinator) and what happens to
// the epoch. -figure prints the same findings as a D2 diagram, which the
// chapter draws, so the figure shows what the code does.
//
//	go run ./examples/ownership/states
//	go run ./examples/ownership/states -figure
//
// Reference: chapter "One owner at a time", sections "A handover,
// step by step" and "Abort and revoke".
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ownership-book/ownership/examples/ownership"
)

func main() {
	figure := flag.Bool("figure", false, "print the diagram as D2")
	flag.Parse()
	edges, err := explore()
	if err != nil {
		fmt.Fprintln(os.Stderr, "states:", err)
		os.Exit(1)
	}
	if *figure {
		writeD2(os.Stdout, edges)
		return
	}
	writeText(os.Stdout, edges)
}

// samples holds one actor in each shape, owned by A or on its way from A
// to B, at epoch 41.
var samples = []ownership.State{
	ownership.Owned{Owner: "A", Epoch: 41},
	ownership.Transferring{From: "A", To: "B", OldEpoch: 41, NewEpoch: 42},
	ownership.Unowned{Epoch: 42, IntendedOwner: "B"},
}

// nodes are the callers tried: the two nodes the samples name, and C, whom
// they do not.
var nodes = []ownership.NodeID{"A", "B", "C"}

// edge is one transition that succeeded.
type edge struct {
	from, to string // shape names: Owned, Transferring, Unowned
	op       string
	by       string // role of the caller in the state before
	epoch    string // "+1", "same"
	next     string // role (in the state before) of the node the result names, "" for Owned
}

func shape(s ownership.State) string {
	switch s.(type) {
	case ownership.Owned:
		return "Owned"
	case ownership.Transferring:
		return "Transferring"
	case ownership.Unowned:
		return "Unowned"
	}
	return fmt.Sprintf("%T", s)
}

// role names node n by what it is in state s.
func role(s ownership.State, n ownership.NodeID) string {
	switch s := s.(type) {
	case ownership.Owned:
		if n == s.Owner {
			return "the owner"
		}
	case ownership.Transferring:
		if n == s.From {
			return "the outgoing owner"
		}
		if n == s.To {
			return "the incoming node"
		}
	case ownership.Unowned:
		if n == s.IntendedOwner {
			return "the intended owner"
		}
	}
	return "another node"
}

// named returns the node the state names as its owner or next owner.
func named(s ownership.State) ownership.NodeID {
	switch s := s.(type) {
	case ownership.Owned:
		return s.Owner
	case ownership.Transferring:
		return s.To
	case ownership.Unowned:
		return s.IntendedOwner
	}
	return ""
}

// explore applies every transition to every sample and returns the edges,
// merged when two callers of the same role (or two targets) give the same
// edge, in the order found.
func explore() ([]edge, error) {
	var out []edge
	seen := map[edge]bool{}
	add := func(before, after ownership.State, op, by string) error {
		if err := ownership.Validate(after); err != nil {
			return fmt.Errorf("%s from %s gave an invalid state %s: %v", op, before, after, err)
		}
		e := edge{from: shape(before), to: shape(after), op: op, by: by}
		switch d := ownership.CurrentEpoch(after) - ownership.CurrentEpoch(before); d {
		case 0:
			e.epoch = "same"
		default:
			e.epoch = fmt.Sprintf("+%d", d)
		}
		if ownership.CurrentEpoch(after) < ownership.CurrentEpoch(before) {
			return fmt.Errorf("%s from %s lowered the epoch to %s", op, before, after)
		}
		if _, ok := after.(ownership.Owned); !ok {
			e.next = role(before, named(after))
		}
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
		return nil
	}
	for _, s := range samples {
		for _, c := range nodes {
			for _, to := range nodes {
				if after, err := ownership.BeginTransfer(s, c, to); err == nil {
					if err := add(s, after, "BeginTransfer", role(s, c)); err != nil {
						return nil, err
					}
				}
			}
			if after, err := ownership.CompleteRelease(s, c); err == nil {
				if err := add(s, after, "CompleteRelease", role(s, c)); err != nil {
					return nil, err
				}
			}
			if after, err := ownership.Acquire(s, c); err == nil {
				if err := add(s, after, "Acquire", role(s, c)); err != nil {
					return nil, err
				}
			}
			// Revoke names the next intended owner; the coordinator
			// asks, so the caller is not a node.
			if after, err := ownership.Revoke(s, c); err == nil {
				if err := add(s, after, "Revoke", "the coordinator"); err != nil {
					return nil, err
				}
			}
		}
		if after, err := ownership.Abort(s); err == nil {
			if err := add(s, after, "Abort", "the coordinator"); err != nil {
				return nil, err
			}
		}
	}
	return merge(out), nil
}

// merge joins the edges that differ only in the role of the node they
// name next (Revoke may name anyone) into one edge naming "any node".
func merge(es []edge) []edge {
	var out []edge
	idx := map[edge]int{}
	for _, e := range es {
		k := e
		k.next = ""
		if i, ok := idx[k]; ok {
			if out[i].next != e.next {
				out[i].next = "any node"
			}
			continue
		}
		idx[k] = len(out)
		out = append(out, e)
	}
	return out
}

// label is an edge's text: the operation, who asks for it, the epoch's
// change and, for a result that is not Owned, the node it names next; sep
// separates the parts.
func (e edge) label(sep string) string {
	l := e.op + sep + "by " + e.by + sep + "epoch " + e.epoch
	if e.next != "" {
		l += sep + "next: " + e.next
	}
	return l
}

func writeText(w io.Writer, es []edge) {
	fmt.Fprintln(w, "Transitions found by applying every operation to Owned(A, 41), Transferring(A, B, 41, 42), Unowned(42, B):")
	for _, e := range es {
		fmt.Fprintf(w, "  %-12s -> %-12s  %s\n", e.from, e.to, e.label("; "))
	}
}

// writeD2 prints the diagram: a node per shape, an edge per transition,
// each label on several lines.
func writeD2(w io.Writer, es []edge) {
	fmt.Fprintln(w, "direction: down")
	for _, s := range samples {
		fmt.Fprintf(w, "%s: %s\n", shape(s), quote(shape(s)))
	}
	for _, e := range es {
		fmt.Fprintf(w, "%s -> %s: %s\n", e.from, e.to, quote(e.label("\n")))
	}
}

// quote returns s as a D2 double-quoted string (a line break as \n).
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}
