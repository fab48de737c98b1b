// Command handover walks one actor through a handover from A to B, a refused
// transition, an aborted handover from B to C and a duplicated request that
// arrives after the epoch moved on, and prints after every step whether each
// token may mutate (MayMutate) and would pass a resource server's fence
// (ValidFence). Every request carries the epoch it was issued at (each step
// is printed as Op@epoch). Its output is deterministic.
//
//	go run ./examples/ownership/handover
package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ownership-book/ownership/examples/ownership"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "handover:", err)
		os.Exit(1)
	}
}

// column is one token followed through the run. It is shown as "-" until the
// actor has issued it.
type column struct {
	holder ownership.NodeID
	epoch  ownership.Epoch
}

// table prints one row per step: the step, the state, and for each column
// "may_mutate/valid_fence" as yes/no, in fixed-width columns.
type table struct {
	w    io.Writer
	a    *ownership.Actor
	cols []column
}

const rowFormat = "  %-25s %-27s"

func newTable(w io.Writer, a *ownership.Actor, cols ...column) *table {
	t := &table{w: w, a: a, cols: cols}
	line := fmt.Sprintf(rowFormat, "step", "state")
	for _, c := range cols {
		line += fmt.Sprintf(" %-8s", fmt.Sprintf("%s@%d", c.holder, c.epoch))
	}
	fmt.Fprintln(w, strings.TrimRight(line, " "))
	return t
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// row prints the actor's state after step.
func (t *table) row(step string) {
	line := fmt.Sprintf(rowFormat, step, t.a.State())
	for _, c := range t.cols {
		tok := ownership.Token{Actor: t.a.ID(), Epoch: c.epoch, Holder: c.holder}
		cell := "-"
		if t.a.WasIssued(tok) {
			cell = yesNo(t.a.MayMutate(tok)) + "/" + yesNo(t.a.ValidFence(tok.Epoch))
		}
		line += fmt.Sprintf(" %-8s", cell)
	}
	fmt.Fprintln(t.w, strings.TrimRight(line, " "))
}

// note prints a free-text row under the step column.
func (t *table) note(step, text string) {
	fmt.Fprintf(t.w, "  %-25s %s\n", step, text)
}

// apply performs c, which must succeed, and prints its row.
func (t *table) apply(c ownership.Command) error {
	if _, err := t.a.Apply(c); err != nil {
		return fmt.Errorf("%v: %w", c, err)
	}
	t.row(c.String())
	return nil
}

// ANCHOR: run

// run prints the whole walk-through to w.
func run(w io.Writer) error {
	a, err := ownership.NewActor("doc", ownership.Owned{Owner: "A", Epoch: 41})
	if err != nil {
		return err
	}
	fmt.Fprintln(w, `Cells: may_mutate/valid_fence of the token holder@epoch ("-": not issued yet).`)

	fmt.Fprintln(w, "\nHandover from A to B:")
	t := newTable(w, a, column{"A", 41}, column{"B", 42})
	t.row("start")
	for _, c := range []ownership.Command{
		{Op: ownership.OpBeginTransfer, Caller: "A", To: "B", Epoch: 41},
		{Op: ownership.OpCompleteRelease, Caller: "A", Epoch: 42},
		{Op: ownership.OpAcquire, Caller: "B", Epoch: 42},
	} {
		if err := t.apply(c); err != nil {
			return err
		}
	}

	fmt.Fprintln(w, "\nA still holds its epoch-41 token and tries to hand the actor to C:")
	if err := refuse(w, a, ownership.Command{Op: ownership.OpBeginTransfer, Caller: "A", To: "C", Epoch: 41}); err != nil {
		return err
	}

	fmt.Fprintln(w, "\nHandover from B to C, aborted by the coordinator:")
	t = newTable(w, a, column{"B", 42}, column{"B", 44})
	t.row("start")
	begin := ownership.Command{Op: ownership.OpBeginTransfer, Caller: "B", To: "C", Epoch: 42}
	for _, c := range []ownership.Command{begin, {Op: ownership.OpAbort, Epoch: 43}} {
		if err := t.apply(c); err != nil {
			return err
		}
	}
	// B's grant naming epoch 43 left for C before the abort; it arrives now.
	t.note("C gets grant for 43", fmt.Sprintf("valid_fence(43) = %s: stale on arrival (current epoch %d)",
		yesNo(a.ValidFence(43)), a.CurrentEpoch()))
	acquireC := ownership.Command{Op: ownership.OpAcquire, Caller: "C", Epoch: 43}
	if _, err = a.Apply(acquireC); err == nil {
		return fmt.Errorf("node C acquired with an abandoned grant")
	}
	t.note(acquireC.String(), "refused: "+err.Error())
	if err := t.apply(ownership.Command{Op: ownership.OpAcquire, Caller: "B", Epoch: 44}); err != nil {
		return err
	}

	// The network duplicated B's BeginTransfer(B -> C) issued at 42. Its
	// caller is the owner again, so without its epoch it would be valid and
	// would start a handover at 44 that nobody asked for.
	fmt.Fprintf(w, "\nThe network delivers a second copy of %v:\n", begin)
	if err := refuse(w, a, begin); err != nil {
		return err
	}

	fmt.Fprintln(w, "\nIssued tokens (the set only grows; epoch 43 was never held):")
	for _, tok := range a.Issued() {
		fmt.Fprintf(w, "  %v  may_mutate=%s\n", tok, yesNo(a.MayMutate(tok)))
	}
	return nil
}

// refuse applies c, which the actor must refuse, and prints the refusal and
// the state before and after it.
func refuse(w io.Writer, a *ownership.Actor, c ownership.Command) error {
	before := a.State()
	_, err := a.Apply(c)
	if err == nil {
		return fmt.Errorf("%v was applied in %v", c, before)
	}
	fmt.Fprintf(w, "  %v refused: %v\n", c, err)
	fmt.Fprintf(w, "  state before and after: %v, %v\n", before, a.State())
	return nil
}

// ANCHOR_END: run
