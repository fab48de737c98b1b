package raft

import (
	"errors"
	"fmt"
	"strings"
)

// ID names a server: 1, 2, 3, … printed S1, S2, S3 as in the paper's
// figures. 0 means "none" (no vote, no known leader).
type ID int

func (id ID) String() string {
	if id == 0 {
		return "-"
	}
	return fmt.Sprintf("S%d", int(id))
}

// Role is a server's state in Raft's state diagram (Raft §5.1, Figure 4).
type Role uint8

const (
	Follower Role = iota
	Candidate
	Leader
)

func (r Role) String() string {
	switch r {
	case Follower:
		return "follower"
	case Candidate:
		return "candidate"
	case Leader:
		return "leader"
	}
	return fmt.Sprintf("Role(%d)", int(r))
}

// Entry is one log entry: the term in which a leader created it and the
// command it carries (Raft §5.3, Figure 6). Its index is its position in the
// log, counted from 1.
type Entry struct {
	Term uint64
	Data string
}

// String prints the entry as data/tterm, e.g. "S1.2/t2".
func (e Entry) String() string { return fmt.Sprintf("%s/t%d", e.Data, e.Term) }

// Fault is a set of deliberate departures from the paper's rules, for
// negative controls: each one switches a single rule off, so that a check
// can show what the rule was preventing. The zero value is Raft as the
// paper specifies it.
type Fault uint8

const (
	// CommitByCounting lets a leader commit an entry of an earlier term as
	// soon as a majority stores it, which Raft §5.4.2 forbids (Figure 8).
	CommitByCounting Fault = 1 << iota
	// GrantStaleVotes drops the election restriction: a voter grants its
	// vote even to a candidate whose log is less up-to-date (Raft §5.4.1).
	GrantStaleVotes
	// VoteTwice lets a voter vote for a second candidate in the same term
	// (Raft §5.2: "each server will vote for at most one candidate in a
	// given term").
	VoteTwice
	// SkipPrevCheck drops AppendEntries' consistency check on prevLogTerm
	// (Raft §5.3): a follower appends after prevLogIndex whatever term it
	// holds there.
	SkipPrevCheck
)

var faultNames = []string{"commit-by-counting", "grant-stale-votes", "vote-twice", "skip-prev-check"}

func (f Fault) String() string {
	if f == 0 {
		return "none"
	}
	var s []string
	for i, name := range faultNames {
		if f&(1<<i) != 0 {
			s = append(s, name)
		}
	}
	return strings.Join(s, "+")
}

// MsgType is one of Raft's two RPCs and their replies (Raft §5, Figure 2).
type MsgType uint8

const (
	MsgVote     MsgType = iota // RequestVote
	MsgVoteResp                // RequestVote reply
	MsgApp                     // AppendEntries (a heartbeat when it carries no entries)
	MsgAppResp                 // AppendEntries reply
)

func (t MsgType) String() string {
	return [...]string{"RequestVote", "VoteReply", "AppendEntries", "AppendReply"}[t]
}

// Message is one RPC or reply. Which fields matter depends on Type, as in
// Figure 2 of the paper:
//
//	MsgVote      Term, LastIndex, LastTerm (the candidate's last log entry)
//	MsgVoteResp  Term, Reject (vote not granted)
//	MsgApp       Term, PrevIndex, PrevTerm, Entries, Commit (leaderCommit)
//	MsgAppResp   Term, Reject, Index (on success: the last index the
//	             follower now matches; on rejection: the PrevIndex refused)
type Message struct {
	Type      MsgType
	From, To  ID
	Term      uint64
	LastIndex uint64
	LastTerm  uint64
	PrevIndex uint64
	PrevTerm  uint64
	Entries   []Entry
	Commit    uint64
	Reject    bool
	Index     uint64
}

