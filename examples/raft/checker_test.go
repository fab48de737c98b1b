package raft

import (
	"errors"
	"maps"
	"os"
	"testing"
)

// long reports whether the long checks were asked for: RAFT_LONG=1 runs
// more random schedules and explores larger bounds (minutes, not seconds).
func long() bool { return os.Getenv("RAFT_LONG") == "1" }

func seeds() uint64 {
	if long() {
		return 20000
	}
	return 300
}

var randomBounds = Bounds{MaxRestarts: 3, MaxInFlight: 12}

// The five properties of Figure 3 hold after every step of seeded random
// schedules on three and five servers, with message loss, reordering,
// duplicate sends, crashes and restarts: "Election Safety: at most one
// leader can be elected in a given term. Leader Append-Only: a leader never
// overwrites or deletes entries in its log; it only appends new entries.
// Log Matching: if two logs contain an entry with the same index and term,
// then the logs are identical in all entries up through the given index.
// Leader Completeness: if a log entry is committed in a given term, then
// that entry will be present in the logs of the leaders for all
// higher-numbered terms. State Machine Safety: if a server has applied a
// log entry at a given index to its state machine, no other server will
// ever apply a different log entry for the same index." Each schedule must
// also have elected a leader and committed an entry, so that the checks
// were not vacuous. Reference: Raft §5, Figure 3
func TestRandomSchedulesKeepFigure3(t *testing.T) {
	for _, n := range []int{3, 5} {
		elected, committed := 0, 0
		for seed := range seeds() {
			c := NewCluster(n, 0)
			trace, err := c.RunRandom(seed, 400, randomBounds)
			if err != nil {
				t.Fatalf("%d servers, seed %d, step %d (%v): %v", n, seed, len(trace), trace[len(trace)-1], err)
			}
			if len(c.Check.leaders) > 0 {
				elected++
			}
			if len(c.Check.committed) > 0 {
				committed++
			}
		}
		if elected < int(seeds())*9/10 || committed < int(seeds())/2 {
			t.Errorf("%d servers: %d of %d schedules elected a leader and %d committed an entry; the schedules are too weak",
				n, elected, seeds(), committed)
		}
	}
}

// Each rule of the paper, switched off alone, lets a random schedule break
// the property it protects: the checker is not vacuous, and every rule is
// needed. Voting twice breaks Election Safety (§5.2); the election
// restriction removed breaks Leader Completeness (§5.4.1); the
// consistency check removed breaks Log Matching (§5.3); committing earlier
// terms' entries by counting breaks Leader Completeness (§5.4.2, Figure
// 8). Reference: Raft §5.2–§5.4
func TestRandomSchedulesFindEachMutant(t *testing.T) {
	want := map[Fault]Property{
		VoteTwice:        ElectionSafety,
		GrantStaleVotes:  LeaderCompleteness,
		SkipPrevCheck:    LogMatching,
		CommitByCounting: LeaderCompleteness,
	}
	for fault, prop := range want {
		for _, n := range []int{3, 5} {
			found := false
			for seed := range uint64(2000) {
				_, err := NewCluster(n, fault).RunRandom(seed, 400, randomBounds)
				if err == nil {
					continue
				}
				var v *Violation
				if !errors.As(err, &v) {
					t.Fatalf("%v: %v", fault, err)
				}
				found = true
				if !hasProperty(err, prop) {
					t.Errorf("%v on %d servers, seed %d: first violation %v, want %s among them", fault, n, seed, err, prop)
				}
				break
			}
			if !found {
				t.Errorf("%v on %d servers: no violation in 2000 schedules", fault, n)
			}
		}
	}
}

func hasProperty(err error, p Property) bool {
	for _, v := range Violations(err) {
		if v.Property == p {
			return true
		}
	}
	return false
}

// ciBounds are the bounds of the default exhaustive check: three servers,
// terms up to 2, one entry, two messages in flight when a server sends (so
// two messages on one link can arrive in either order), and one crash.
var ciBounds = Bounds{MaxTerm: 2, MaxLog: 1, MaxInFlight: 2, MaxReboots: 1}

