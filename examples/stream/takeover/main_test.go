package main

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/takeover.golden")

// TestTakeoverTranscript runs the program twice: the output must be the same
// both times (no ports, times or directories in it, and the staged race
// always interleaves alike), equal to the golden file, and must show each
// scene's steps in order: the takeover and the fenced process; the recovery
// that finds two pending commits landed and resends the third under the new
// epoch; the race in which two opens claim one epoch, the loser claims again
// and fences the first winner. Reference: chapter "Owning a database
// through its stream", sections "How a replaced owner learns of it", "Recovery
// after the claim" and "The claim".
func TestTakeoverTranscript(t *testing.T) {
	var first, second bytes.Buffer
	if err := run(&first); err != nil {
		t.Fatal(err)
	}
	if err := run(&second); err != nil {
		t.Fatal(err)
	}
	if first.String() != second.String() {
		t.Fatalf("two runs differ:\n%s\n---\n%s", first.String(), second.String())
	}
	if *update {
		if err := os.WriteFile("testdata/takeover.golden", first.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	golden, err := os.ReadFile("testdata/takeover.golden")
	if err != nil {
		t.Fatal(err)
	}
	if first.String() != string(golden) {
		t.Errorf("output differs from testdata/takeover.golden (go test -update):\n%s", first.String())
	}
	// The takeover's steps, in order.
	out := first.String()
	at := 0
	for _, want := range []string{
		"A  append epoch 7 seq 41 -> 200 applied",
		"B  claim  epoch 8 seq 0  -> 200 applied, closed epoch 7 at seq 41",
		"B  append epoch 8 seq 1  -> 200 applied",
		"A  append epoch 7 seq 42 -> 403 epoch-closed, current epoch 8",
		"A  reset; the listener runs with:\n     orders: database reset (fenced)",
		"A  Get(order-41) fails:\n     orders: database reset (fenced)",
		"A  reset listener ran 1 time(s)",
		// Recovery that resends.
		"B  append epoch 8 seq 2  -> 200 applied, the answer lost on its way back",
		"B  Synced fails (unreachable=true)",
		"B  claim  epoch 9 seq 0  -> 200 applied, closed epoch 8 at seq 2",
		"B  leader read up to the claim: 2 pending landed, 1 to resend, 0 discarded",
		"B  append epoch 9 seq 1  -> 200 applied",
		"B  Synced: the stream holds 45 commits",
		// A claim race, its re-claim, and the first winner fenced.
		"C  open: reads the stream, takes 45 commits, epochs up to 9",
		"D  open: reads the stream, takes 45 commits, epochs up to 9",
		"C  claim  epoch 10 seq 0  -> 200 applied, closed epoch 9 at seq 1",
		"D  claim  epoch 10 seq 0  -> 204 duplicate",
		"D  reads the stream: the claim of epoch 10 there is not its own; race lost",
		"D  claim  epoch 11 seq 0  -> 200 applied, closed epoch 10 at seq 0",
		"C  append epoch 10 seq 1  -> 403 epoch-closed, current epoch 11",
		"C  Synced: fenced=true",
		"B  probe  epoch 9 seq 1  -> 403 epoch-closed, current epoch 11",
		"D  append epoch 11 seq 1  -> 200 applied",
		`D  Get(order-45) = "commit 45"; the stream holds 46 commits`,
	} {
		i := strings.Index(out[at:], want)
		if i < 0 {
			t.Fatalf("missing, or out of order: %q", want)
		}
		at += i + len(want)
	}
}
