package raft

import (
	"errors"
	"slices"
	"testing"
)

// deliverAll delivers every message in flight, and every reply, until the
// network is empty.
func deliverAll(t *testing.T, c *Cluster) {
	t.Helper()
	for len(c.Net) > 0 {
		if err := c.Do(Action{Kind: Deliver, Msg: c.Net[0]}); err != nil {
			t.Fatal(err)
		}
	}
}

func do(t *testing.T, c *Cluster, a Action) {
	t.Helper()
	if err := c.Do(a); err != nil {
		t.Fatal(err)
	}
}

// "If a follower receives no communication over a period of time called
// the election timeout, then it assumes there is no viable leader and
// begins an election to choose a new leader. To begin an election, a
// follower increments its current term and transitions to candidate state.
// It then votes for itself and issues RequestVote RPCs in parallel to each
// of the other servers in the cluster." Reference: Raft §5.2
func TestCampaignStartsElection(t *testing.T) {
	n := NewNode(1, []ID{1, 2, 3}, 0)
	out := n.Campaign()
	if n.Role != Candidate || n.Term != 1 || n.Vote != 1 {
		t.Fatalf("after Campaign: role %v term %d vote %v, want candidate, 1, S1", n.Role, n.Term, n.Vote)
	}
	var to []ID
	for _, m := range out {
		if m.Type != MsgVote || m.Term != 1 {
			t.Errorf("sent %v, want RequestVote in term 1", m)
		}
		to = append(to, m.To)
	}
	if !slices.Equal(to, []ID{2, 3}) {
		t.Errorf("RequestVote sent to %v, want [S2 S3]", to)
	}
}

// "A candidate wins an election if it receives votes from a majority of
// the servers in the full cluster for the same term." One vote short of a
// majority is not enough. Reference: Raft §5.2
func TestCandidateWinsWithMajority(t *testing.T) {
	c := NewCluster(5, 0)
	do(t, c, Action{Kind: Timeout, Node: 1})
	// Deliver the requests to S2 only, and its reply: two votes of five.
	for _, m := range slices.Clone(c.Net) {
		if m.To == 2 {
			do(t, c, Action{Kind: Deliver, Msg: m})
		}
	}
	for _, m := range slices.Clone(c.Net) {
		if m.Type == MsgVoteResp {
			do(t, c, Action{Kind: Deliver, Msg: m})
		}
	}
	if c.Node(1).Role != Candidate {
		t.Fatalf("with 2 of 5 votes S1 is %v, want candidate", c.Node(1).Role)
	}
	deliverAll(t, c)
	if c.Node(1).Role != Leader {
		t.Fatalf("with every vote S1 is %v, want leader", c.Node(1).Role)
	}
}

// "Each server will vote for at most one candidate in a given term, on a
// first-come-first-served basis." Reference: Raft §5.2
func TestVoteAtMostOncePerTerm(t *testing.T) {
	n := NewNode(3, []ID{1, 2, 3}, 0)
	first := n.Step(Message{Type: MsgVote, From: 1, To: 3, Term: 1})
	second := n.Step(Message{Type: MsgVote, From: 2, To: 3, Term: 1})
	again := n.Step(Message{Type: MsgVote, From: 1, To: 3, Term: 1})
	if first[0].Reject || !second[0].Reject || again[0].Reject {
		t.Fatalf("votes: S1 %v, S2 %v, S1 again %v; want granted, rejected, granted", first[0], second[0], again[0])
	}
	// The mutant votes twice.
	m := NewNode(3, []ID{1, 2, 3}, VoteTwice)
	m.Step(Message{Type: MsgVote, From: 1, To: 3, Term: 1})
	if r := m.Step(Message{Type: MsgVote, From: 2, To: 3, Term: 1}); r[0].Reject {
		t.Fatal("VoteTwice refused a second vote in the same term")
	}
}

