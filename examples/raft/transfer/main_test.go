package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/transfer.golden from the program's output")

// The program prints the same transcript on every run, equal to the golden
// file (and to the chapter's transcript, which bookgen checks). Two runs
// are compared, so output that depends on timing or scheduling shows up
// here. Regenerate with: go test ./examples/raft/transfer -update
func TestOutputMatchesGolden(t *testing.T) {
	var runs [2][]byte
	for i := range runs {
		var out bytes.Buffer
		if err := run(&out); err != nil {
			t.Fatal(err)
		}
		runs[i] = out.Bytes()
	}
	if !bytes.Equal(runs[0], runs[1]) {
		t.Fatalf("two runs printed different output:\n%s\n---\n%s", runs[0], runs[1])
	}
	golden := filepath.Join("testdata", "transfer.golden")
	if *update {
		if err := os.WriteFile(golden, runs[0], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(runs[0], want) {
		t.Errorf("output differs from %s (run with -update if the change is intended)\ngot:\n%s\nwant:\n%s", golden, runs[0], want)
	}
}
