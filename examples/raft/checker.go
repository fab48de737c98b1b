package raft

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Property names one of the five guarantees of the paper's Figure 3.
type Property string

const (
	ElectionSafety     Property = "Election Safety"      // §5.2
	LeaderAppendOnly   Property = "Leader Append-Only"   // §5.3
	LogMatching        Property = "Log Matching"         // §5.3
	LeaderCompleteness Property = "Leader Completeness"  // §5.4
	StateMachineSafety Property = "State Machine Safety" // §5.4.3
)

// Properties lists the five properties in the order of Figure 3.
var Properties = []Property{ElectionSafety, LeaderAppendOnly, LogMatching, LeaderCompleteness, StateMachineSafety}

// Section returns the section of the paper that states and argues p.
func (p Property) Section() string {
	switch p {
	case ElectionSafety:
		return "§5.2"
	case LeaderAppendOnly, LogMatching:
		return "§5.3"
	case LeaderCompleteness:
		return "§5.4"
	case StateMachineSafety:
		return "§5.4.3"
	}
	return ""
}

// Violation is a broken Figure 3 property, with what showed it.
type Violation struct {
	Property Property
	Detail   string
}

func (v *Violation) Error() string {
	return fmt.Sprintf("%s (%s) violated: %s", v.Property, v.Property.Section(), v.Detail)
}

type committed struct {
	Entry Entry
	Term  uint64 // the term of the leader that committed it
}

// Checker checks the five properties of the paper's Figure 3 over a run,
// one observation after every step. It keeps the history that the
// properties speak of: the leader of every term so far, every committed
// entry with the term in which it was committed, and the first entry
// applied at every index by any server. The zero value is ready to use.
type Checker struct {
	leaders   map[uint64]ID        // term -> the leader elected in it
	lastLog   map[ID][]Entry       // leader -> its log at the previous observation
	lastTerm  map[ID]uint64        // leader -> its term at the previous observation
	committed map[uint64]committed // index -> first entry committed there
	applied   map[uint64]Entry     // index -> first entry applied there

	shared bool // the maps may be another Checker's too: copy before writing
}

func (c *Checker) init() {
	if c.leaders == nil {
		c.leaders = map[uint64]ID{}
		c.lastLog = map[ID][]Entry{}
		c.lastTerm = map[ID]uint64{}
		c.committed = map[uint64]committed{}
		c.applied = map[uint64]Entry{}
	}
}

// Clone returns an independent copy of c. The copy shares c's maps until
// either of them writes, which copies them first.
func (c *Checker) Clone() *Checker {
	c.init()
	c.shared = true
	d := *c
	return &d
}

// own gives c maps of its own before it writes to them.
func (c *Checker) own() {
	if !c.shared {
		return
	}
	c.leaders = maps.Clone(c.leaders)
	c.lastLog = maps.Clone(c.lastLog) // logs are never mutated in place once stored
	c.lastTerm = maps.Clone(c.lastTerm)
	c.committed = maps.Clone(c.committed)
	c.applied = maps.Clone(c.applied)
	c.shared = false
}

// Committed returns the committed entries known so far as index -> entry.
func (c *Checker) Committed() map[uint64]Entry {
	out := map[uint64]Entry{}
	for i, e := range c.committed {
		out[i] = e.Entry
	}
	return out
}

