package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// output runs the program once for all the tests of this file.
var output = func() func(t *testing.T) *bytes.Buffer {
	var once sync.Once
	var out bytes.Buffer
	var err error
	return func(t *testing.T) *bytes.Buffer {
		t.Helper()
		once.Do(func() { err = run(&out) })
		if err != nil {
			t.Fatal(err)
		}
		return &out
	}
}()

var update = flag.Bool("update", false, "rewrite testdata/nemesis.golden from the program's output")

// The program's output is deterministic and equal to the golden file (the
// chapter's transcript shows the same text). Regenerate with:
//
//	go test ./examples/raymond/nemesis -update
func TestOutputMatchesGolden(t *testing.T) {
	first := output(t)
	var second bytes.Buffer
	if err := run(&second); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Bytes(), second.Bytes()) {
		t.Fatalf("two runs printed different output:\n%s\n---\n%s", first.Bytes(), second.Bytes())
	}
	golden := filepath.Join("testdata", "nemesis.golden")
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

// The negative controls print what the chapter claims: reordering alone
// never breaks an invariant, one duplicated PRIVILEGE puts B and C in the
// critical section together after eight moves, and one lost PRIVILEGE
// leaves both nodes of a two-node line waiting forever.
// Reference: Raymond 1989 assumes reliable delivery and tolerates
// overtaking.
func TestNegativeControlsShowTheFailures(t *testing.T) {
	out := output(t)
	for _, want := range []string{
		"star(4)  privilege at A: states 13942, transitions 34442, depth 29: no violation",
		"Shortest: line(3), privilege at A, 8 moves:",
		"=> more than one node USING: [B C]",
		"5. lose PRIVILEGE(A->B)",
		"=> every node is waiting and the privilege is gone",
	} {
		if !bytes.Contains(out.Bytes(), []byte(want)) {
			t.Errorf("output lacks %q:\n%s", want, out.Bytes())
		}
	}
}
