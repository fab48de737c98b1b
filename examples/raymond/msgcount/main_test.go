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

var update = flag.Bool("update", false, "rewrite testdata/msgcount.golden from the program's output")

// The program's output is deterministic and equal to the golden file (the
// chapter's transcript shows the same text). Regenerate with:
//
//	go test ./examples/raymond/msgcount -update
func TestOutputMatchesGolden(t *testing.T) {
	first := output(t)
	var second bytes.Buffer
	if err := run(&second); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Bytes(), second.Bytes()) {
		t.Fatalf("two runs printed different output:\n%s\n---\n%s", first.Bytes(), second.Bytes())
	}
	golden := filepath.Join("testdata", "msgcount.golden")
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

// The tables show what the chapter says of them: an isolated request on a
// 255-node binary tree costs at most 2·diameter = 28 messages, the line's
// worst case is 2(N-1), and heavy load on 255 nodes costs 3.984 = 4(N-1)/N
// messages per entry.
// Reference: Raymond 1989, abstract (O(log N) under light demand, about four
// messages under saturated demand).
func TestTablesShowThePapersFigures(t *testing.T) {
	out := output(t)
	for _, want := range []string{
		"  binary   255    14    20.41    28    7.99",
		"  line      63    62    42.67   124    5.98               124",
		"  binary   255     3.984     3.984",
		"  star     255     3.984     3.984",
	} {
		if !bytes.Contains(out.Bytes(), []byte(want)) {
			t.Errorf("output lacks %q:\n%s", want, out.Bytes())
		}
	}
}
