package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/ownership-book/ownership/examples/internal/golden"
)

var update = flag.Bool("update", false, "rewrite testdata/figure8.golden from the program's output")

// The program prints the same transcript on every run, equal to the golden
// file (and to the chapter's transcript, which bookgen checks). Two runs
// are compared, so output that depends on timing or scheduling shows up
// here. Regenerate with: go test ./examples/raft/figure8 -update
func TestOutputMatchesGolden(t *testing.T) {
	golden.Check(t, "figure8", "./examples/raft/figure8", *update, run)
}

// The -d2 output (the chapter's figure) is deterministic and matches its
// golden file. Regenerate with: go test ./examples/raft/figure8 -update
func TestD2MatchesGolden(t *testing.T) {
	var a, b bytes.Buffer
	if err := drawD2(&a); err != nil {
		t.Fatal(err)
	}
	if err := drawD2(&b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two runs printed different D2")
	}
	golden := filepath.Join("testdata", "figure8.d2")
	if *update {
		if err := os.WriteFile(golden, a.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(a.Bytes(), want) {
		t.Errorf("D2 differs from %s (run with -update if the change is intended)", golden)
	}
}
