package raymond

import "fmt"

// Transition is one move of a transition system: a label for traces and the
// state it leads to.
type Transition[S any] struct {
	Label string
	To    S
}

// Exploration is what Explore found: the number of distinct states and of
// transitions examined, the depth of the deepest state reached (in moves from
// the initial state), and, if a state broke the invariant, the shortest path
// to one (its labels, in order), the broken state and the error.
type Exploration[S any] struct {
	States, Transitions, Depth int
	Violation                  error
	Trace                      []string
	Bad                        S
	// Truncated is true if the search stopped at the state limit before
	// exhausting the state space.
	Truncated bool
}

// Explore is an exhaustive, explicit-state, breadth-first search of the
// states reachable from init. key must give equal strings exactly for equal
// states; next lists a state's transitions; check returns nil for a good
// state. Because the search is breadth-first, the first bad state found is
// at the smallest depth, and its trace is a shortest counterexample. The
// search stops at the first violation, or after limit distinct states (0:
// no limit), or when every reachable state has been seen.
func Explore[S any](init S, key func(S) string, next func(S) []Transition[S], check func(S) error, limit int) Exploration[S] {
	type entry struct {
		state  S
		parent int
		label  string
		depth  int
	}
	var res Exploration[S]
	seen := map[string]bool{key(init): true}
	queue := []entry{{state: init, parent: -1}}
	trace := func(i int) []string {
		var labels []string
		for ; queue[i].parent >= 0; i = queue[i].parent {
			labels = append([]string{queue[i].label}, labels...)
		}
		return labels
	}
	for i := 0; i < len(queue); i++ {
		e := queue[i]
		res.Depth = max(res.Depth, e.depth)
		if err := check(e.state); err != nil {
			res.States = len(seen)
			res.Violation, res.Trace, res.Bad = err, trace(i), e.state
			return res
		}
		if limit > 0 && len(seen) >= limit {
			res.Truncated = true
			continue
		}
		for _, t := range next(e.state) {
			res.Transitions++
			k := key(t.To)
			if seen[k] {
				continue
			}
			seen[k] = true
			queue = append(queue, entry{state: t.To, parent: i, label: t.Label, depth: e.depth + 1})
		}
	}
	res.States = len(seen)
	return res
}

// String summarises r as "states N, transitions N, depth N: ok" or with the
// violation.
func (r Exploration[S]) String() string {
	verdict := "no violation"
	if r.Violation != nil {
		verdict = "violation: " + r.Violation.Error()
	}
	if r.Truncated {
		verdict += " (state limit reached)"
	}
	return fmt.Sprintf("states %d, transitions %d, depth %d: %s", r.States, r.Transitions, r.Depth, verdict)
}

// ExploreKeys is Explore for large state spaces: it keeps each state only
// as its key and rebuilds it with decode (decode(key(s)) must behave exactly
// like s), and it keeps, per state, its parent and the position of the move
// that reached it rather than the move's label; the trace is rebuilt at the
// end by replaying those moves from init. It returns the same Exploration as
// Explore would (Bad and Violation come from the replayed bad state).
func ExploreKeys[S any](init S, key func(S) string, decode func(string) S, next func(S) []Transition[S], check func(S) error, limit int) Exploration[S] {
	return exploreKeys(init, key, decode, next, check, limit, false, nil)
}

// ExploreHashed is ExploreKeys with hash compaction, for state spaces too
// large to keep every key in memory: the set of seen states keeps only a
// 64-bit FNV-1a hash of each key, and a key is dropped once its state has
// been expanded. About 40 bytes per state instead of a few hundred. The
// price is a small chance that two states share a hash and the second is
// never explored: with n states, about n²/2⁶⁵ (under 0.001 for 100 million
// states). A violation it reports is real (its trace is replayed); "no
// violation" is then exhaustive only up to that chance. If progress is not
// nil it is called after every 2²⁰ states expanded with the counts so far
// and the number of states waiting in the queue.
func ExploreHashed[S any](init S, key func(S) string, decode func(string) S, next func(S) []Transition[S], check func(S) error, limit int, progress func(states, transitions, depth, waiting int)) Exploration[S] {
	return exploreKeys(init, key, decode, next, check, limit, true, progress)
}

func fnv64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

func exploreKeys[S any](init S, key func(S) string, decode func(string) S, next func(S) []Transition[S], check func(S) error, limit int, hashed bool, progress func(states, transitions, depth, waiting int)) Exploration[S] {
	type entry struct {
		key    string
		parent int32
		move   int32
		depth  int32
	}
	var res Exploration[S]
	k0 := key(init)
	seen := map[string]struct{}{}
	seenHash := map[uint64]struct{}{}
	// add reports whether k is new, and records it.
	add := func(k string) bool {
		if hashed {
			h := fnv64(k)
			if _, ok := seenHash[h]; ok {
				return false
			}
			seenHash[h] = struct{}{}
			return true
		}
		if _, ok := seen[k]; ok {
			return false
		}
		seen[k] = struct{}{}
		return true
	}
	count := func() int { return len(seen) + len(seenHash) }
	add(k0)
	queue := []entry{{key: k0, parent: -1}}
	replay := func(i int) ([]string, S) {
		var path []int
		for ; queue[i].parent >= 0; i = int(queue[i].parent) {
			path = append(path, i)
		}
		var labels []string
		s := init
		for j := len(path) - 1; j >= 0; j-- {
			t := next(s)[queue[path[j]].move]
			labels = append(labels, t.Label)
			s = t.To
		}
		return labels, s
	}
	for i := 0; i < len(queue); i++ {
		e := queue[i]
		if hashed {
			queue[i].key = ""
		}
		if progress != nil && i > 0 && i%(1<<20) == 0 {
			progress(count(), res.Transitions, int(e.depth), len(queue)-i)
		}
		res.Depth = max(res.Depth, int(e.depth))
		s := decode(e.key)
		if err := check(s); err != nil {
			// The replayed state is the real one (a key may not keep an
			// error's text); check it again for the report.
			res.States = count()
			res.Trace, res.Bad = replay(i)
			if res.Violation = check(res.Bad); res.Violation == nil {
				res.Violation = err
			}
			return res
		}
		if limit > 0 && count() >= limit {
			res.Truncated = true
			continue
		}
		for j, t := range next(s) {
			res.Transitions++
			k := key(t.To)
			if !add(k) {
				continue
			}
			queue = append(queue, entry{key: k, parent: int32(i), move: int32(j), depth: e.depth + 1})
		}
	}
	res.States = count()
	return res
}
