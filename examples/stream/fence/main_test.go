package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestTranscript runs the takeover against a real voter and checks every
// line the chapter shows: the claim names epoch 7 closed at seq 41, B's
// append lands, A's next append is fenced with 403 epoch-closed, B's retry
// is a duplicate, and a stale incarnation gets 412.
// Reference: chapter "The epoch-fenced stream", section "The claim and its
// answer"; PROTOCOL.md 5.2.1.
func TestTranscript(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"A  create /v1/stream/db         -> 201 Created",
		"A  append epoch 7, seq 0..41    -> 200 OK, Producer-Epoch: 7, Producer-Seq: 41",
		"B  claim: epoch 8, seq 0        -> 200 OK, Producer-Epoch: 8, Producer-Closed-Epoch: 7, Producer-Closed-Seq: 41",
		"B  read after the claim         -> 43 records, A's last: a41, then: b0",
		"B  append epoch 8, seq 1        -> 200 OK, Producer-Epoch: 8, Producer-Seq: 1",
		"A  append epoch 7, seq 42       -> 403 Forbidden, Producer-Epoch: 8, Producer-Outcome: epoch-closed",
		"A  reset: fenced (stop)",
		"B  retry epoch 8, seq 1         -> 204 No Content, Producer-Seq: 1",
		"B  append with old incarnation  -> 412 Precondition Failed",
		"   the stream holds 44 records: a0..a41, then b0 b1",
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
