package check

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// DefaultBounds are the rows of the chapter's table, sized to run in about
// ten seconds together on two cores.
var DefaultBounds = []Bounds{
	{Nodes: 2, Epochs: 2, Interrupts: 1, InFlight: 2, InOrder: true, Symmetry: true},
	{Nodes: 2, Epochs: 2, Interrupts: 1, InFlight: 2, Symmetry: true},
	{Nodes: 2, Epochs: 2, Dup: 1, Interrupts: 1, InFlight: 2, Symmetry: true},
	{Nodes: 2, Epochs: 2, Loss: 1, Interrupts: 1, InFlight: 2, Symmetry: true},
	{Nodes: 2, Epochs: 2, Interrupts: 2, InFlight: 2, Symmetry: true},
	{Nodes: 2, Epochs: 2, Interrupts: 1, Crashes: 1, InFlight: 2, Symmetry: true},
	{Nodes: 2, Epochs: 2, Interrupts: 1, Rogue: 1, InFlight: 2, Symmetry: true},
	{Nodes: 3, Epochs: 2, Interrupts: 1, InFlight: 2, Symmetry: true},
}

// LargeBounds are further rows, from seconds to a minute or more each.
var LargeBounds = []Bounds{
	{Nodes: 2, Epochs: 2, Dup: 1, Interrupts: 1, InFlight: 2, InOrder: true, Reorder: 1, Symmetry: true},
	{Nodes: 2, Epochs: 2, Dup: 2, Loss: 1, Interrupts: 1, InFlight: 2, Symmetry: true},
	{Nodes: 3, Epochs: 2, Dup: 1, Loss: 1, Interrupts: 1, InFlight: 2, Symmetry: true},
	{Nodes: 2, Epochs: 3, Dup: 1, Interrupts: 2, InFlight: 2, Symmetry: true},
	{Nodes: 2, Epochs: 2, Dup: 1, Loss: 1, Interrupts: 2, Crashes: 1, InFlight: 2, Symmetry: true},
}

// MutationBounds are the bounds the mutation table runs at: small, and
// large enough for every caught mutation's counterexample.
var MutationBounds = Bounds{Nodes: 2, Epochs: 2, Interrupts: 2, Rogue: 1, InFlight: 2, Symmetry: true}

// Options select what WriteReport prints.
type Options struct {
	Bounds []Bounds
	Times  bool // add each run's wall time (not deterministic)
}

