package raft

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
)

// Cluster is a set of Nodes joined by a network that may lose, delay and
// reorder messages, and whose servers may crash and restart (the failure
// model of Raft §5: non-Byzantine, asynchronous). It is a simulation with
// no clock: every step is an Action chosen by the caller, and after every
// step a Checker checks the paper's Figure 3 properties.
type Cluster struct {
	Nodes []*Node   // Nodes[i] has ID i+1
	Net   []Message // in flight, in no particular order
	Down  []bool    // Down[i]: Nodes[i] has crashed and not restarted
	Check *Checker

	restarts int
}

// NewCluster returns n servers S1…Sn, all followers in term 0, each with
// the given fault (0 for the paper's rules).
func NewCluster(n int, fault Fault) *Cluster {
	ids := make([]ID, n)
	for i := range ids {
		ids[i] = ID(i + 1)
	}
	c := &Cluster{Down: make([]bool, n), Check: &Checker{}}
	for _, id := range ids {
		c.Nodes = append(c.Nodes, NewNode(id, ids, fault))
	}
	return c
}

// Clone returns an independent copy of c, checker history included.
func (c *Cluster) Clone() *Cluster {
	d := &Cluster{Net: slices.Clone(c.Net), Down: slices.Clone(c.Down), Check: c.Check.Clone(), restarts: c.restarts}
	for _, n := range c.Nodes {
		d.Nodes = append(d.Nodes, n.Clone())
	}
	return d
}

// Node returns server id.
func (c *Cluster) Node(id ID) *Node { return c.Nodes[id-1] }

// ActionKind is one kind of step.
type ActionKind uint8

const (
	Timeout   ActionKind = iota // Node's election timeout fires (Campaign)
	Propose                     // leader Node appends a new entry
	Replicate                   // leader Node sends AppendEntries to To
	Deliver                     // message Msg arrives
	Drop                        // message Msg is lost
	Crash                       // Node stops; messages to it are lost
	Restart                     // Node starts again from stable storage
	Reboot                      // Node crashes and restarts in one step
)

// Action is one step of a schedule. Msg is the in-flight message for
// Deliver and Drop (by value, so an Action means the same in any copy of
// the cluster).
type Action struct {
	Kind ActionKind
	Node ID
	To   ID
	Msg  Message
}

func (a Action) String() string {
	switch a.Kind {
	case Timeout:
		return fmt.Sprintf("%s times out", a.Node)
	case Propose:
		return fmt.Sprintf("%s proposes", a.Node)
	case Replicate:
		return fmt.Sprintf("%s sends AppendEntries to %s", a.Node, a.To)
	case Deliver:
		return "deliver " + a.Msg.String()
	case Drop:
		return "drop " + a.Msg.String()
	case Crash:
		return fmt.Sprintf("%s crashes", a.Node)
	case Restart:
		return fmt.Sprintf("%s restarts", a.Node)
	case Reboot:
		return fmt.Sprintf("%s crashes and restarts", a.Node)
	}
	return "?"
}

// Bounds limit the actions a Cluster offers, so that exploration is finite.
// Zero fields mean no limit, except MaxRestarts and MaxReboots (0: no
// crashes).
//
// MaxReboots is for exhaustive search: a crash and its restart are one
// step (Reboot). That loses no behaviour of the servers. While a server is
// down it takes no step, which an idle server may also do, and the messages
// sent to it are lost, which Drop does; its stable storage does not change.
// So every run with a crash at one step and the restart at a later one has
// a run with the same server states at every step, in which the server
// stays up but idle, the messages to it are dropped, and it reboots where
// the original restarted. What the search saves is every interleaving of
// the other servers' steps with a server that is down.
type Bounds struct {
	MaxTerm     uint64 // no election timeout once a server's term reaches it
	MaxLog      int    // no proposal once the leader's log has this many entries
	MaxInFlight int    // no new message sent while this many are in flight
	MaxRestarts int    // crashes in the whole run; one server is down at a time
	MaxReboots  int    // crashes in the whole run, each restarted in the same step
}

