// Command fenced runs one handover from A to B past two resource servers
// and shows what each one means by "fenced". The highest-epoch server keeps
// only the highest epoch it has admitted (ownership.HighestSeen); the
// record-checking server compares each write with the record's current
// epoch (ownership.Fence). A, paused after agreeing to the handover, keeps
// writing with its epoch-41 token. Its output is deterministic.
//
//	go run ./examples/ownership/fenced
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ownership-book/ownership/examples/ownership"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fenced:", err)
		os.Exit(1)
	}
}

// servers are the two resource servers in front of one actor.
type servers struct {
	rec     *ownership.Actor
	highest ownership.HighestSeen
}

// write presents a write stamped with e to both servers and returns each
// one's verdict.
func (s *servers) write(e ownership.Epoch) (highest, checking string) {
	return verdict(s.highest.Admit(e)), verdict(ownership.Fence(s.rec.State(), e))
}

func verdict(err error) string {
	var se *ownership.StaleEpochError
	switch {
	case err == nil:
		return "applied"
	case errors.As(err, &se):
		return fmt.Sprintf("refused (%d < %d)", se.Given, se.Current)
	}
	return "refused: " + err.Error()
}

const rowFormat = "  %-26s %-27s %-18s %s\n"

// ANCHOR: run

func run(w io.Writer) error {
	rec, err := ownership.NewActor("doc", ownership.Owned{Owner: "A", Epoch: 41})
	if err != nil {
		return err
	}
	s := &servers{rec: rec}
	fmt.Fprintln(w, "Each write goes to both servers. highest-epoch: keeps the highest epoch it")
	fmt.Fprintln(w, "has admitted. record-checking: compares with the record's current epoch.")
	fmt.Fprintln(w)
	fmt.Fprintf(w, rowFormat, "step", "record", "highest-epoch", "record-checking")
	writeRow := func(who string, e ownership.Epoch) {
		h, c := s.write(e)
		fmt.Fprintf(w, rowFormat, fmt.Sprintf("%s writes at %d", who, e), rec.State(), h, c)
	}
	apply := func(c ownership.Command) error {
		if _, err := rec.Apply(c); err != nil {
			return fmt.Errorf("%v: %w", c, err)
		}
		fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf(rowFormat, c.String(), rec.State(), "", ""), " \n"))
		return nil
	}
	writeRow("A", 41)
	if err := apply(ownership.Command{Op: ownership.OpBeginTransfer, Caller: "A", To: "B", Epoch: 41}); err != nil {
		return err
	}
	writeRow("A (paused)", 41)
	for _, c := range []ownership.Command{
		{Op: ownership.OpCompleteRelease, Caller: "A", Epoch: 42},
		{Op: ownership.OpAcquire, Caller: "B", Epoch: 42},
	} {
		if err := apply(c); err != nil {
			return err
		}
	}
	writeRow("A (paused)", 41)
	writeRow("B", 42)
	writeRow("A (paused)", 41)
	fmt.Fprintln(w)
	fmt.Fprintf(w, "The highest-epoch server admitted A at 41 twice after the record had moved to\n")
	fmt.Fprintf(w, "42; it fenced A only once B's first write at 42 had reached it.\n")
	return nil
}

// ANCHOR_END: run