// WriteReport runs the bounds table and the mutation table and prints both,
// with the shortest counterexample of each mutation and the shortest run in
// which the highest-epoch server applies a write the record has fenced. It
// returns an error if the real model breaks a property or a mutation goes
// undetected. Without Times the output is deterministic.
func WriteReport(w io.Writer, opt Options) error {
	var failed []string
	fmt.Fprintln(w, "The real model, every state within the bounds. epochs: how many may be allocated")
	fmt.Fprintln(w, "after 41; dup, loss: messages the network may duplicate, lose; reorder: messages")
	fmt.Fprintln(w, "it may deliver ahead of an older one (any: it delivers in any order); intr: Abort,")
	fmt.Fprintln(w, "Revoke or record restart; crash: node crashes; rogue: requests a node sends outside")
	fmt.Fprintln(w, "its role; flight: messages (requests, commands, grants, writes) in flight at once.")
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "nodes\tepochs\tdup\tloss\treorder\tintr\tcrash\trogue\tflight\tstates\ttransitions\tdepth\tresult"
	if opt.Times {
		head += "\ttime"
	}
	fmt.Fprintln(tw, head)
	var contrast []string
	for _, b := range opt.Bounds {
		start := time.Now()
		r := Run(b, Real)
		line := fmt.Sprintf("%d\t%d\t%d\t%d\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s", b.Nodes, b.Epochs, b.Dup, b.Loss, reorder(b), b.Interrupts, b.Crashes, b.Rogue, b.InFlight, r.States, r.Transitions, r.Depth, result(r))
		if opt.Times {
			line += "\t" + time.Since(start).Round(time.Millisecond).String()
		}
		fmt.Fprintln(tw, line)
		if !r.OK() {
			failed = append(failed, fmt.Sprintf("real model at %+v: %s", b, r.Violation.Detail))
		}
		if contrast == nil {
			contrast = r.Contrast
		}
	}
	tw.Flush()
	if contrast != nil {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Allowed, and the difference between the two servers: the highest-epoch server")
		fmt.Fprintln(w, "applies a write the record has already fenced (shortest run, first row):")
		writeTrace(w, contrast)
	}

	b := MutationBounds
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Mutations, one rule changed in each (%d nodes, epochs %d, dup %d, loss %d, intr %d,\n", b.Nodes, b.Epochs, b.Dup, b.Loss, b.Interrupts)
	fmt.Fprintf(w, "crash %d, rogue %d, flight %d); steps: length of the shortest counterexample:\n\n", b.Crashes, b.Rogue, b.InFlight)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "mutation\tstates\tsteps\tverdict")
	var runs []Result
	for _, mut := range Mutations {
		r := Run(b, mut)
		runs = append(runs, r)
		_, equivalent := Equivalent[mut]
		switch {
		case r.OK() && equivalent:
			fmt.Fprintf(tw, "%v\t%d\t-\tsurvives: equivalent\n", mut, r.States)
		case r.OK():
			fmt.Fprintf(tw, "%v\t%d\t-\tsurvives\n", mut, r.States)
			failed = append(failed, fmt.Sprintf("mutation %q not detected", mut))
		default:
			fmt.Fprintf(tw, "%v\t%d\t%d\tcaught: %s\n", mut, r.States, len(r.Trace)-1, result(r))
			if equivalent {
				failed = append(failed, fmt.Sprintf("mutation %q, said to be equivalent, is caught", mut))
			}
		}
	}
	tw.Flush()
	for _, r := range runs {
		if r.OK() {
			if why, ok := Equivalent[r.Mutation]; ok {
				fmt.Fprintf(w, "\n%v: survives, and must:\n", r.Mutation)
				for _, l := range wrap(why, 76) {
					fmt.Fprintf(w, "  %s\n", l)
				}
			}
			continue
		}
		fmt.Fprintf(w, "\n%v:\n  %s.\n", r.Mutation, r.Violation.Detail)
		writeTrace(w, r.Trace)
	}
	r := DuplicatedBeginTransfer()
	if r.OK() {
		failed = append(failed, "the duplicated BeginTransfer was not found without request epochs")
	} else {
		fmt.Fprintf(w, "\nThe fault the chapter names, found with %v: a duplicated\n", NoRequestEpochs)
		fmt.Fprintf(w, "request starts a handover nobody asked for:\n  %s.\n", r.Violation.Detail)
		writeTrace(w, r.Trace)
	}
	if failed != nil {
		return fmt.Errorf("%s", strings.Join(failed, "; "))
	}
	return nil
}

// wrap breaks text into lines of at most width characters, at spaces.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && len(line)+1+len(word) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

func reorder(b Bounds) string {
	if !b.InOrder {
		return "any"
	}
	return fmt.Sprint(b.Reorder)
}

func result(r Result) string {
	if r.OK() {
		return "ok"
	}
	return r.Violation.Property.String()
}

func writeTrace(w io.Writer, trace []string) {
	for i, l := range trace {
		if i == 0 {
			fmt.Fprintf(w, "     %s\n", l)
			continue
		}
		fmt.Fprintf(w, "  %2d %s\n", i, l)
	}
}

// DuplicatedBeginTransfer searches, with NoRequestEpochs, for the shortest
// run in which a duplicated BeginTransfer takes effect after the epoch has
// moved past the one it was issued at, at an epoch where A never asked for
// a handover: the network copies A's BeginTransfer(A -> B)@41, the handover
// it starts is cut short (by the record's restart above its floor, here),
// A acquires again at 43, and the copy arrives.
func DuplicatedBeginTransfer() Result {
	b := Bounds{Nodes: 2, Epochs: 3, Dup: 1, Interrupts: 1, InFlight: 2, Symmetry: true}
	return run(b, NoRequestEpochs, func(v *Violation) bool {
		return v.Property == Intent && strings.HasPrefix(v.Detail, "BeginTransfer(A -> B)@41 took effect at 43")
	})
}