// exhaustiveBounds are the bounds of the default exhaustive check and of
// the long one (RAFT_LONG=1).
func exhaustiveBounds() []Bounds {
	if long() {
		return []Bounds{
			ciBounds,
			{MaxTerm: 2, MaxLog: 2, MaxInFlight: 1, MaxReboots: 1},
			{MaxTerm: 3, MaxLog: 1, MaxInFlight: 1, MaxReboots: 1},
			{MaxTerm: 2, MaxLog: 1, MaxInFlight: 3},
		}
	}
	return []Bounds{ciBounds}
}

// Every state reachable by three servers within the bounds (terms, log
// length, messages in flight, crashes) satisfies the five properties of
// Figure 3; the search is complete, not sampled. It must also have reached
// what the bounds allow, so that passing is not vacuous: a crash, an entry
// committed, and two messages in flight from one server to another, which
// the network may deliver in either order. Reference: Raft §5, Figure 3
func TestExhaustiveKeepsFigure3(t *testing.T) {
	for _, b := range exhaustiveBounds() {
		var crashed, committed, twoOnALink int
		visit := func(c *Cluster) {
			if c.restarts > 0 {
				crashed++
			}
			if len(c.Check.committed) > 0 {
				committed++
			}
			links := map[[2]ID]int{}
			for _, m := range c.Net {
				links[[2]ID{m.From, m.To}]++
				if links[[2]ID{m.From, m.To}] == 2 {
					twoOnALink++
					break
				}
			}
		}
		r := explore(NewCluster(3, 0), b, 0, search{key: (*Cluster).SymmetricKey, drop: (*Cluster).inert, visit: visit})
		if r.Violation != nil {
			t.Fatalf("bounds %+v: %v\nschedule: %v", b, r.Violation, r.Trace)
		}
		if !r.Complete || r.States < 1000 {
			t.Fatalf("bounds %+v: %d states, complete %v", b, r.States, r.Complete)
		}
		if crashed == 0 && b.MaxReboots > 0 || committed == 0 || twoOnALink == 0 && b.MaxInFlight > 1 {
			t.Fatalf("bounds %+v: %d states after a crash, %d with an entry committed, %d with two messages on one link",
				b, crashed, committed, twoOnALink)
		}
		t.Logf("bounds %+v: %d states, %d transitions, depth %d, no violation (%d after a crash, %d with two messages on one link)",
			b, r.States, r.Transitions, r.Depth, crashed, twoOnALink)
	}
}

// The exhaustive search's three reductions lose no state of the servers.
// At terms up to 2, one entry, one message in flight and one crash, the
// plain search (servers told apart by name, a crash and its restart as
// two steps, messages dropped only by Drop steps) and Explore (renamings
// of servers counted once, a crash and its restart in one step, inert
// replies dropped at once) reach the same set of server states and checker
// histories, compared up to renaming of the servers; and Explore visits
// fewer states. As a negative control, a search that also drops every
// AppendEntries reply (which are not all inert) reaches fewer server
// states, and the comparison sees it.
func TestReductionsKeepEveryServerState(t *testing.T) {
	servers := func(b Bounds, r search) (map[string]bool, int) {
		set := map[string]bool{}
		r.visit = func(c *Cluster) {
			d := c.Clone()
			d.Net, d.Down, d.restarts = nil, make([]bool, len(c.Nodes)), 0
			set[d.SymmetricKey()] = true
		}
		res := explore(NewCluster(3, 0), b, 0, r)
		if res.Violation != nil || !res.Complete {
			t.Fatalf("bounds %+v: %v, complete %v", b, res.Violation, res.Complete)
		}
		return set, res.States
	}
	plain, plainStates := servers(Bounds{MaxTerm: 2, MaxLog: 1, MaxInFlight: 1, MaxRestarts: 1}, search{key: (*Cluster).Key})
	reducedBounds := Bounds{MaxTerm: 2, MaxLog: 1, MaxInFlight: 1, MaxReboots: 1}
	reduced, reducedStates := servers(reducedBounds, search{key: (*Cluster).SymmetricKey, drop: (*Cluster).inert})
	if !maps.Equal(plain, reduced) {
		t.Errorf("plain search: %d server states, reduced: %d; they differ", len(plain), len(reduced))
	}
	if reducedStates >= plainStates/4 {
		t.Errorf("reduced search visited %d states, plain %d: the reductions save little", reducedStates, plainStates)
	}
	t.Logf("plain search %d states, reduced %d; %d server states in both", plainStates, reducedStates, len(plain))
	tooEager := func(c *Cluster, m Message) bool { return m.Type == MsgAppResp || c.inert(m) }
	wrong, _ := servers(reducedBounds, search{key: (*Cluster).SymmetricKey, drop: tooEager})
	if maps.Equal(plain, wrong) {
		t.Errorf("a search that drops every AppendEntries reply reaches the same %d server states: the comparison cannot fail", len(wrong))
	}
}

