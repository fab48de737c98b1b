package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/ownership-book/ownership/examples/ownership/check"
)

var update = flag.Bool("update", false, "rewrite testdata/exhaustive.golden from the program's output")

// The report with the default bounds is deterministic and equal to the
// golden file that the chapter's transcript shows. Regenerate with:
//
//	go test ./examples/ownership/check/exhaustive -update
func TestOutputMatchesGolden(t *testing.T) {
	var out bytes.Buffer
	if err := check.WriteReport(&out, check.Options{Bounds: check.DefaultBounds}); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "exhaustive.golden")
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
}
