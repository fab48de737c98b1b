package raft

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// script drives a Cluster by hand, one scripted RPC exchange at a time, and
// collects the Figure 3 violations the checker finds without stopping.
type script struct {
	c          *Cluster
	w          io.Writer
	steps      []Figure8Step
	violations []*Violation
	err        error // a step that could not be done: a bug in the script
}

func (s *script) do(a Action) {
	if s.err != nil {
		return
	}
	err := s.c.Do(a)
	vs := Violations(err)
	if err != nil && vs == nil {
		s.err = err
	}
	for _, v := range vs {
		if !slices.ContainsFunc(s.violations, func(x *Violation) bool { return x.Property == v.Property }) {
			s.violations = append(s.violations, v)
		}
	}
}

// deliver delivers every in-flight message that match accepts, repeatedly
// (replies included), and drops all others.
func (s *script) deliver(match func(Message) bool) {
	for s.err == nil && len(s.c.Net) > 0 {
		m := s.c.Net[0]
		if match(m) {
			s.do(Action{Kind: Deliver, Msg: m})
		} else {
			s.do(Action{Kind: Drop, Msg: m})
		}
	}
}

// elect lets cand time out and hear from voters only.
func (s *script) elect(cand ID, voters ...ID) {
	s.do(Action{Kind: Timeout, Node: cand})
	ok := func(id ID) bool { return id == cand || slices.Contains(voters, id) }
	s.deliver(func(m Message) bool { return ok(m.From) && ok(m.To) })
}

// replicate has leader bring follower to's log up to date, retrying with
// an earlier prevLogIndex after each rejection (Raft §5.3).
func (s *script) replicate(leader ID, to ...ID) {
	for _, f := range to {
		for range 16 {
			s.do(Action{Kind: Replicate, Node: leader, To: f})
			s.deliver(func(m Message) bool { return true })
			n := s.c.Node(leader)
			if n.Role != Leader || n.match[f] == n.LastIndex() {
				break
			}
		}
	}
}

func (s *script) propose(leader ID) {
	s.do(Action{Kind: Propose, Node: leader})
}

func (s *script) crash(id ID)   { s.do(Action{Kind: Crash, Node: id}) }
func (s *script) restart(id ID) { s.do(Action{Kind: Restart, Node: id}) }

// Figure8Step is the state of the five servers after one step of the
// Figure 8 script.
type Figure8Step struct {
	Label   string // "(a)", "(b)", …, or "start"
	Caption string
	Servers []ServerState
}

// ServerState is one server's state as Figure 8 draws it.
type ServerState struct {
	ID      ID
	Role    string   // "follower", "candidate", "leader" or "crashed"
	Term    uint64   // currentTerm
	Log     []uint64 // the term of each entry, index 1 first
	Commit  uint64   // commitIndex
	Crashed bool
}

// show records the step and prints its caption and every server's log as
// the terms of its entries (as the paper's figures draw them), with its
// role, term and commit index.
func (s *script) show(label, caption string) {
	if s.err != nil {
		return
	}
	st := Figure8Step{Label: label, Caption: caption}
	fmt.Fprintf(s.w, "%s %s\n", label, caption)
	for i, n := range s.c.Nodes {
		ss := ServerState{ID: n.ID, Role: n.Role.String(), Term: n.Term, Commit: n.Commit, Crashed: s.c.Down[i]}
		terms := make([]string, len(n.Log))
		for k, e := range n.Log {
			terms[k] = fmt.Sprint(e.Term)
			ss.Log = append(ss.Log, e.Term)
		}
		if ss.Crashed {
			ss.Role = "crashed"
		}
		st.Servers = append(st.Servers, ss)
		fmt.Fprintf(s.w, "  %s %-9s term %d  log %-7s commit %d\n", n.ID, ss.Role, n.Term, strings.Join(terms, " "), n.Commit)
	}
	s.steps = append(s.steps, st)
}

// ANCHOR: figure8

// Figure8 replays the sequence of the paper's Figure 8 on five servers and
// writes each step to w. With fault 0 the leader follows §5.4.2 and never
// commits an entry of an earlier term by counting replicas; with
// CommitByCounting it does, and in step (d) an entry it committed is
// overwritten. It returns the Figure 3 violations found, one per property,
// in the order found; an error means the script itself went wrong.
func Figure8(w io.Writer, fault Fault) ([]*Violation, error) {
	_, vs, err := figure8(w, fault)
	return vs, err
}

// Figure8Steps runs the same script as Figure8 and returns the state after
// every step, for drawing.
func Figure8Steps(fault Fault) ([]Figure8Step, []*Violation, error) {
	return figure8(io.Discard, fault)
}

func figure8(w io.Writer, fault Fault) ([]Figure8Step, []*Violation, error) {
	s := &script{c: NewCluster(5, fault), w: w}
	all := []ID{1, 2, 3, 4, 5}
	// Term 1: S5 leads and every server stores and commits index 1.
	s.elect(5, all...)
	s.propose(5)
	s.replicate(5, 1, 2, 3, 4)
	s.replicate(5, 1, 2, 3, 4) // a second round carries the commit index
	s.show("start:", "S5 led term 1; index 1 is committed everywhere")

	s.elect(1, all...)
	s.propose(1)
	s.replicate(1, 2)
	s.show("(a)", "S1 leads term 2 and copies its index 2 to S2 only")

	s.crash(1)
	s.elect(5, 3, 4)
	s.propose(5)
	s.show("(b)", "S1 crashes; S5 wins term 3 with votes from S3, S4 and itself, and appends its own index 2")

	s.crash(5)
	s.restart(1)
	s.elect(1, 2, 3, 4) // term 3: S3 and S4 have voted for S5 already
	s.elect(1, 2, 3, 4) // term 4
	s.replicate(1, 2, 3)
	s.propose(1)
	s.replicate(1) // no-op: the term-4 entry stays on S1 alone
	s.show("(c)", "S5 crashes; S1 restarts, wins term 4, copies index 2 to S3 (now on a majority) and appends index 3")
	branch := s.c.Clone()

	s.crash(1)
	s.restart(5)
	s.elect(5, 2, 3, 4) // term 4: everyone has voted for S1 already
	s.elect(5, 2, 3, 4) // term 5: S2, S3, S4 find S5's log up-to-date
	s.replicate(5, 2, 3, 4)
	s.propose(5)
	s.replicate(5, 2, 3, 4)
	s.replicate(5, 2, 3, 4) // a second round carries the commit index
	s.show("(d)", "S1 crashes; S5 wins term 5 (votes from S2, S3, S4), copies its term-3 entry over index 2, adds index 3")

	if fault&CommitByCounting == 0 {
		s.c = branch
		s.replicate(1, 2, 3)
		s.crash(1)
		s.restart(5)
		s.elect(5, 2, 3, 4)
		s.elect(5, 2, 3, 4)
		s.show("(e)", "instead, S1 first copies index 3 to S2 and S3: both entries commit, and S5 cannot win (S2 and S3 refuse)")
	}
	return s.steps, s.violations, s.err
}

// ANCHOR_END: figure8
