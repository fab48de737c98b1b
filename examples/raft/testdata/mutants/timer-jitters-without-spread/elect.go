package raft

import (
	"container/heap"
	"math/rand/v2"
	"slices"
	"time"
)

// ElectionSetup describes the leader-crash experiment of Raft §9.3
// (Figure 16), run in simulated time: a cluster whose leader broadcasts one
// last heartbeat and crashes at a uniformly random moment within its
// heartbeat interval, and whose followers elect a new leader with the Nodes
// of this package. Durations are simulated; nothing sleeps.
type ElectionSetup struct {
	Servers int // cluster size; 0 means 5, as in the paper
	// Election timeouts are drawn uniformly from [TimeoutMin, TimeoutMax],
	// afresh every time a timer is reset (Raft §5.2). TimeoutMin ==
	// TimeoutMax is "no randomness".
	TimeoutMin, TimeoutMax time.Duration
	// Every message spends a network delay drawn uniformly from
	// [DelayMin, DelayMax] on the way, and a voter that changed its term
	// or vote writes them to disk for DiskWrite before it replies (Figure
	// 2: persistent state is updated on stable storage before responding
	// to RPCs). A candidate sends its requests while it writes its own
	// vote. Zero values mean 1–2 ms and 12 ms: a round trip of 14–16 ms,
	// the paper's broadcast time of roughly 15 ms.
	DelayMin, DelayMax time.Duration
	DiskWrite          time.Duration
	Trials             int           // 0 means 1000, as in the paper
	Limit              time.Duration // a trial gives up after this long without a leader; 0 means 10 s
	Seed               uint64
}

// ElectionResult summarises the trials. Times are "time without leader":
// from the crash to the moment a candidate has a quorum of votes.
type ElectionResult struct {
	Trials    int
	Elected   int           // trials that elected a leader within Limit
	Median    time.Duration // over elected trials (0 if none)
	Mean      time.Duration
	Max       time.Duration
	Elections int // elections started, over all trials
	// Split counts split votes over all trials: terms in which more than
	// one server stood as candidate and none won (Raft §5.2). Terms lost
	// by a single candidate whose log was too short are not counted.
	Split int
}

type event struct {
	at   time.Duration
	seq  int // ties broken by scheduling order, so runs are reproducible
	node ID  // timer event when msg is nil
	gen  int
	msg  *Message
}

type events []event

func (q events) Len() int { return len(q) }
func (q events) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q events) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *events) Push(x any)   { *q = append(*q, x.(event)) }
func (q *events) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// ANCHOR: elect

// Elect runs the trials of s and returns their summary. The setup follows
// the paper's (§9.3): the servers' logs have different lengths, so some
// candidates cannot win; the leader's last act is a heartbeat to every
// follower, which synchronises their timers; it crashes uniformly at random
// within its heartbeat interval, which is half the minimum election
// timeout.
func Elect(s ElectionSetup) ElectionResult {
	if s.Servers == 0 {
		s.Servers = 5
	}
	if s.DelayMin == 0 && s.DelayMax == 0 {
		s.DelayMin, s.DelayMax = time.Millisecond, 2*time.Millisecond
	}
	if s.DiskWrite == 0 {
		s.DiskWrite = 12 * time.Millisecond
	}
	if s.Trials == 0 {
		s.Trials = 1000
	}
	if s.Limit == 0 {
		s.Limit = 10 * time.Second
	}
	r := rand.New(rand.NewPCG(s.Seed, 0xe1ec7))
	res := ElectionResult{Trials: s.Trials}
	var times []time.Duration
	for range s.Trials {
		d, elections, split, ok := trial(s, r)
		res.Elections += elections
		res.Split += split
		if ok {
			res.Elected++
			times = append(times, d)
		}
	}
	if len(times) > 0 {
		slices.Sort(times)
		res.Median = times[len(times)/2]
		res.Max = times[len(times)-1]
		var sum time.Duration
		for _, t := range times {
			sum += t
		}
		res.Mean = sum / time.Duration(len(times))
	}
	return res
}

// ANCHOR_END: elect

func uniform(r *rand.Rand, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(r.Int64N(int64(hi-lo)+1))
}

// trial runs one crash and election; it returns the time without leader,
// the number of elections started, the number of split votes and whether a
// leader was elected.
func trial(s ElectionSetup, r *rand.Rand) (time.Duration, int, int, bool) {
	ids := make([]ID, s.Servers)
	for i := range ids {
		ids[i] = ID(i + 1)
	}
	nodes := make([]*Node, s.Servers)
	for i, id := range ids {
		n := NewNode(id, ids, 0)
		n.Term, n.Vote, n.Lead = 1, 1, 1
		// Logs of different lengths: the leader has three entries, each
		// follower one to three of them.
		k := 3
		if i > 0 {
			k = 1 + r.IntN(3)
		}
		for j := range k {
			n.Log = append(n.Log, Entry{Term: 1, Data: string(rune('a' + j))})
		}
		nodes[i] = n
	}
	leader := nodes[0]
	leader.becomeLeader()

	var q events
	seq := 0
	gen := make([]int, s.Servers)
	push := func(e event) {
		e.seq = seq
		seq++
		heap.Push(&q, e)
	}
	send := func(now time.Duration, ms []Message, disk bool) {
		if disk {
			now += s.DiskWrite
		}
		for _, m := range ms {
			m := m
			push(event{at: now + uniform(r, s.DelayMin, s.DelayMax), msg: &m})
		}
	}
	reset := func(now time.Duration, id ID) {
		gen[id-1]++
		push(event{at: now + uniform(r, s.TimeoutMin, s.TimeoutMax+s.TimeoutMin/10), node: id, gen: gen[id-1]})
	}

	// The leader's last heartbeat, then its crash within the interval.
	send(0, leader.Broadcast(), false)
	crash := uniform(r, 0, s.TimeoutMin/2)
	for _, n := range nodes[1:] {
		reset(0, n.ID) // timers that the heartbeat will reset again
	}
	elections := 0
	candidates := map[uint64]int{} // term -> servers that stood in it
	splits := func(won uint64) int {
		k := 0
		for t, c := range candidates {
			if c > 1 && t != won {
				k++
			}
		}
		return k
	}
	for q.Len() > 0 {
		e := heap.Pop(&q).(event)
		if e.at-crash > s.Limit {
			break
		}
		if e.msg == nil {
			if e.gen != gen[e.node-1] || e.node == leader.ID {
				continue // a timer that was reset, or the crashed leader's
			}
			n := nodes[e.node-1]
			elections++
			send(e.at, n.Campaign(), false)
			candidates[n.Term]++
			reset(e.at, n.ID)
			continue
		}
		m := *e.msg
		if m.To == leader.ID && e.at >= crash {
			continue // the crashed leader hears nothing
		}
		n := nodes[m.To-1]
		term, vote := n.Term, n.Vote
		out := n.Step(m)
		for _, o := range out {
			// A follower restarts its timer when it hears AppendEntries
			// from the leader of its term (even one it must refuse for a
			// gap in its log) or grants a vote (Raft §5.2).
			if (m.Type == MsgApp && m.Term == o.Term) || (m.Type == MsgVote && !o.Reject) {
				reset(e.at, n.ID)
			}
		}
		send(e.at, out, n.Term != term || n.Vote != vote)
		if n.Role == Leader && n.ID != leader.ID {
			return e.at - crash, elections, splits(n.Term), true
		}
	}
	return 0, elections, splits(0), false
}
