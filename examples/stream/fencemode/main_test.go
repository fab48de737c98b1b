package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestTranscript runs the play against a real voter and checks every line
// the chapter shows: on a stream created with Stream-Fence: required, X's
// append without producer headers is taken while no producer has written
// (204) and refused after the owners' claims (403 producer-required), and
// so is its close; the owners' fence works as on any stream (A's old epoch
// is refused); an append under another producer id is accepted, since the
// mode cannot tell X from an owner; a create without the header is 409;
// and the stream holds neither of X's refused writes.
// Reference: chapter "The epoch-fenced stream", section "What the fence
// covers".
func TestTranscript(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"   create, Stream-Fence: required -> 201 Created, Stream-Fence: required",
		"X  append, no producer headers    -> 204 No Content",
		"A  claim: epoch 7, seq 0          -> 200 OK, Producer-Epoch: 7",
		"B  claim: epoch 8, seq 0          -> 200 OK, Producer-Epoch: 8, Producer-Closed-Epoch: 7, Producer-Closed-Seq: 0",
		"A  append epoch 7, seq 1          -> 403 Forbidden, Producer-Epoch: 8, Producer-Outcome: epoch-closed",
		"X  append, no producer headers    -> 403 Forbidden, Producer-Outcome: producer-required",
		"X  close, no producer headers     -> 403 Forbidden, Producer-Outcome: producer-required",
		"X  append as producer x, seq 0    -> 200 OK, Producer-Seq: 0",
		"   create again, no Stream-Fence  -> 409 Conflict",
		"   the stream holds: x-early a0 b0 x0",
	}
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(got), len(want), out.String())
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d:\n got %q\nwant %q", i+1, got[i], want[i])
		}
	}
}