// Observe looks at every server after a step: it lets each server apply
// its newly committed entries (as its state machine would) and checks the
// five properties of Figure 3. It returns nil, or the violations found as
// *Violation errors (joined when there are several; see Violations). Servers that are down may be passed too: their state
// is what their stable storage holds.
func (c *Checker) Observe(nodes []*Node) error {
	c.init()
	var errs []*Violation
	fail := func(p Property, format string, args ...any) {
		errs = append(errs, &Violation{Property: p, Detail: fmt.Sprintf(format, args...)})
	}
	for _, n := range nodes {
		if n.Role != Leader {
			if _, ok := c.lastTerm[n.ID]; ok {
				c.own()
				delete(c.lastLog, n.ID)
				delete(c.lastTerm, n.ID)
			}
			continue
		}
		// Election Safety: at most one leader can be elected in a given term.
		if l, ok := c.leaders[n.Term]; ok && l != n.ID {
			fail(ElectionSafety, "%s and %s are both leaders of term %d", l, n.ID, n.Term)
		}
		if l, ok := c.leaders[n.Term]; !ok || l != n.ID {
			c.own()
			c.leaders[n.Term] = n.ID
		}
		// Leader Append-Only: a leader never overwrites or deletes entries in
		// its log; it only appends.
		if old, ok := c.lastLog[n.ID]; ok && c.lastTerm[n.ID] == n.Term {
			if len(n.Log) < len(old) || !slices.Equal(n.Log[:len(old)], old) {
				fail(LeaderAppendOnly, "leader %s of term %d changed its log from [%s] to [%s]",
					n.ID, n.Term, entries(old), n.LogString())
			}
		}
		if old, ok := c.lastLog[n.ID]; !ok || c.lastTerm[n.ID] != n.Term || !slices.Equal(old, n.Log) {
			c.own()
			c.lastLog[n.ID] = slices.Clone(n.Log)
			c.lastTerm[n.ID] = n.Term
		}
		// Record what this leader has committed.
		for i := uint64(1); i <= n.Commit; i++ {
			if _, ok := c.committed[i]; !ok {
				c.own()
				c.committed[i] = committed{Entry: n.Log[i-1], Term: n.Term}
			}
		}
	}
	// Log Matching: if two logs contain an entry with the same index and
	// term, the logs are identical in all entries up through that index.
	for a := 0; a < len(nodes); a++ {
		for b := a + 1; b < len(nodes); b++ {
			x, y := nodes[a], nodes[b]
			for i := min(len(x.Log), len(y.Log)); i >= 1; i-- {
				if x.Log[i-1].Term == y.Log[i-1].Term {
					if !slices.Equal(x.Log[:i], y.Log[:i]) {
						fail(LogMatching, "%s [%s] and %s [%s] agree on the term at index %d but not on the entries up to it",
							x.ID, x.LogString(), y.ID, y.LogString(), i)
					}
					break
				}
			}
		}
	}
	// Leader Completeness: if a log entry is committed in a given term, that
	// entry will be present in the logs of the leaders for all higher terms.
	for _, n := range nodes {
		if n.Role != Leader {
			continue
		}
		for _, i := range sortedKeys(c.committed) {
			ce := c.committed[i]
			if ce.Term < n.Term && (i > n.LastIndex() || n.Log[i-1] != ce.Entry) {
				fail(LeaderCompleteness, "entry %v at index %d, committed in term %d, is missing from %s, leader of term %d [%s]",
					ce.Entry, i, ce.Term, n.ID, n.Term, n.LogString())
			}
		}
	}
	// State Machine Safety: if a server has applied a log entry at a given
	// index to its state machine, no other server will ever apply a
	// different log entry for the same index.
	for _, n := range nodes {
		first := n.Applied + 1
		for k, e := range n.Apply() {
			i := first + uint64(k)
			if prev, ok := c.applied[i]; ok && prev != e {
				fail(StateMachineSafety, "%s applied %v at index %d, where %v was applied before", n.ID, e, i, prev)
			} else if !ok {
				c.own()
				c.applied[i] = e
			}
		}
	}
	return joinViolations(errs)
}

// joinViolations returns nil, the one violation, or all of them joined
// (errors.As finds the first).
func joinViolations(vs []*Violation) error {
	switch len(vs) {
	case 0:
		return nil
	case 1:
		return vs[0]
	}
	errs := make([]error, len(vs))
	for i, v := range vs {
		errs[i] = v
	}
	return errors.Join(errs...)
}

// Violations returns every *Violation in err (as Observe and Cluster.Do
// return them), in order.
func Violations(err error) []*Violation {
	var v *Violation
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []*Violation
		for _, e := range j.Unwrap() {
			out = append(out, Violations(e)...)
		}
		return out
	}
	if errors.As(err, &v) {
		return []*Violation{v}
	}
	return nil
}

// appendKey appends a canonical encoding of the history the checker keeps,
// with servers renamed by p (p[old] = new), for state deduplication in
// Explore. (lastLog and lastTerm equal the leaders' current logs and terms
// after an observation, so they add nothing.)
//
// The leader of a term is left out once no server can still be elected in
// it (every server is past it, or in it as a follower): Election Safety
// compares it only with a later leader of the same term.
func (c *Checker) appendKey(b []byte, p []ID, nodes []*Node) []byte {
	c.init()
	for _, t := range sortedKeys(c.leaders) {
		if !slices.ContainsFunc(nodes, func(n *Node) bool { return n.Term < t || n.Term == t && n.Role != Follower }) {
			continue
		}
		b = append(b, 'L')
		b = strconv.AppendUint(b, t, 10)
		b = append(b, '=')
		b = strconv.AppendInt(b, int64(p[c.leaders[t]]), 10)
		b = append(b, ',')
	}
	for _, i := range sortedKeys(c.committed) {
		b = append(b, 'C')
		b = strconv.AppendUint(b, i, 10)
		b = append(b, '=')
		b = appendData(b, c.committed[i].Entry.Data, p)
		b = append(b, '/')
		b = strconv.AppendUint(b, c.committed[i].Entry.Term, 10)
		b = append(b, '/')
		b = strconv.AppendUint(b, c.committed[i].Term, 10)
		b = append(b, ',')
	}
	for _, i := range sortedKeys(c.applied) {
		b = append(b, 'A')
		b = strconv.AppendUint(b, i, 10)
		b = append(b, '=')
		b = appendData(b, c.applied[i].Data, p)
		b = append(b, '/')
		b = strconv.AppendUint(b, c.applied[i].Term, 10)
		b = append(b, ',')
	}
	return b
}

func sortedKeys[K uint64 | ID, V any](m map[K]V) []K {
	ks := make([]K, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func entries(es []Entry) string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.String()
	}
	return strings.Join(s, " ")
}