// "Raft determines which of two logs is more up-to-date by comparing the
// index and term of the last entries in the logs. If the logs have last
// entries with different terms, then the log with the later term is more
// up-to-date. If the logs end with the same term, then whichever log is
// longer is more up-to-date." The voter denies its vote if its own log is
// more up-to-date than the candidate's. Reference: Raft §5.4.1
func TestVoteRequiresUpToDateLog(t *testing.T) {
	cases := []struct {
		lastIndex, lastTerm uint64
		grant               bool
	}{
		{1, 3, true},  // later last term, shorter log
		{2, 2, true},  // same last term, same length
		{3, 2, true},  // same last term, longer
		{1, 2, false}, // same last term, shorter
		{5, 1, false}, // earlier last term, longer
	}
	for _, tc := range cases {
		n := NewNode(2, []ID{1, 2, 3}, 0)
		n.Term = 2
		n.Log = []Entry{{Term: 1, Data: "a"}, {Term: 2, Data: "b"}}
		r := n.Step(Message{Type: MsgVote, From: 1, To: 2, Term: 3, LastIndex: tc.lastIndex, LastTerm: tc.lastTerm})
		if got := !r[0].Reject; got != tc.grant {
			t.Errorf("candidate last %d@%d against voter last 2@2: granted %v, want %v", tc.lastIndex, tc.lastTerm, got, tc.grant)
		}
	}
}

// "If a server receives a request with a stale term number, it rejects
// the request." And: "If one server's current term is smaller than the
// other's, then it updates its current term to the larger value. If a
// candidate or leader discovers that its term is out of date, it
// immediately reverts to follower state." Reference: Raft §5.1
func TestTermsFenceStaleLeaders(t *testing.T) {
	n := NewNode(2, []ID{1, 2, 3}, 0)
	n.Term = 5
	r := n.Step(Message{Type: MsgApp, From: 1, To: 2, Term: 4, Entries: []Entry{{Term: 4, Data: "x"}}})
	if !r[0].Reject || r[0].Term != 5 || len(n.Log) != 0 {
		t.Fatalf("AppendEntries of term 4 at a term-5 server: reply %v, log %v; want rejected with term 5, log unchanged", r[0], n.Log)
	}
	l := NewNode(1, []ID{1, 2, 3}, 0)
	l.Campaign()
	l.Step(Message{Type: MsgVoteResp, From: 2, To: 1, Term: 1})
	if l.Role != Leader {
		t.Fatal("setup: S1 did not win")
	}
	l.Step(r[0])
	if l.Role != Follower || l.Term != 5 {
		t.Fatalf("leader of term 1 that hears term 5 is %v in term %d, want follower in 5", l.Role, l.Term)
	}
}

// "When sending an AppendEntries RPC, the leader includes the index and
// term of the entry in its log that immediately precedes the new entries.
// If the follower does not find an entry in its log with the same index
// and term, then it refuses the new entries." Reference: Raft §5.3
func TestAppendEntriesConsistencyCheck(t *testing.T) {
	n := NewNode(2, []ID{1, 2, 3}, 0)
	n.Log = []Entry{{Term: 1, Data: "a"}}
	for _, tc := range []struct {
		prevIndex, prevTerm uint64
		reject              bool
	}{{1, 1, false}, {1, 2, true}, {2, 1, true}, {0, 0, false}} {
		f := n.Clone()
		r := f.Step(Message{Type: MsgApp, From: 1, To: 2, Term: 2, PrevIndex: tc.prevIndex, PrevTerm: tc.prevTerm,
			Entries: []Entry{{Term: 2, Data: "b"}}})
		if r[0].Reject != tc.reject {
			t.Errorf("prev %d@%d against log [1:a]: rejected %v, want %v", tc.prevIndex, tc.prevTerm, r[0].Reject, tc.reject)
		}
	}
}

