package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/cost.golden from the program's output")

// The program's output is deterministic and equal to the golden file (the
// chapter's transcript shows the same text). Regenerate with:
//
//	go test ./examples/composed/cost -update
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
	golden := filepath.Join("testdata", "cost.golden")
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
	// Light load: three record writes for every two messages (one hop).
	if !bytes.Contains(first.Bytes(), []byte("  binary    63      13.17     19.76")) {
		t.Errorf("binary(63) light-load row is not 13.17 messages and 19.75 record writes:\n%s", first.Bytes())
	}
}
