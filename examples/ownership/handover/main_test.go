package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/handover.golden from the program's output")

// The program's output is deterministic and equal to the golden file that
// the chapter's transcript shows. Regenerate with:
//
//	go test ./examples/ownership/handover -update
func TestOutputMatchesGolden(t *testing.T) {
	var first, second bytes.Buffer
	if err := run(&first); err != nil {
		t.Fatal(err)
	}
	if err := run(&second); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Bytes(), second.Bytes()) {
		t.Fatalf("two runs printed different output:\n%s\n---\n%s", first.Bytes(), second.Bytes())
	}
	golden := filepath.Join("testdata", "handover.golden")
	if *update {
		if err := os.WriteFile(golden, first.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(first.Bytes(), want) {
		t.Errorf("output differs from %s (run with -update if the change is intended)\ngot:\n%s\nwant:\n%s", golden, first.Bytes(), want)
	}
}

// The transcript shows the rules the chapter states: the outgoing owner is
// fenced from BeginTransfer on, the abandoned epoch 43 is stale, and a
// duplicated request issued at an older epoch is refused and changes nothing.
// Reference: chapter "One owner at a time", sections "The epoch moves
// first" and "Abort and revoke".
func TestOutputShowsTheRules(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"BeginTransfer(A -> B)@41  Transferring(A, B, 41, 42)  no/no    -",
		"Acquire(B)@42             Owned(B, 42)                no/no    yes/yes",
		"refused: BeginTransfer: caller A is not the owner B",
		"valid_fence(43) = no",
		"Abort@43                  Unowned(44, B)",
		"BeginTransfer(B -> C)@42 refused: epoch 42 is stale: the current epoch is 44",
		"state before and after: Owned(B, 44), Owned(B, 44)",
	} {
		if !bytes.Contains(out.Bytes(), []byte(want)) {
			t.Errorf("output lacks %q:\n%s", want, out.Bytes())
		}
	}
}
