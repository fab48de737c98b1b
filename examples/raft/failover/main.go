// Command failover runs five hashicorp/raft voters in one process, on
// raft's in-memory transport, and takes them through an election, the
// crash of the leader and a network partition, printing what it measures
// of terms, votes and commits. Which voter wins an election and the exact
// term numbers depend on timing, so the program prints only measurements
// that do not: how many voters agree on a leader, how terms compare, how
// many votes a leader holds against the quorum, how many writes each voter
// applied, and what the vote record shows.
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
	"strings"
	"time"

	"github.com/ownership-book/ownership/examples/raft/lab"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "failover:", err)
		os.Exit(1)
	}
}

// fact prints one measurement.
func fact(w io.Writer, what, measured string) {
	fmt.Fprintf(w, "   %-54s %s\n", what+":", measured)
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

// applied reports how many commands each voter in ids has applied: "n on
// each of k" when they agree, every voter's count when they do not.
func applied(l *lab.Lab, ids []string) string {
	counts := make([]int, len(ids))
	for i, id := range ids {
		if v := l.Voter(id); v != nil && v.KV != nil {
			counts[i], _ = v.KV.Applied()
		} else {
			counts[i] = -1
		}
	}
	return summarize(ids, counts)
}

// summarize prints counts[i] for voter ids[i]: "n" for one voter, "n on
// each of k" when all are equal, and otherwise every voter's count, so a
// disagreement is printed, not folded into a verdict; -1 means the voter is
// not running.
func summarize(ids []string, counts []int) string {
	same := true
	for _, c := range counts {
		same = same && c == counts[0]
	}
	if same && len(counts) == 1 && counts[0] >= 0 {
		return fmt.Sprint(counts[0])
	}
	if same && len(counts) > 0 && counts[0] >= 0 {
		return fmt.Sprintf("%d on each of %d", counts[0], len(counts))
	}
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(' ')
		}
		if counts[i] < 0 {
			fmt.Fprintf(&b, "%s=down", id)
		} else {
			fmt.Fprintf(&b, "%s=%d", id, counts[i])
		}
	}
	return b.String()
}

// without returns ids less the one given.
func without(ids []string, id string) []string {
	return slices.DeleteFunc(slices.Clone(ids), func(x string) bool { return x == id })
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
	agree := 0
	if err := lab.WaitFor(ctx, "all voters to name one leader and term", func() bool {
		id, t, ok := l.Leader()
		if !ok {
			return false
		}
		agree = 0
		for _, v := range l.IDs() {
			r := l.Raft(v)
			if _, lid := r.LeaderWithID(); string(lid) == id && r.CurrentTerm() == t {
				agree++
			}
		}
		leader1, term1 = id, t
		return agree == len(l.IDs())
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
	fact(w, "voters naming the same leader in the same term", fmt.Sprintf("%d of 5", agree))
	fact(w, "that term, against the bootstrap term 1", higher(term1, 1))
	quorum := "at least the quorum of 3"
	if votes < 3 {
		quorum = fmt.Sprintf("%d, BELOW the quorum of 3", votes)
	}
	fact(w, "votes the leader holds in its term, its own included", quorum)
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
	_ = l.WaitApplied(ctx, 10)
	fact(w, "10 writes acknowledged; commands applied", applied(l, l.IDs()))

	// ANCHOR: kill
	fmt.Fprintln(w, "\n2. the leader crashes")
	if err := l.Kill(leader1); err != nil {
		return err
	}
	leader2, term2, err := l.WaitLeader(ctx, term1)
	if err != nil {
		return err
	}
	survivors := without(l.IDs(), leader1)
	same := "another voter"
	if leader2 == leader1 {
		same = "THE CRASHED ONE"
	}
	fact(w, "the survivors elect", same)
	fact(w, "its term, against the crashed leader's", higher(term2, term1))
	_ = l.WaitApplied(ctx, 10, leader2)
	fact(w, "commands the new leader has applied", applied(l, []string{leader2}))
	if err := write(10); err != nil {
		return err
	}
	_ = l.WaitApplied(ctx, 20)
	fact(w, "10 more writes acknowledged; applied by survivors", applied(l, survivors))
	if err := l.Restart(leader1); err != nil {
		return err
	}
	_ = l.WaitApplied(ctx, 20, leader1)
	fact(w, "the old leader restarts; commands it applied", applied(l, []string{leader1}))
	cmp := "equal or higher"
	if l.Raft(leader1).CurrentTerm() < term2 {
		cmp = "LOWER"
	}
	fact(w, "its term, against the new leader's", cmp)
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
	outcome := "not acknowledged within 2 s"
	if lost == nil {
		outcome = "ACKNOWLEDGED"
	}
	fact(w, "a write to the leader on the minority side", outcome)
	leader3, term3, err := l.WaitLeader(ctx, term, majority...)
	if err != nil {
		return err
	}
	side := "one of its own voters"
	if !slices.Contains(majority, leader3) {
		side = "A MINORITY VOTER"
	}
	fact(w, "the majority side elects", side)
	fact(w, "its term, against the minority leader's", higher(term3, term))
	if err := write(10); err != nil {
		return err
	}
	_ = l.WaitApplied(ctx, 30, majority...)
	fact(w, "10 writes acknowledged; applied on the majority", applied(l, majority))
	l.Heal()
	_ = l.WaitApplied(ctx, 30)
	fact(w, "after healing, commands applied", applied(l, l.IDs()))
	holding := 0
	for _, id := range l.IDs() {
		if l.Voter(id).KV.Get("lost") != "" {
			holding++
		}
	}
	fact(w, "voters that applied the minority write", fmt.Sprintf("%d of 5", holding))
	// ANCHOR_END: partition

	a := lab.AuditVotes(l.Votes(), 5)
	multi := 0
	for _, ws := range a.Winners {
		if len(ws) > 1 {
			multi++
		}
	}
	fmt.Fprintln(w, "\n4. the record of every RequestVote answered in the run")
	fact(w, "voters that granted two candidates one term", fmt.Sprint(a.DoubleVotes))
	fact(w, "terms in which two candidates had a quorum", fmt.Sprint(multi))
	return nil
}