// Actions lists the steps enabled in c under b, in a fixed order.
func (c *Cluster) Actions(b Bounds) []Action {
	var out []Action
	full := b.MaxInFlight > 0 && len(c.Net) >= b.MaxInFlight
	for i, n := range c.Nodes {
		if c.Down[i] {
			if b.MaxRestarts > 0 {
				out = append(out, Action{Kind: Restart, Node: n.ID})
			}
			continue
		}
		if n.Role != Leader && (b.MaxTerm == 0 || n.Term < b.MaxTerm) && !full {
			out = append(out, Action{Kind: Timeout, Node: n.ID})
		}
		if n.Role == Leader {
			if b.MaxLog == 0 || len(n.Log) < b.MaxLog {
				out = append(out, Action{Kind: Propose, Node: n.ID})
			}
			if !full {
				for _, p := range n.Peers {
					if p != n.ID {
						out = append(out, Action{Kind: Replicate, Node: n.ID, To: p})
					}
				}
			}
		}
		if c.restarts < b.MaxRestarts && !slices.Contains(c.Down, true) {
			out = append(out, Action{Kind: Crash, Node: n.ID})
		}
		if c.restarts < b.MaxReboots {
			out = append(out, Action{Kind: Reboot, Node: n.ID})
		}
	}
	for _, m := range c.Net {
		out = append(out, Action{Kind: Deliver, Msg: m}, Action{Kind: Drop, Msg: m})
	}
	return out
}

// Do performs a and then checks the Figure 3 properties; it returns the
// first *Violation, or an error for an action that is not possible.
func (c *Cluster) Do(a Action) error {
	switch a.Kind {
	case Timeout:
		c.send(c.Node(a.Node).Campaign()...)
	case Propose:
		n := c.Node(a.Node)
		if _, err := n.Propose(fmt.Sprintf("%s.%d", n.ID, n.LastIndex()+1)); err != nil {
			return fmt.Errorf("%v: %w", a, err)
		}
	case Replicate:
		m, ok := c.Node(a.Node).Replicate(a.To)
		if !ok {
			return fmt.Errorf("%v: %w", a, ErrNotLeader)
		}
		c.send(m)
	case Deliver, Drop:
		k := c.find(a.Msg)
		if k < 0 {
			return fmt.Errorf("%v: no such message in flight", a)
		}
		c.Net = slices.Delete(c.Net, k, k+1)
		if a.Kind == Deliver && !c.Down[a.Msg.To-1] {
			c.send(c.Node(a.Msg.To).Step(a.Msg)...)
		}
	case Crash:
		c.Down[a.Node-1] = true
		c.restarts++
	case Restart:
		c.Down[a.Node-1] = false
		c.Node(a.Node).Restart()
	case Reboot:
		if c.Down[a.Node-1] {
			return fmt.Errorf("%v: the server is down", a)
		}
		c.restarts++
		c.Node(a.Node).Restart()
	}
	return c.Check.Observe(c.Nodes)
}

// send adds messages to the network; a message identical to one already in
// flight is the same message sent twice, which the network may deliver
// once (duplicates change nothing in Raft, §5.5).
func (c *Cluster) send(ms ...Message) {
	for _, m := range ms {
		if c.find(m) < 0 {
			c.Net = append(c.Net, m)
		}
	}
}

func (c *Cluster) find(m Message) int {
	for k, x := range c.Net {
		if x.Type == m.Type && x.From == m.From && x.To == m.To && x.Term == m.Term &&
			x.LastIndex == m.LastIndex && x.LastTerm == m.LastTerm && x.PrevIndex == m.PrevIndex &&
			x.PrevTerm == m.PrevTerm && x.Commit == m.Commit && x.Reject == m.Reject &&
			x.Index == m.Index && slices.Equal(x.Entries, m.Entries) {
			return k
		}
	}
	return -1
}

// Key is a canonical encoding of the whole state (servers, network,
// checker history): two clusters with equal keys behave alike from here on.
// Applied equals Commit after every observation, and Lead decides nothing,
// so neither is part of the key.
func (c *Cluster) Key() string {
	return string(c.appendKey(nil, identity(len(c.Nodes)), nil))
}

// SymmetricKey is the least Key of c over every renaming of its servers
// (S1 S2 S3 as S2 S1 S3, and so on; the proposer named in an entry's data
// is renamed too). The servers run the same code and the properties of
// Figure 3 name no server, so two clusters that are renamings of each other
// reach renamings of the same states and break the same properties (the
// symmetry reduction of C. Norris Ip and David L. Dill, "Better
// Verification Through Symmetry", 1996): an exhaustive search needs to
// visit one of them.
func (c *Cluster) SymmetricKey() string {
	// Only the renamings that list the servers in the order of what names
	// no server (role, term, commit, log terms) can give the least key of
	// the lot that is the same for every renaming of c; usually that is one.
	sigs := make([][]byte, len(c.Nodes))
	for i, n := range c.Nodes {
		s := []byte{byte(n.Role), byte(n.Term), byte(n.Commit), byte(len(n.Log))}
		if c.Down[i] {
			s = append(s, 'd')
		}
		for _, e := range n.Log {
			s = append(s, byte(e.Term))
		}
		sigs[i] = s
	}
	n := len(c.Nodes)
	var best, buf []byte
	for _, p := range permutations(n) {
		inv := p[n+1:]
		ordered := true
		for j := 1; j < n && ordered; j++ {
			ordered = string(sigs[inv[j]-1]) <= string(sigs[inv[j+1]-1])
		}
		if !ordered {
			continue
		}
		buf = c.appendKey(buf[:0], p[:n+1], nil)
		if best == nil || string(buf) < string(best) {
			best, buf = buf, best
		}
	}
	return string(best)
}

