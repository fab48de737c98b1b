package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestDiagramIsTheMachine checks the transitions found by running the
// machine against the rules the chapter states: a handover takes
// BeginTransfer (by the owner, epoch +1), CompleteRelease (by the outgoing
// owner) and Acquire (by the intended owner, no new epoch); Abort (the
// coordinator's) spends an epoch and names the outgoing owner; Revoke (the
// coordinator's) leaves every shape for Unowned one epoch later, naming any
// node. Nothing else succeeds.
//
// Reference: chapter "One owner at a time", sections "A handover,
// step by step" and "Abort and revoke".
func TestDiagramIsTheMachine(t *testing.T) {
	es, err := explore()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.from+" -> "+e.to+": "+e.label("; "))
	}
	want := []string{
		"Owned -> Transferring: BeginTransfer; by the owner; epoch +1; next: another node",
		"Owned -> Unowned: Revoke; by the coordinator; epoch +1; next: any node",
		"Transferring -> Unowned: CompleteRelease; by the outgoing owner; epoch same; next: the incoming node",
		"Transferring -> Unowned: Revoke; by the coordinator; epoch +1; next: any node",
		"Transferring -> Unowned: Abort; by the coordinator; epoch +1; next: the outgoing owner",
		"Unowned -> Unowned: Revoke; by the coordinator; epoch +1; next: any node",
		"Unowned -> Owned: Acquire; by the intended owner; epoch same",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("transitions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestFigureIsDeterministic checks that -figure prints the same D2 twice,
// with a node per shape and an edge per transition.
func TestFigureIsDeterministic(t *testing.T) {
	var a, b bytes.Buffer
	for _, w := range []*bytes.Buffer{&a, &b} {
		es, err := explore()
		if err != nil {
			t.Fatal(err)
		}
		writeD2(w, es)
	}
	if a.String() != b.String() {
		t.Fatal("two runs printed different figures")
	}
	if n := strings.Count(a.String(), " -> "); n != 7 {
		t.Errorf("%d edges, want 7:\n%s", n, a.String())
	}
	if !strings.Contains(a.String(), `Transferring -> Unowned: "Abort\nby the coordinator\nepoch +1\nnext: the outgoing owner"`) {
		t.Errorf("no Abort edge:\n%s", a.String())
	}
}