func (m Message) String() string {
	s := fmt.Sprintf("%s %s->%s term %d", m.Type, m.From, m.To, m.Term)
	switch m.Type {
	case MsgVote:
		s += fmt.Sprintf(" last %d@%d", m.LastIndex, m.LastTerm)
	case MsgApp:
		s += fmt.Sprintf(" prev %d@%d entries %v commit %d", m.PrevIndex, m.PrevTerm, m.Entries, m.Commit)
	case MsgVoteResp, MsgAppResp:
		if m.Reject {
			s += " rejected"
		} else {
			s += " granted"
		}
		if m.Type == MsgAppResp {
			s += fmt.Sprintf(" index %d", m.Index)
		}
	}
	return s
}

// ErrNotLeader is returned by Propose on a server that is not leader.
var ErrNotLeader = errors.New("raft: not the leader")

// Node is one Raft server as a pure state machine: messages in, messages
// out, no clock, no network, no goroutines (the shape of etcd's raft
// package). The caller delivers messages with Step, fires election timeouts
// with Campaign, and asks a leader to send AppendEntries with Replicate or
// Broadcast; timers and transport live outside.
//
// Term, Vote and Log are the persistent state of Figure 2 and survive
// Restart; everything else is volatile. A Node is not safe for concurrent
// use.
type Node struct {
	ID    ID
	Peers []ID // every voter, this one included, in order
	Fault Fault

	// Persistent state (Raft §5, Figure 2).
	Term uint64  // currentTerm
	Vote ID      // votedFor in Term, 0 for none
	Log  []Entry // Log[i-1] is the entry at index i

	// Volatile state.
	Role    Role
	Commit  uint64 // commitIndex
	Applied uint64 // lastApplied
	Lead    ID     // the leader of Term as far as this server knows

	votes map[ID]bool   // candidate: votes granted in Term
	next  map[ID]uint64 // leader: nextIndex per peer
	match map[ID]uint64 // leader: matchIndex per peer (self included)
}

// NewNode returns server id of a cluster whose voters are peers (id
// included), as a follower in term 0 with an empty log.
func NewNode(id ID, peers []ID, fault Fault) *Node {
	return &Node{ID: id, Peers: append([]ID(nil), peers...), Fault: fault}
}

// Clone returns a deep copy of n.
func (n *Node) Clone() *Node {
	c := *n
	// Peers is never changed after NewNode, so the copy shares it.
	c.Log = append([]Entry(nil), n.Log...)
	c.votes = cloneMap(n.votes)
	c.next = cloneMap(n.next)
	c.match = cloneMap(n.match)
	return &c
}

