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
// both times (no ports, times or directories in it), equal to the golden
// file, and must show the takeover's steps in order (chapter "Taking a
// database over", section "What the fenced process sees").
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
	} {
		i := strings.Index(out[at:], want)
		if i < 0 {
			t.Fatalf("missing, or out of order: %q", want)
		}
		at += i + len(want)
	}
}
