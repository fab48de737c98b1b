package check

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/ownership-book/ownership/examples/ownership"
)

// Result is the outcome of one exhaustive run.
type Result struct {
	Bounds   Bounds
	Mutation Mutation
	// States is the number of distinct states reached (after symmetry
	// reduction, if Bounds.Symmetry), Transitions the number of steps
	// explored from them (including steps to states already seen), Depth
	// the length of the longest shortest path from the initial state.
	States, Transitions, Depth int
	// Violation is the first property broken, nil if none; Trace is the
	// shortest run that breaks it, one line per step.
	Violation *Violation
	Trace     []string
	// Steps is Trace without its start line, each step as a sequence
	// diagram draws it (see Step).
	Steps []Step
	// Contrast is the shortest run in which the highest-epoch server
	// applies a write below the record's current epoch (which the
	// record-checking server never does), nil if none was reached.
	Contrast []string
}

// OK reports whether no property was broken.
func (r Result) OK() bool { return r.Violation == nil }

// Run explores every state reachable within b under mutation mut, breadth
// first, and stops at the first broken property. It panics if b is out of
// range (see Bounds).
func Run(b Bounds, mut Mutation) Result { return run(b, mut, nil) }

// run is Run, counting only the violations accept returns true for (all if
// accept is nil): a search for one particular counterexample, which goes on
// through states where other properties break.
func run(b Bounds, mut Mutation, accept func(*Violation) bool) Result {
	if b.Nodes < 2 || b.Nodes > maxNodes || b.Epochs < 1 || b.Epochs >= maxEpochs || b.InFlight < 1 {
		panic(fmt.Sprintf("check: bounds out of range: %+v", b))
	}
	m := &model{b: b, mut: mut}
	perms := permutations(b.Nodes, b.Symmetry)
	var (
		keys   []string
		parent []int32
		level  []int32
		seen   = map[string]int32{}
		buf    bytes.Buffer
	)
	visit := func(s *State, from int32, depth int32) (int32, bool) {
		k := m.key(s, perms, &buf)
		if i, ok := seen[k]; ok {
			return i, false
		}
		i := int32(len(keys))
		seen[k] = i
		keys = append(keys, k)
		parent = append(parent, from)
		level = append(level, depth)
		return i, true
	}
	res := Result{Bounds: b, Mutation: mut}
	init := initial()
	visit(init, -1, 0)
	if v := m.checkState(init); v != nil {
		res.Violation = v
		res.States = 1
		return res
	}
	type item struct {
		s *State
		i int32
	}
	frontier := []item{{init, 0}}
	var contrastAt *struct {
		i    int32
		next string
	}
	for len(frontier) > 0 && res.Violation == nil {
		var next []item
		for _, it := range frontier {
			for _, st := range m.successors(it.s) {
				res.Transitions++
				if st.bad != nil && accept != nil && !accept(st.bad) {
					st.bad = nil
				}
				if st.bad != nil {
					res.Violation = st.bad
					res.Trace, res.Steps = m.trace(keys, parent, it.i, m.key(st.next, perms, &buf), st.bad.Property, perms)
					break
				}
				j, fresh := visit(st.next, it.i, level[it.i]+1)
				if st.note && contrastAt == nil {
					contrastAt = &struct {
						i    int32
						next string
					}{it.i, keys[j]}
				}
				if !fresh {
					continue
				}
				if v := m.checkState(st.next); v != nil && (accept == nil || accept(v)) {
					res.Violation = v
					res.Trace, res.Steps = m.trace(keys, parent, j, "", 0, perms)
					break
				}
				next = append(next, item{st.next, j})
			}
			if res.Violation != nil {
				break
			}
		}
		frontier = next
	}
	res.States = len(keys)
	for _, d := range level {
		res.Depth = max(res.Depth, int(d))
	}
	if contrastAt != nil {
		res.Contrast, _ = m.trace(keys, parent, contrastAt.i, contrastAt.next, -1, perms)
	}
	return res
}