func cloneMap[V any](m map[ID]V) map[ID]V {
	if m == nil {
		return nil
	}
	c := make(map[ID]V, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// LastIndex is the index of the last log entry, 0 for an empty log.
func (n *Node) LastIndex() uint64 { return uint64(len(n.Log)) }

// TermAt returns the term of the entry at index i, 0 for index 0 or an
// index past the end of the log.
func (n *Node) TermAt(i uint64) uint64 {
	if i == 0 || i > n.LastIndex() {
		return 0
	}
	return n.Log[i-1].Term
}

func (n *Node) quorum() int { return len(n.Peers)/2 + 1 }

// Restart models a crash and a restart from stable storage: Term, Vote and
// Log survive, the volatile state is lost and the server starts again as a
// follower (Raft §5, Figure 2). Its state machine is rebuilt by applying
// the log again from index 1 as entries become known to be committed.
func (n *Node) Restart() {
	n.Role, n.Commit, n.Applied, n.Lead = Follower, 0, 0, 0
	n.votes, n.next, n.match = nil, nil, nil
}

// becomeFollower moves to term (clearing the vote when the term is new) and
// records lead as the known leader.
func (n *Node) becomeFollower(term uint64, lead ID) {
	if term > n.Term {
		n.Term, n.Vote = term, 0
	}
	n.Role, n.Lead = Follower, lead
	n.votes, n.next, n.match = nil, nil, nil
}

// ANCHOR: campaign

// Campaign is what a server does when its election timeout fires (Raft
// §5.2): it increments its term, becomes a candidate, votes for itself and
// asks every other voter for its vote. A leader ignores the timeout. In a
// one-voter cluster the candidate wins at once.
func (n *Node) Campaign() []Message {
	if n.Role == Leader {
		return nil
	}
	n.Term++
	n.Role, n.Vote, n.Lead = Candidate, n.ID, 0
	n.votes = map[ID]bool{n.ID: true}
	if len(n.votes) >= n.quorum() {
		n.becomeLeader()
		return nil
	}
	var out []Message
	for _, p := range n.Peers {
		if p != n.ID {
			out = append(out, Message{Type: MsgVote, From: n.ID, To: p, Term: n.Term,
				LastIndex: n.LastIndex(), LastTerm: n.TermAt(n.LastIndex())})
		}
	}
	return out
}

// ANCHOR_END: campaign

func (n *Node) becomeLeader() {
	n.Role, n.Lead = Leader, n.ID
	n.votes = nil
	n.next, n.match = map[ID]uint64{}, map[ID]uint64{}
	for _, p := range n.Peers {
		n.next[p] = n.LastIndex() + 1
		n.match[p] = 0
	}
	n.match[n.ID] = n.LastIndex()
}

// Propose appends data to the leader's log as a new entry of its term and
// returns its index. Nothing is sent: Replicate or Broadcast carry it to the
// followers (Raft §5.3). Errors: ErrNotLeader.
func (n *Node) Propose(data string) (uint64, error) {
	if n.Role != Leader {
		return 0, ErrNotLeader
	}
	n.Log = append(n.Log, Entry{Term: n.Term, Data: data})
	n.match[n.ID] = n.LastIndex()
	n.maybeCommit()
	return n.LastIndex(), nil
}

// Replicate returns the AppendEntries a leader sends to peer to: every
// entry from that peer's nextIndex on, after the entry that precedes them
// (Raft §5.3). ok is false on a server that is not leader, or for itself.
func (n *Node) Replicate(to ID) (m Message, ok bool) {
	if n.Role != Leader || to == n.ID {
		return Message{}, false
	}
	next := n.next[to]
	if next < 1 {
		next = 1
	}
	prev := next - 1
	return Message{Type: MsgApp, From: n.ID, To: to, Term: n.Term,
		PrevIndex: prev, PrevTerm: n.TermAt(prev),
		Entries: append([]Entry(nil), n.Log[prev:]...), Commit: n.Commit}, true
}

// Broadcast returns one AppendEntries for every other voter (heartbeats
// when they carry no entries); nil on a server that is not leader.
func (n *Node) Broadcast() []Message {
	var out []Message
	for _, p := range n.Peers {
		if m, ok := n.Replicate(p); ok {
			out = append(out, m)
		}
	}
	return out
}

// Step handles one incoming message and returns the replies to send.
// Every message carries its sender's term: a server that sees a higher term
// adopts it and becomes a follower, and a request with a lower term is
// refused (Raft §5.1). Messages addressed to another server are ignored.
func (n *Node) Step(m Message) []Message {
	if m.To != n.ID {
		return nil
	}
	if m.Term > n.Term {
		lead := ID(0)
		if m.Type == MsgApp {
			lead = m.From
		}
		n.becomeFollower(m.Term, lead)
	}
	switch m.Type {
	case MsgVote:
		return []Message{n.handleVote(m)}
	case MsgVoteResp:
		n.handleVoteResp(m)
	case MsgApp:
		return []Message{n.handleApp(m)}
	case MsgAppResp:
		n.handleAppResp(m)
	}
	return nil
}

// ANCHOR: vote

// handleVote decides a RequestVote (Raft §5.2, §5.4.1): refuse a stale
// term; grant at most one vote per term, first come first served; and only
// to a candidate whose log is at least as up-to-date as ours, comparing the
// last entries' terms first and then the logs' lengths.
func (n *Node) handleVote(m Message) Message {
	resp := Message{Type: MsgVoteResp, From: n.ID, To: m.From, Term: n.Term, Reject: true}
	if m.Term < n.Term {
		return resp
	}
	free := true
	myLast := n.TermAt(n.LastIndex())
	upToDate := m.LastTerm > myLast || (m.LastTerm == myLast && m.LastIndex >= n.LastIndex())
	if free && (upToDate || n.Fault&GrantStaleVotes != 0) {
		n.Vote = m.From
		resp.Reject = false
	}
	return resp
}

// ANCHOR_END: vote

func (n *Node) handleVoteResp(m Message) {
	if n.Role != Candidate || m.Term != n.Term || m.Reject {
		return
	}
	n.votes[m.From] = true
	if len(n.votes) >= n.quorum() {
		n.becomeLeader()
	}
}

// handleApp applies AppendEntries (Raft §5.3, Figure 2, receiver rules 1–5).
func (n *Node) handleApp(m Message) Message {
	resp := Message{Type: MsgAppResp, From: n.ID, To: m.From, Term: n.Term, Reject: true, Index: m.PrevIndex}
	if m.Term < n.Term {
		return resp // 1: reply false if term < currentTerm
	}
	// A candidate (or, with VoteTwice, a rival leader) that hears from the
	// leader of its own term returns to follower (§5.2).
	n.becomeFollower(m.Term, m.From)
	// 2: reply false if the log has no entry at prevLogIndex whose term
	// matches prevLogTerm.
	if m.PrevIndex > n.LastIndex() {
		return resp
	}
	if n.TermAt(m.PrevIndex) != m.PrevTerm && n.Fault&SkipPrevCheck == 0 {
		return resp
	}
	// 3, 4: delete a conflicting entry and all that follow it; append the
	// entries not already in the log.
	for k, e := range m.Entries {
		i := m.PrevIndex + uint64(k) + 1
		if i <= n.LastIndex() {
			if n.Log[i-1].Term == e.Term {
				continue
			}
			n.Log = n.Log[:i-1]
		}
		n.Log = append(n.Log, e)
	}
	// 5: commitIndex = min(leaderCommit, index of last new entry).
	last := m.PrevIndex + uint64(len(m.Entries))
	if c := min(m.Commit, last); c > n.Commit {
		n.Commit = c
	}
	resp.Reject, resp.Index = false, last
	return resp
}

func (n *Node) handleAppResp(m Message) {
	if n.Role != Leader || m.Term != n.Term {
		return
	}
	if m.Reject {
		// Back nextIndex up past the refused prevLogIndex and retry later.
		if m.Index < n.next[m.From] {
			n.next[m.From] = max(m.Index, 1)
		}
		return
	}
	if m.Index > n.match[m.From] {
		n.match[m.From] = m.Index
	}
	n.next[m.From] = n.match[m.From] + 1
	n.maybeCommit()
}

// ANCHOR: commit

// maybeCommit advances a leader's commitIndex to the highest index N that
// a majority of voters store, but only if the entry at N is of the
// leader's current term (Raft §5.4.2): an entry of an earlier term is
// never committed by counting its replicas; it becomes committed when an
// entry of the current term after it does (Log Matching, §5.3).
func (n *Node) maybeCommit() {
	for i := n.LastIndex(); i > n.Commit; i-- {
		if n.TermAt(i) != n.Term && n.Fault&CommitByCounting == 0 {
			return // earlier entries are of earlier terms too
		}
		count := 0
		for _, p := range n.Peers {
			if n.match[p] >= i {
				count++
			}
		}
		if count >= n.quorum() {
			n.Commit = i
			return
		}
	}
}

// ANCHOR_END: commit

// Apply returns the committed entries not applied yet, in log order, and
// marks them applied (Raft §5.3: a server applies committed entries to its
// state machine in log order). The first has index Applied+1 as it was
// before the call.
func (n *Node) Apply() []Entry {
	if n.Commit <= n.Applied {
		return nil
	}
	out := append([]Entry(nil), n.Log[n.Applied:n.Commit]...)
	n.Applied = n.Commit
	return out
}

// LogString prints the log's entries in index order, e.g. "S1.1/t1 S2.2/t2".
func (n *Node) LogString() string {
	var b strings.Builder
	for i, e := range n.Log {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(e.String())
	}
	return b.String()
}
