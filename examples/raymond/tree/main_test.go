package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/tree.golden from the program's output")

// The program's output is deterministic and equal to the golden file (the
// chapter's transcript shows the same text). Regenerate with:
//
//	go test ./examples/raymond/tree -update
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
	golden := filepath.Join("testdata", "tree.golden")
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

// The figure shows the request from G served with 2·dist(G, D) = 8 messages
// and every HOLDER pointer turned towards G.
// Reference: Raymond 1989, the HOLDER variables.
func TestFigureShowsPointersTurned(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`D: "D (privilege)"`, `G: "G (privilege)"`, "  A -> B\n  B -> D\n", "  A -> C\n  B -> A\n  C -> G\n  D -> B\n",
		`"8 messages (2 x dist(G, D) = 2 x 4)`,
	} {
		if !bytes.Contains(out.Bytes(), []byte(want)) {
			t.Errorf("output lacks %q:\n%s", want, out.Bytes())
		}
	}
}
