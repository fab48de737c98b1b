// Command staleread shows why a Raft leader must confirm its leadership
// before it answers a read. Five hashicorp/raft voters run in one process;
// voter A leads, then is cut off from the others, which elect a new leader
// and commit x = 2. A has not heard of it: it still believes it is the
// leader, and a read served from its local state returns x = 1, a value
// that was overwritten before the read began. The same read guarded by
// VerifyLeader is refused, and a read on the real leader guarded by
// VerifyLeader and Barrier returns x = 2. Rule: Diego Ongaro and John
// Ousterhout, "In Search of an Understandable Consensus Algorithm
// (Extended Version)", 2014, section 8.
//
// A is given a leader lease of a minute (hashicorp/raft's default is
// 500 ms) so that the window in which it wrongly believes it leads is long
// enough to show on any machine; a shorter lease narrows the window, it
// does not close it.
//
//	go run ./examples/raft/staleread
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/hashicorp/raft"

	"github.com/ownership-book/ownership/examples/raft/lab"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "staleread:", err)
		os.Exit(1)
	}
}

func run(w io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	long := lab.Timing{HeartbeatTimeout: time.Minute, ElectionTimeout: time.Minute, LeaderLeaseTimeout: time.Minute}
	l, err := lab.Start(lab.Options{Voters: 5, Override: map[string]lab.Timing{"A": long}})
	if err != nil {
		return err
	}
	defer l.Close()
	others := []string{"B", "C", "D", "E"}

	// A never times out by itself; the first leader hands over to it.
	if err := lab.WaitFor(ctx, "A to lead", func() bool {
		id, _, ok := l.Leader()
		if ok && id != "A" {
			_ = l.Raft(id).LeadershipTransferToServer("A", "A").Error()
		}
		return ok && id == "A" && l.Raft("A").VerifyLeader().Error() == nil
	}); err != nil {
		return err
	}
	if _, err := l.Write(ctx, "client", 1, "x", "1"); err != nil {
		return err
	}
	termA := l.Raft("A").CurrentTerm()
	fmt.Fprintln(w, "five voters A-E; A leads and x = 1 is committed")

	// ANCHOR: stale
	l.Partition([]string{"A"})
	leader, term, err := l.WaitLeader(ctx, termA, others...)
	if err != nil {
		return err
	}
	if _, err := l.Write(ctx, "client", 2, "x", "2"); err != nil {
		return err
	}
	fact(w, "A is cut off; B-E elect a leader in a higher term, commit x = 2", yesno(term > termA))

	a := l.Raft("A")
	fact(w, "A still believes it is the leader of its old term", yesno(a.State() == raft.Leader && a.CurrentTerm() == termA))
	x := l.Voter("A").KV.Get("x")
	if x != "2" {
		x += " (stale)"
	}
	fact(w, "read on A from its local state, without VerifyLeader", "x = "+x)

	verify := make(chan error, 1)
	go func() { verify <- a.VerifyLeader().Error() }()
	l.Heal() // A's messages reach the others again; their replies carry the new term
	err = <-verify
	switch {
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipLost):
		fact(w, "the same read on A after VerifyLeader", "refused: A learned the higher term")
	default:
		fact(w, "the same read on A after VerifyLeader", fmt.Sprintf("NOT refused (%v)", err))
	}
	// ANCHOR_END: stale

	r := l.Raft(leader)
	if err := r.VerifyLeader().Error(); err != nil {
		return fmt.Errorf("verify on the leader: %w", err)
	}
	if err := r.Barrier(time.Minute).Error(); err != nil {
		return fmt.Errorf("barrier on the leader: %w", err)
	}
	fact(w, "a read on the new leader after VerifyLeader and Barrier", "x = "+l.Voter(leader).KV.Get("x"))
	return nil
}

func fact(w io.Writer, what, answer string) {
	fmt.Fprintf(w, "%-64s %s\n", what+":", answer)
}

func yesno(b bool) string {
	if b {
		return "yes"
	}
	return "NO"
}
