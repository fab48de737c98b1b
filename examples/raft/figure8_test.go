package raft

import (
	"io"
	"strings"
	"testing"
)

// "A leader cannot immediately conclude that an entry from a previous term
// is committed once it is stored on a majority of servers. Figure 8
// illustrates a situation where an old log entry is stored on a majority
// of servers, yet can still be overwritten by a future leader." With the
// rule switched off, the leader of term 4 commits the term-2 entry by
// counting, and the leader of term 5 overwrites it: Leader Completeness
// and State Machine Safety both fail. Reference: Raft §5.4.2, Figure 8
func TestFigure8CountingLosesACommittedEntry(t *testing.T) {
	var out strings.Builder
	vs, err := Figure8(&out, CommitByCounting)
	if err != nil {
		t.Fatal(err)
	}
	var got []Property
	for _, v := range vs {
		got = append(got, v.Property)
	}
	if len(got) != 2 || got[0] != LeaderCompleteness || got[1] != StateMachineSafety {
		t.Fatalf("violations %v, want Leader Completeness then State Machine Safety\n%s", vs, out.String())
	}
}

// "Raft never commits log entries from previous terms by counting
// replicas." With the rule, the term-2 entry overwritten in (d) was never
// committed, and in (e) an entry of the current term on a majority commits
// both and keeps S5 from winning. Reference: Raft §5.4.2, Figure 8
func TestFigure8RuleKeepsCommittedEntries(t *testing.T) {
	var out strings.Builder
	vs, err := Figure8(&out, 0)
	if err != nil || len(vs) > 0 {
		t.Fatalf("violations %v, error %v\n%s", vs, err, out.String())
	}
	for _, want := range []string{
		"  S1 leader    term 4  log 1 2 4   commit 0",   // (c): index 2 on a majority, not committed
		"  S1 crashed   term 4  log 1 2 4   commit 3",   // (e): committed through index 3
		"  S5 candidate term 5  log 1 3     commit 0\n", // (e): S5 did not win
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("transcript lacks %q:\n%s", want, out.String())
		}
	}
}

func TestFigure8IsDeterministic(t *testing.T) {
	var a, b strings.Builder
	Figure8(&a, CommitByCounting)
	Figure8(&b, CommitByCounting)
	if a.String() != b.String() {
		t.Fatal("two runs differ")
	}
	if _, err := Figure8(io.Discard, SkipPrevCheck); err != nil {
		t.Fatal(err)
	}
}