// "If an existing entry conflicts with a new one (same index but different
// terms), delete the existing entry and all that follow it", and append
// the new entries; entries already present are kept, so a duplicated or
// reordered AppendEntries changes nothing (§5.5). Reference: Raft §5.3,
// Figure 2
func TestFollowerOverwritesConflictsOnly(t *testing.T) {
	n := NewNode(2, []ID{1, 2, 3}, 0)
	n.Log = []Entry{{1, "a"}, {1, "b"}, {1, "c"}}
	n.Step(Message{Type: MsgApp, From: 1, To: 2, Term: 2, PrevIndex: 1, PrevTerm: 1, Entries: []Entry{{2, "x"}}})
	if got := n.LogString(); got != "a/t1 x/t2" {
		t.Fatalf("after a conflicting entry at index 2: log %q, want %q", got, "a/t1 x/t2")
	}
	n.Step(Message{Type: MsgApp, From: 1, To: 2, Term: 2, PrevIndex: 2, PrevTerm: 2, Entries: []Entry{{2, "y"}}})
	// An old AppendEntries arrives late: it must not truncate index 3.
	n.Step(Message{Type: MsgApp, From: 1, To: 2, Term: 2, PrevIndex: 1, PrevTerm: 1, Entries: []Entry{{2, "x"}}})
	if got := n.LogString(); got != "a/t1 x/t2 y/t2" {
		t.Fatalf("after a late duplicate: log %q, want %q", got, "a/t1 x/t2 y/t2")
	}
}

// "Raft never commits log entries from previous terms by counting
// replicas. Only log entries from the leader's current term are committed
// by counting replicas; once an entry from the current term has been
// committed in this way, then all prior entries are committed indirectly
// because of the Log Matching Property." Reference: Raft §5.4.2
func TestLeaderCommitsOnlyEntriesOfItsTerm(t *testing.T) {
	for _, fault := range []Fault{0, CommitByCounting} {
		c := NewCluster(3, fault)
		// S1 holds an entry of term 1 that nobody else has.
		c.Node(1).Log = []Entry{{1, "old"}}
		c.Node(1).Term = 1
		do(t, c, Action{Kind: Timeout, Node: 1}) // term 2
		deliverAll(t, c)
		do(t, c, Action{Kind: Replicate, Node: 1, To: 2})
		deliverAll(t, c)
		do(t, c, Action{Kind: Replicate, Node: 1, To: 2}) // after the rejection, from index 1
		deliverAll(t, c)
		got := c.Node(1).Commit
		want := uint64(0)
		if fault == CommitByCounting {
			want = 1
		}
		if got != want {
			t.Fatalf("fault %v: old entry on 2 of 3 servers, commit index %d, want %d", fault, got, want)
		}
		if fault == 0 {
			do(t, c, Action{Kind: Propose, Node: 1})
			do(t, c, Action{Kind: Replicate, Node: 1, To: 2})
			deliverAll(t, c)
			if c.Node(1).Commit != 2 {
				t.Fatalf("after an entry of term 2 reached a majority: commit %d, want 2 (both entries)", c.Node(1).Commit)
			}
		}
	}
}

// "Persistent state on all servers: (Updated on stable storage before
// responding to RPCs) currentTerm, votedFor, log[]"; commitIndex and
// lastApplied are volatile. A restarted server keeps its vote, so it
// cannot vote twice in a term by crashing. Reference: Raft Figure 2
func TestRestartKeepsTermVoteAndLog(t *testing.T) {
	n := NewNode(3, []ID{1, 2, 3}, 0)
	n.Step(Message{Type: MsgVote, From: 1, To: 3, Term: 4})
	n.Step(Message{Type: MsgApp, From: 1, To: 3, Term: 4, Entries: []Entry{{4, "a"}}, Commit: 1})
	n.Apply()
	n.Restart()
	if n.Term != 4 || n.Vote != 1 || n.LogString() != "a/t4" || n.Commit != 0 || n.Applied != 0 || n.Role != Follower {
		t.Fatalf("after restart: term %d vote %v log %q commit %d applied %d role %v", n.Term, n.Vote, n.LogString(), n.Commit, n.Applied, n.Role)
	}
	if r := n.Step(Message{Type: MsgVote, From: 2, To: 3, Term: 4, LastIndex: 1, LastTerm: 4}); !r[0].Reject {
		t.Fatal("a restarted server voted a second time in term 4")
	}
}

func TestProposeOnFollower(t *testing.T) {
	n := NewNode(1, []ID{1, 2, 3}, 0)
	if _, err := n.Propose("x"); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("Propose on a follower: %v, want ErrNotLeader", err)
	}
}
