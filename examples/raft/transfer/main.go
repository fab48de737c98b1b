// Command transfer hands the leadership of five hashicorp/raft voters from
// one voter to another while a client keeps writing. hashicorp/raft's
// LeadershipTransferToServer brings the target's log up to date and sends
// it TimeoutNow, so it starts an election at once, in a higher term, that
// it wins; meanwhile the old leader refuses new writes. The client retries
// every write that is refused or whose outcome is unknown, and the state
// machine applies each client serial number once, as section 8 of Diego
// Ongaro and John Ousterhout, "In Search of an Understandable Consensus
// Algorithm (Extended Version)", 2014, prescribes. Only facts that do not
// depend on timing are printed, each as the run measured it.
//
//	go run ./examples/raft/transfer
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/raft"

	"github.com/ownership-book/ownership/examples/raft/lab"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "transfer:", err)
		os.Exit(1)
	}
}

const writes = 200

func run(w io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l, err := lab.Start(lab.Options{Voters: 5})
	if err != nil {
		return err
	}
	defer l.Close()
	from, term, err := l.WaitLeader(ctx, 0)
	if err != nil {
		return err
	}
	to := "E"
	if from == to {
		to = "D"
	}
	fmt.Fprintf(w, "five voters A-E; a client writes %d keys, one at a time, with serial numbers 1-%d\n", writes, writes)

	// ANCHOR: transfer
	acked := make(chan int, writes)
	done := make(chan error, 1)
	ackedCount := make(chan int, 1)
	go func() {
		defer close(acked)
		n := 0
		defer func() { ackedCount <- n }()
		for seq := 1; seq <= writes; seq++ {
			if _, err := l.Write(ctx, "client", seq, fmt.Sprintf("k%03d", seq), "v"); err != nil {
				done <- err
				return
			}
			n++
			acked <- seq
		}
		done <- nil
	}()
	for seq := range acked {
		if seq == writes/4 {
			break
		}
	}
	// Hand over after a quarter of the writes, while the rest go on.
	if err := lab.WaitFor(ctx, "the transfer", func() bool {
		if id, _, ok := l.Leader(); ok && id != to {
			_ = l.Raft(id).LeadershipTransferToServer(raft.ServerID(to), raft.ServerAddress(to)).Error()
		}
		id, _, ok := l.Leader()
		return ok && id == to
	}); err != nil {
		return err
	}
	if err := <-done; err != nil {
		return err
	}
	// ANCHOR_END: transfer

	id, newTerm, ok := l.Leader()
	handed := "the named follower"
	if !ok || id != to {
		handed = "NOT the named follower"
	}
	fact(w, "leadership moved to", handed)
	fact(w, "the new leader's term, against the old one's", higher(newTerm, term))
	fact(w, "writes the client saw acknowledged", fmt.Sprintf("%d of %d", <-ackedCount, writes))
	_ = l.WaitApplied(ctx, writes)
	var counts []int
	missing := 0
	for _, id := range l.IDs() {
		kv := l.Voter(id).KV
		n, _ := kv.Applied()
		counts = append(counts, n)
		for seq := 1; seq <= writes; seq++ {
			if kv.Get(fmt.Sprintf("k%03d", seq)) != "v" {
				missing++
			}
		}
	}
	fact(w, "serial numbers applied, per voter", perVoter(l.IDs(), counts))
	fact(w, "keys missing on some voter", fmt.Sprint(missing))
	return nil
}

// fact prints one measurement.
func fact(w io.Writer, what, measured string) {
	fmt.Fprintf(w, "%-46s %s\n", what+":", measured)
}

// higher compares a term with an earlier one.
func higher(t, than uint64) string {
	switch {
	case t > than:
		return "higher"
	case t == than:
		return "EQUAL"
	}
	return "LOWER"
}

// perVoter prints counts[i] for voter ids[i], as "n on each of k" when all
// are equal and voter by voter when they are not.
func perVoter(ids []string, counts []int) string {
	if len(counts) > 0 && !slices.ContainsFunc(counts, func(c int) bool { return c != counts[0] }) {
		return fmt.Sprintf("%d on each of %d", counts[0], len(counts))
	}
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%d", id, counts[i])
	}
	return b.String()
}
