package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/figure8.golden from the program's output")

// The program prints the same transcript on every run, equal to the golden
// file (and to the chapter's transcript, which bookgen checks). Two runs
// are compared, so output that depends on timing or scheduling shows up
// here. Regenerate with: go test ./examples/raft/figure8 -update
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
	golden := filepath.Join("testdata", "figure8.golden")
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
