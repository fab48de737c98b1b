package lab

import (
	"testing"

	"github.com/hashicorp/raft"
)

// "Each server will vote for at most one candidate in a given term": the
// audit counts a voter that granted two candidates in one term, and a term
// in which two candidates gathered a quorum. Reference: Raft §5.2
func TestAuditVotesFindsDoubleVotesAndTwoWinners(t *testing.T) {
	clean := []Vote{
		{Term: 2, Candidate: "A", Voter: "B", Granted: true},
		{Term: 2, Candidate: "A", Voter: "C", Granted: true},
		{Term: 2, Candidate: "D", Voter: "E", Granted: true},
		{Term: 2, Candidate: "D", Voter: "B", Granted: false},
	}
	if a := AuditVotes(clean, 5); a.DoubleVotes != 0 || len(a.Winners[2]) != 1 || a.Winners[2][0] != "A" {
		t.Fatalf("clean record: %+v", a)
	}
	bad := append(clean, Vote{Term: 2, Candidate: "D", Voter: "C", Granted: true})
	if a := AuditVotes(bad, 5); a.DoubleVotes != 1 || len(a.Winners[2]) != 2 {
		t.Fatalf("C voted for A and D in term 2: %+v", a)
	}
}

// "The state machine tracks the latest serial number processed for each
// client, along with the associated response. If it receives a command
// whose serial number has already been executed, it responds immediately
// without re-executing the request." Reference: Raft §8
func TestKVAppliesEachSerialNumberOnce(t *testing.T) {
	kv := NewKV()
	for _, c := range []string{"c 1 set x 1", "c 2 set x 2", "c 1 set x 1", "d 1 set y 1", "c 2 set x 2"} {
		if err, _ := kv.Apply(&raft.Log{Type: raft.LogCommand, Data: []byte(c)}).(error); err != nil {
			t.Fatal(err)
		}
	}
	applied, retries := kv.Applied()
	if kv.Get("x") != "2" || kv.Get("y") != "1" || applied != 3 || retries != 2 {
		t.Fatalf("x=%q y=%q applied %d retries %d, want 2, 1, 3, 2", kv.Get("x"), kv.Get("y"), applied, retries)
	}
	if err, _ := kv.Apply(&raft.Log{Type: raft.LogCommand, Data: []byte("garbage")}).(error); err == nil {
		t.Fatal("a malformed command was accepted")
	}
}