// Exhaustive search finds the shortest schedule to each mutant's broken
// property. At the default bounds (ciBounds): a server that votes twice
// in a term makes two leaders (§5.2), and a voter that ignores the
// election restriction elects a leader without a committed entry (§5.4.1).
// With a third term and a second entry, a follower that skips the
// consistency check breaks Log Matching (§5.3). With four terms, a leader
// that commits an earlier term's entry by counting replicas loses it to
// the next leader (§5.4.2, Figure 8). Every schedule found is replayed
// to show that it reproduces the violation. Reference: Raft §5.2–§5.4
func TestExhaustiveFindsMutants(t *testing.T) {
	cases := []struct {
		fault Fault
		prop  Property
		b     Bounds
	}{
		{VoteTwice, ElectionSafety, ciBounds},
		{GrantStaleVotes, LeaderCompleteness, ciBounds},
		{SkipPrevCheck, LogMatching, Bounds{MaxTerm: 3, MaxLog: 2, MaxInFlight: 1}},
		{CommitByCounting, LeaderCompleteness, Bounds{MaxTerm: 4, MaxLog: 1, MaxInFlight: 1}},
	}
	for _, tc := range cases {
		r := Explore(NewCluster(3, tc.fault), tc.b, 0)
		if r.Violation == nil || !hasProperty(r.Violation, tc.prop) {
			t.Fatalf("%v at %+v: violation %v, want %s", tc.fault, tc.b, r.Violation, tc.prop)
		}
		c := NewCluster(3, tc.fault)
		var err error
		for _, a := range r.Trace {
			if err = c.Do(a); err != nil {
				break
			}
		}
		if !hasProperty(err, tc.prop) {
			t.Fatalf("%v: replaying %v gave %v", tc.fault, r.Trace, err)
		}
		t.Logf("%v at %+v: %s after %d states, shortest schedule %d steps", tc.fault, tc.b, tc.prop, r.States, len(r.Trace))
	}
}

// Each property check fires on a state that breaks it, built by hand, so
// that a check that can never fail would be caught here.
func TestCheckerCatchesEachProperty(t *testing.T) {
	leader := func(id ID, term uint64, log ...Entry) *Node {
		n := NewNode(id, []ID{1, 2, 3}, 0)
		n.Term, n.Log = term, log
		n.becomeLeader()
		return n
	}
	follower := func(id ID, term uint64, commit uint64, log ...Entry) *Node {
		n := NewNode(id, []ID{1, 2, 3}, 0)
		n.Term, n.Log, n.Commit = term, log, commit
		return n
	}
	a, b := Entry{1, "a"}, Entry{2, "b"}
	cases := []struct {
		prop  Property
		steps [][]*Node
	}{
		{ElectionSafety, [][]*Node{{leader(1, 2), leader(2, 2), follower(3, 2, 0)}}},
		{LeaderAppendOnly, [][]*Node{{leader(1, 2, a, b)}, {leader(1, 2, a)}}},
		{LogMatching, [][]*Node{{follower(1, 2, 0, a, b), follower(2, 2, 0, Entry{1, "z"}, b)}}},
		{LeaderCompleteness, [][]*Node{{func() *Node { n := leader(1, 1, a); n.Commit = 1; return n }()}, {leader(2, 2, b)}}},
		{StateMachineSafety, [][]*Node{{follower(1, 1, 1, a)}, {follower(2, 2, 1, b)}}},
	}
	for _, tc := range cases {
		var c Checker
		var err error
		for _, nodes := range tc.steps {
			if err = c.Observe(nodes); err != nil {
				break
			}
		}
		if !hasProperty(err, tc.prop) {
			t.Errorf("%s: checker returned %v", tc.prop, err)
		}
	}
}
