package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/ownership-book/ownership/examples/chubby"
)

var update = flag.Bool("update", false, "rewrite testdata/sweep.golden from the program's output")

// The default sweep prints the table the chapter shows, the same on every
// run. Regenerate with: go test ./examples/chubby/sweep -update
func TestOutputMatchesGolden(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out, chubby.DefaultExperiment()); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "sweep.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("output differs from %s (run with -update if intended)\ngot:\n%s\nwant:\n%s", path, out.Bytes(), want)
	}
}