func identity(n int) []ID {
	p := make([]ID, n+1)
	for i := range p {
		p[i] = ID(i)
	}
	return p
}

var perms sync.Map // n -> [][]ID

// permutations returns every renaming of servers 1…n as a slice of 2n+2
// IDs: p[old] = new for old in 0…n (0, "none", stays), then its inverse,
// p[n+1+new] = old.
func permutations(n int) [][]ID {
	if ps, ok := perms.Load(n); ok {
		return ps.([][]ID)
	}
	var ps [][]ID
	var gen func(p []ID, k int)
	gen = func(p []ID, k int) {
		if k > n {
			q := slices.Clone(p)
			inv := make([]ID, n+1)
			for old, nw := range p {
				inv[nw] = ID(old)
			}
			ps = append(ps, append(q, inv...))
			return
		}
		for i := k; i <= n; i++ {
			p[k], p[i] = p[i], p[k]
			gen(p, k+1)
			p[k], p[i] = p[i], p[k]
		}
	}
	gen(identity(n), 1)
	perms.Store(n, ps)
	return ps
}

// appendData appends an entry's data with the proposer it names ("S2.1",
// as Do writes it) renamed by p; other data is appended as it is.
func appendData(b []byte, data string, p []ID) []byte {
	if len(data) > 1 && data[0] == 'S' {
		k := 1
		id := 0
		for k < len(data) && data[k] >= '0' && data[k] <= '9' {
			id = id*10 + int(data[k]-'0')
			k++
		}
		if k > 1 && k < len(data) && data[k] == '.' && id < len(p) {
			b = append(b, 'S')
			b = strconv.AppendInt(b, int64(p[id]), 10)
			return append(b, data[k:]...)
		}
	}
	return append(b, data...)
}

// appendKey appends the Key of c with its servers renamed by p (p[old] =
// new). scratch is reused for the messages' encodings.
func (c *Cluster) appendKey(b []byte, p []ID, scratch []byte) []byte {
	num := func(x uint64) { b = strconv.AppendUint(b, x, 10); b = append(b, ',') }
	inv := make([]ID, len(p))
	for old, nw := range p {
		inv[nw] = ID(old)
	}
	for j := 1; j < len(p); j++ {
		i := int(inv[j]) - 1
		n := c.Nodes[i]
		num(uint64(n.Role))
		num(n.Term)
		num(uint64(p[n.Vote]))
		num(n.Commit)
		if c.Down[i] {
			b = append(b, 'd')
		}
		for _, e := range n.Log {
			num(e.Term)
			b = appendData(b, e.Data, p)
		}
		for q := 1; q < len(p); q++ {
			peer := inv[q]
			if n.votes[peer] {
				b = append(b, 'v')
				num(uint64(q))
			}
			if n.Role == Leader {
				num(n.next[peer])
				num(n.match[peer])
			}
		}
		b = append(b, ';')
	}
	ms := make([]string, len(c.Net))
	for k, m := range c.Net {
		mb := scratch[:0]
		for _, x := range []uint64{uint64(m.Type), uint64(p[m.From]), uint64(p[m.To]), m.Term, m.LastIndex, m.LastTerm, m.PrevIndex, m.PrevTerm, m.Commit, m.Index} {
			mb = strconv.AppendUint(mb, x, 10)
			mb = append(mb, ',')
		}
		if m.Reject {
			mb = append(mb, 'r')
		}
		for _, e := range m.Entries {
			mb = strconv.AppendUint(mb, e.Term, 10)
			mb = appendData(mb, e.Data, p)
		}
		ms[k] = string(mb)
		scratch = mb
	}
	slices.Sort(ms)
	for _, m := range ms {
		b = append(b, m...)
		b = append(b, '|')
	}
	num(uint64(c.restarts))
	return c.Check.appendKey(b, p, c.Nodes)
}