// trace replays the path from the initial state to state i on concrete
// states (so that node names stay consistent when symmetry reduction
// stored a renamed representative) and describes each step. If last is
// not empty it is one more step, to the state with key last; with prop >=
// 0 that step must break prop, with prop == -1 it must be a contrast step.
func (m *model) trace(keys []string, parent []int32, i int32, last string, prop Property, perms [][]int) ([]string, []Step) {
	var path []int32
	for j := i; j >= 0; j = parent[j] {
		path = append(path, j)
	}
	slices.Reverse(path)
	var buf bytes.Buffer
	s := initial()
	lines := []string{"start: " + s.rec.State().String() + ", A holds its token for 41"}
	var steps []Step
	follow := func(want string, match func(step) bool) bool {
		for _, st := range m.successors(s) {
			if match(st) && m.key(st.next, perms, &buf) == want {
				lines = append(lines, m.describe(s, st))
				steps = append(steps, m.arrow(s, st, lines[len(lines)-1]))
				s = st.next
				return true
			}
		}
		return false
	}
	for _, j := range path[1:] {
		if !follow(keys[j], func(st step) bool { return st.bad == nil || st.bad.Property != prop }) {
			panic("check: trace replay lost its way")
		}
	}
	if last != "" {
		ok := follow(last, func(st step) bool {
			if prop == -1 {
				return st.note
			}
			return st.bad != nil && st.bad.Property == prop
		})
		if !ok {
			panic("check: trace replay did not find the last step")
		}
	}
	return lines, steps
}

// describe says in words what step st does to s.
func (m *model) describe(s *State, st step) string {
	a := st.act
	who := ""
	if a.node >= 0 {
		who = string(nodeNames[a.node])
	}
	after := st.next.rec.State()
	switch a.kind {
	case actObserve:
		return fmt.Sprintf("%s reads the record, %v, and takes its token for %d", who, s.rec.State(), st.next.nodes[a.node].token)
	case actRequest:
		role := ""
		if a.rogue {
			role = ", outside its role"
		}
		return fmt.Sprintf("%s reads the record, %v, and sends %v%s", who, s.rec.State(), newMsg(s, st.next).cmd, role)
	case actGrant:
		g := newMsg(s, st.next)
		return fmt.Sprintf("%s reads the record, %v, and sends %s a grant for %d", who, s.rec.State(), nodeNames[g.to], g.epoch)
	case actWrite:
		return fmt.Sprintf("%s sends a write at %d to the %s", who, s.nodes[a.node].token, serverNames[a.arg])
	case actCommand:
		return fmt.Sprintf("coordinator reads the record, %v, and sends %v", s.rec.State(), newMsg(s, st.next).cmd)
	case actCrash:
		line := who + " crashes"
		if t := s.nodes[a.node].token; t != 0 {
			line += fmt.Sprintf(" (its token for %d stays on disk)", t)
		}
		return line
	case actRestart:
		return who + " restarts"
	case actRecordRestart:
		return fmt.Sprintf("the record restarts and re-creates the actor above its floor %d: %v", st.next.floor-1, after)
	case actDuplicate:
		return fmt.Sprintf("the network duplicates %v", s.net[a.msg])
	case actLose:
		return fmt.Sprintf("the network loses %v", s.net[a.msg])
	case actDeliver:
		mm := s.net[a.msg]
		ahead := ""
		if m.b.InOrder && a.msg > 0 {
			ahead = ", ahead of an older message"
		}
		switch mm.kind {
		case write:
			_, _, applied := m.deliverWrite(s.clone(), mm)
			verdict := "refused"
			if applied {
				verdict = "applied"
			}
			return fmt.Sprintf("%s's write at %d arrives%s at the %s: %s (record %v)", nodeNames[mm.from], mm.epoch, ahead, serverNames[mm.to], verdict, s.rec.State())
		case grant:
			if !ownership.ValidFence(s.rec.State(), mm.epoch) {
				return fmt.Sprintf("%v arrives%s: stale (record %v), dropped", mm, ahead, s.rec.State())
			}
			return fmt.Sprintf("%v arrives%s: passes the fence (record %v); %s sends Acquire(%s)@%d", mm, ahead, s.rec.State(), nodeNames[mm.to], nodeNames[mm.to], mm.epoch)
		}
		if err := m.apply(s.clone(), mm.cmd); err != nil {
			return fmt.Sprintf("%v arrives%s: refused (%v)", mm.cmd, ahead, err)
		}
		return fmt.Sprintf("%v arrives%s: %v", mm.cmd, ahead, after)
	}
	return "?"
}

// newMsg is the message next has in flight that s had not.
func newMsg(s, next *State) msg {
	for _, mm := range next.net {
		if !slices.Contains(s.net, mm) {
			return mm
		}
	}
	return msg{}
}

// permutations returns the renamings of n nodes the key minimises over:
// with symmetry, every permutation of the nodes other than A (which starts
// as the owner, and whose epoch-41 ownership the ghost history keeps, so
// renaming it never maps a reachable state onto another); without, the
// identity only. Beyond identity node names play no role in the protocol:
// every rule treats every node alike, so states that differ by a renaming
// have renamed futures and satisfy the same properties.
func permutations(n int, symmetry bool) [][]int {
	id := make([]int, n)
	for i := range id {
		id[i] = i
	}
	if !symmetry {
		return [][]int{id}
	}
	var out [][]int
	var rec func(k int)
	rec = func(k int) {
		if k == n {
			out = append(out, slices.Clone(id))
			return
		}
		for i := k; i < n; i++ {
			id[k], id[i] = id[i], id[k]
			rec(k + 1)
			id[k], id[i] = id[i], id[k]
		}
	}
	rec(1)
	return out
}

