// Package golden is the golden-file test the book's programs share: run
// the program twice, require the same output both times (output that
// depends on timing or scheduling shows up here), and compare it with
// testdata/<name>.golden, which -update rewrites. A library for the
// examples' tests, not a program.
package golden

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// Check runs run twice and compares its output with testdata/name.golden
// (relative to the test's package), rewriting the file first when update
// is set. pkg is the package path shown in the hint to regenerate
// ("./examples/raft/failover").
func Check(t *testing.T, name, pkg string, update bool, run func(io.Writer) error) {
	t.Helper()
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
	file := filepath.Join("testdata", name+".golden")
	if update {
		if err := os.WriteFile(file, runs[0], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test %s -update to create it)", err, pkg)
	}
	if !bytes.Equal(runs[0], want) {
		t.Errorf("output differs from %s (run go test %s -update if the change is intended)\ngot:\n%s\nwant:\n%s", file, pkg, runs[0], want)
	}
}