// RunRandom runs a schedule of up to steps actions drawn from c.Actions(b)
// by a generator seeded with seed, checking the Figure 3 properties after
// every step. Delivery is weighted above loss and timeouts, so that
// elections finish and entries commit often. It returns the actions taken
// and the first violation (nil if none).
func (c *Cluster) RunRandom(seed uint64, steps int, b Bounds) ([]Action, error) {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	var trace []Action
	for len(trace) < steps {
		acts := c.Actions(b)
		if len(acts) == 0 {
			break
		}
		a := pick(r, acts)
		trace = append(trace, a)
		if err := c.Do(a); err != nil {
			return trace, err
		}
	}
	return trace, nil
}

var weights = [...]int{Timeout: 1, Propose: 3, Replicate: 6, Deliver: 16, Drop: 1, Crash: 1, Restart: 4}

func pick(r *rand.Rand, acts []Action) Action {
	total := 0
	for _, a := range acts {
		total += weights[a.Kind]
	}
	x := r.IntN(total)
	for _, a := range acts {
		x -= weights[a.Kind]
		if x < 0 {
			return a
		}
	}
	return acts[len(acts)-1]
}

// Exploration is the result of Explore.
type Exploration struct {
	States      int      // distinct states reached (the initial one included)
	Transitions int      // actions taken from them
	Depth       int      // length of the longest shortest path to a state
	Violation   error    // the first *Violation found, nil if none
	Trace       []Action // a shortest schedule reaching the violation
	Complete    bool     // false when maxStates stopped the search
}

// Explore visits, breadth first, every state reachable from c under b,
// checking the Figure 3 properties after every action. States are
// deduplicated by SymmetricKey, so of the states that are renamings of one
// another only the first reached is explored (States counts those). It
// stops at the first violation, reporting a shortest schedule that leads
// to it, or after maxStates states (0: no limit).
func Explore(c *Cluster, b Bounds, maxStates int) Exploration {
	return explore(c, b, maxStates, search{key: (*Cluster).SymmetricKey, drop: (*Cluster).inert})
}

// search says how explore cuts the state space: by the key that tells
// states apart, and by the messages it drops as soon as they are in flight
// (drop, if not nil; Explore drops the inert ones). Explore's choices keep
// every state of the servers that the plain search (Key, no drops)
// reaches; TestReductionsKeepEveryServerState compares them. visit, if not
// nil, is called on every state reached, the first included.
type search struct {
	key   func(*Cluster) string
	drop  func(*Cluster, Message) bool
	visit func(*Cluster)
}

// inert reports whether delivering reply m can change nothing, now or
// later: its recipient has moved to a later term, or it is a vote for a
// server that is no longer a candidate of its term, or a refused vote, or a
// vote already counted; or an AppendEntries reply for a follower of its
// term. Terms never fall and a server is candidate or leader of a term only
// once, so an inert message stays inert. Requests are never inert: a stale
// one still carries back its recipient's newer term.
func (c *Cluster) inert(m Message) bool {
	n := c.Node(m.To)
	switch m.Type {
	case MsgVoteResp:
		return m.Term < n.Term || m.Term == n.Term && (n.Role != Candidate || m.Reject || n.votes[m.From])
	case MsgAppResp:
		return m.Term < n.Term || m.Term == n.Term && n.Role == Follower
	}
	return false
}

// explore is Explore with states told apart by key.
func explore(c *Cluster, b Bounds, maxStates int, r search) Exploration {
	key := r.key
	type node struct {
		c      *Cluster
		parent int
		act    Action
		depth  int
	}
	seen := map[string]bool{key(c): true}
	if r.visit != nil {
		r.visit(c)
	}
	queue := []node{{c: c.Clone(), parent: -1}}
	var res Exploration
	res.Complete = true
	for head := 0; head < len(queue); head++ {
		cur := queue[head]
		res.Depth = max(res.Depth, cur.depth)
		for _, a := range cur.c.Actions(b) {
			next := cur.c.Clone()
			err := next.Do(a)
			if r.drop != nil {
				next.Net = slices.DeleteFunc(next.Net, func(m Message) bool { return r.drop(next, m) })
			}
			res.Transitions++
			if err != nil {
				res.Violation = err
				trace := []Action{a}
				for p := head; queue[p].parent >= 0; p = queue[p].parent {
					trace = append(trace, queue[p].act)
				}
				slices.Reverse(trace)
				res.Trace = trace
				res.States = len(seen)
				return res
			}
			k := key(next)
			if seen[k] {
				continue
			}
			seen[k] = true
			if r.visit != nil {
				r.visit(next)
			}
			if maxStates > 0 && len(seen) >= maxStates {
				res.States, res.Complete = len(seen), false
				return res
			}
			queue = append(queue, node{c: next, parent: head, act: a, depth: cur.depth + 1})
		}
		queue[head].c = nil // only the path is needed from here on
	}
	res.States = len(seen)
	return res
}