// key is the canonical encoding of s: the smallest encoding over perms.
func (m *model) key(s *State, perms [][]int, buf *bytes.Buffer) string {
	var best []byte
	for _, p := range perms {
		buf.Reset()
		m.encode(s, p, buf)
		if best == nil || bytes.Compare(buf.Bytes(), best) < 0 {
			best = append(best[:0], buf.Bytes()...)
		}
	}
	return string(best)
}

func eb(e ownership.Epoch) byte {
	if e == 0 {
		return 0
	}
	return byte(e - firstFloor + 1)
}

func nb(p []int, n ownership.NodeID) byte {
	i := indexOf(n)
	if i < 0 {
		return 255
	}
	return byte(p[i])
}

func encodeState(st ownership.State, p []int, w *bytes.Buffer) {
	switch v := st.(type) {
	case ownership.Owned:
		w.Write([]byte{1, nb(p, v.Owner), eb(v.Epoch)})
	case ownership.Transferring:
		w.Write([]byte{2, nb(p, v.From), nb(p, v.To), eb(v.OldEpoch)})
	case ownership.Unowned:
		w.Write([]byte{3, nb(p, v.IntendedOwner), eb(v.Epoch)})
	default:
		w.WriteByte(0)
	}
}

var opCode = map[ownership.Op]byte{
	ownership.OpBeginTransfer: 1, ownership.OpCompleteRelease: 2, ownership.OpAcquire: 3,
	ownership.OpAbort: 4, ownership.OpRevoke: 5,
}

// encode writes s renamed by p (node i becomes node p[i]).
func (m *model) encode(s *State, p []int, w *bytes.Buffer) {
	n := m.b.Nodes
	encodeState(s.rec.State(), p, w)
	issued := s.rec.Issued()
	w.WriteByte(byte(len(issued)))
	for _, t := range issued {
		w.Write([]byte{eb(t.Epoch), nb(p, t.Holder)})
	}
	w.Write([]byte{eb(s.floor), s.dup, s.loss, s.intr, s.crashes, s.reord, s.rogue})
	inv := make([]int, n)
	for i := 0; i < n; i++ {
		inv[p[i]] = i
	}
	for j := 0; j < n; j++ {
		nd := s.nodes[inv[j]]
		c := byte(0)
		if nd.crashed {
			c = 1
		}
		w.Write([]byte{eb(nd.token), c})
	}
	ren := func(x int8) byte {
		if x == 0 {
			return 0
		}
		return byte(p[x-1] + 1)
	}
	for _, sv := range s.srv {
		w.Write([]byte{eb(sv.max), eb(sv.seen.Highest)})
	}
	for _, x := range s.ownerAt[:m.b.Epochs+1] {
		w.WriteByte(ren(x))
	}
	// The ghosts that only a check at the current epoch or above reads
	// (named, asked) are encoded from the current epoch on: below it they
	// can change no verdict, since epochs never fall (a transition that
	// lowers the epoch is reported as it happens).
	cur := s.rec.CurrentEpoch()
	for k, x := range s.named[:m.b.Epochs+1] {
		if firstEpoch+ownership.Epoch(k) >= cur {
			w.WriteByte(ren(x))
		}
	}
	idx := func(x int8) byte {
		if x < 0 {
			return 255
		}
		return byte(p[x])
	}
	var asked [][]byte
	for _, in := range s.asked {
		if in.epoch >= cur {
			asked = append(asked, []byte{opCode[in.op], idx(in.who), idx(in.to), eb(in.epoch)})
		}
	}
	slices.SortFunc(asked, bytes.Compare) // a set, renamed
	w.WriteByte(byte(len(asked)))
	for _, b := range asked {
		w.Write(b)
	}
	msgs := make([][]byte, len(s.net))
	for k, mm := range s.net {
		to := byte(mm.to) // a server
		if mm.kind == grant {
			to = idx(mm.to) // a node
		}
		msgs[k] = []byte{byte(mm.kind), idx(mm.from), to, eb(mm.epoch),
			opCode[mm.cmd.Op], nb(p, mm.cmd.Caller), nb(p, mm.cmd.To), eb(mm.cmd.Epoch)}
	}
	if !m.b.InOrder {
		slices.SortFunc(msgs, bytes.Compare) // a multiset: order is no part of the state
	}
	w.WriteByte(byte(len(msgs)))
	for _, b := range msgs {
		w.Write(b)
	}
}
