// Command failover runs five hashicorp/raft voters in one process, on
// raft's in-memory transport, and takes them through an election, the
// crash of the leader and a network partition, printing the terms, votes
// and commits it observes. Which voter wins an election and the exact term
// numbers depend on timing, so the program prints only facts that do not:
// relations between terms, quorums, and which writes every voter applied.
// Rules: Diego Ongaro and John Ousterhout, "In Search of an Understandable
// Consensus Algorithm (Extended Version)", 2014, sections 5.1 to 5.4.
//
//	go run ./examples/raft/failover
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/ownership-book/ownership/examples/raft/lab"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "failover:", err)
		os.Exit(1)
	}
}

// fact prints one observed fact and whether it held.
func fact(w io.Writer, what string, held bool) {
	answer := "yes"
	if !held {
		answer = "NO"
	}
	fmt.Fprintf(w, "   %-58s %s\n", what+":", answer)
}

func run(w io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l, err := lab.Start(lab.Options{Voters: 5})
	if err != nil {
		return err
	}
	defer l.Close()
	fmt.Fprintln(w, "five voters A-E, hashicorp/raft on its in-memory transport")

	// ANCHOR: elect
	var leader1 string
	var term1 uint64
	if err := lab.WaitFor(ctx, "all voters to name one leader and term", func() bool {
		id, t, ok := l.Leader()
		if !ok {
			return false
		}
		for _, v := range l.IDs() {
			r := l.Raft(v)
			if _, lid := r.LeaderWithID(); string(lid) != id || r.CurrentTerm() != t {
				return false
			}
		}
		leader1, term1 = id, t
		return true
	}); err != nil {
		return err
	}
	votes := 1 // its own
	for _, v := range l.Votes() {
		if v.Term == term1 && v.Candidate == leader1 && v.Granted {
			votes++
		}
	}
	fmt.Fprintln(w, "\n1. election")
	fact(w, "all five voters name one leader and one term", true)
	fact(w, "that term is above the bootstrap term 1", term1 > 1)
	fact(w, "the leader won 3 or more of the 5 votes of that term", votes >= 3)
	// ANCHOR_END: elect

	writes := 0
	write := func(n int) error {
		for range n {
			writes++
			if _, err := l.Write(ctx, "client", writes, fmt.Sprintf("k%d", writes), "v"); err != nil {
				return err
			}
		}
		return nil
	}
	if err := write(10); err != nil {
		return err
	}
	fact(w, "10 writes acknowledged; all five voters applied them", l.WaitApplied(ctx, 10) == nil)

	// ANCHOR: kill
	fmt.Fprintln(w, "\n2. the leader crashes")
	if err := l.Kill(leader1); err != nil {
		return err
	}
	leader2, term2, err := l.WaitLeader(ctx, term1)
	if err != nil {
		return err
	}
	fact(w, "the four survivors elect a new leader in a higher term", term2 > term1 && leader2 != leader1)
	fact(w, "the new leader holds all 10 acknowledged writes", l.WaitApplied(ctx, 10, leader2) == nil)
	if err := write(10); err != nil {
		return err
	}
	fact(w, "10 more writes commit with four voters of five", l.WaitApplied(ctx, 20) == nil)
	if err := l.Restart(leader1); err != nil {
		return err
	}
	caught := l.WaitApplied(ctx, 20, leader1) == nil
	fact(w, "the old leader restarts, learns the new term, applies 20", caught && l.Raft(leader1).CurrentTerm() >= term2)
	// ANCHOR_END: kill

	// ANCHOR: partition
	fmt.Fprintln(w, "\n3. the network splits: the leader and one follower | three voters")
	leader, term, err := l.WaitLeader(ctx, 0)
	if err != nil {
		return err
	}
	var minority, majority []string
	for _, id := range l.IDs() {
		if id == leader || (len(minority) == 1 && id != leader) {
			minority = append(minority, id)
		} else {
			majority = append(majority, id)
		}
	}
	if len(minority) < 2 { // the leader was the last voter
		minority, majority = append(minority, majority[0]), majority[1:]
	}
	slices.Sort(minority)
	l.Partition(minority)
	lost := l.Apply(leader, fmt.Sprintf("minority 1 set lost %s", leader), 2*time.Second)
	fact(w, "a write to the old leader (minority side) is refused", lost != nil)
	leader3, term3, err := l.WaitLeader(ctx, term, majority...)
	if err != nil {
		return err
	}
	fact(w, "the majority side elects a leader in a higher term", term3 > term && leader3 != leader)
	if err := write(10); err != nil {
		return err
	}
	fact(w, "10 writes commit on the majority side", l.WaitApplied(ctx, 30, majority...) == nil)
	l.Heal()
	converged := l.WaitApplied(ctx, 30) == nil
	absent := true
	for _, id := range l.IDs() {
		absent = absent && l.Voter(id).KV.Get("lost") == ""
	}
	fact(w, "after healing, all five applied the same 30 writes", converged)
	fact(w, "and none applied the unacknowledged minority write", absent)
	// ANCHOR_END: partition

	a := lab.AuditVotes(l.Votes(), 5)
	multi := 0
	for _, ws := range a.Winners {
		if len(ws) > 1 {
			multi++
		}
	}
	fmt.Fprintln(w, "\n4. the record of every RequestVote answered in the run")
	fact(w, "no voter granted its vote to two candidates in one term", a.DoubleVotes == 0)
	fact(w, "no term had two candidates with a quorum of votes", multi == 0)
	return nil
}
