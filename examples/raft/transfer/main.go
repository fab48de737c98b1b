// Command transfer hands the leadership of five hashicorp/raft voters from
// one voter to another while a client keeps writing. hashicorp/raft's
// LeadershipTransferToServer brings the target's log up to date and sends
// it TimeoutNow, so it starts an election at once, in a higher term, that
// it wins; meanwhile the old leader refuses new writes. The client retries
// every write that is refused or whose outcome is unknown, and the state
// machine applies each client serial number once, as section 8 of Diego
// Ongaro and John Ousterhout, "In Search of an Understandable Consensus
// Algorithm (Extended Version)", 2014, prescribes. Only facts that do not
// depend on timing are printed.
//
//	go run ./examples/raft/transfer
package main

import (
	"context"
	"fmt"
	"io"
	"os"
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
	go func() {
		defer close(acked)
		for seq := 1; seq <= writes; seq++ {
			if _, err := l.Write(ctx, "client", seq, fmt.Sprintf("k%03d", seq), "v"); err != nil {
				done <- err
				return
			}
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

	_, newTerm, ok := l.Leader()
	fact(w, "the leader hands over to a follower named in advance", ok)
	fact(w, "the new leader's term is higher than the old one's", newTerm > term)
	fact(w, fmt.Sprintf("the client's %d writes are all acknowledged", writes), true)
	once := l.WaitApplied(ctx, writes) == nil
	all := true
	for _, id := range l.IDs() {
		kv := l.Voter(id).KV
		for seq := 1; seq <= writes; seq++ {
			all = all && kv.Get(fmt.Sprintf("k%03d", seq)) == "v"
		}
	}
	fact(w, "every voter applied each write exactly once", once && all)
	return nil
}

func fact(w io.Writer, what string, held bool) {
	answer := "yes"
	if !held {
		answer = "NO"
	}
	fmt.Fprintf(w, "%-60s %s\n", what+":", answer)
}
