package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/ownership-book/ownership/examples/composed"
)

var update = flag.Bool("update", false, "rewrite testdata/check.golden from the program's output")

// The program's output at the default bounds equals the golden file (the
// chapter's transcript shows the same text). Regenerate with:
//
//	go test ./examples/composed/check -update
func TestOutputMatchesGolden(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out, composed.Bounds{Requests: 1, Dups: 1, Losses: 1, Revokes: 1}, false); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "check.golden")
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("output differs from %s (run with -update if the change is intended)\ngot:\n%s\nwant:\n%s", golden, out.Bytes(), want)
	}
	for _, s := range []string{"Composed                         line(3)", "  => the resource accepted a write out of ownership order"} {
		if !bytes.Contains(out.Bytes(), []byte(s)) {
			t.Errorf("output lacks %q", s)
		}
	}
}
