package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/fenced.golden from the program's output")

// The program's output equals the golden file that the chapter's transcript
// shows. Regenerate with:
//
//	go test ./examples/ownership/fenced -update
func TestOutputMatchesGolden(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "fenced.golden")
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
		t.Errorf("output differs from %s\ngot:\n%s\nwant:\n%s", golden, out.Bytes(), want)
	}
}

// The record-checking server refuses A's epoch-41 write from the moment the
// handover begins; the highest-epoch server admits it until B's epoch-42
// write has reached it, and refuses it afterwards.
// Reference: chapter "One owner at a time", section "Two meanings
// of fenced".
func TestTwoMeaningsOfFenced(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	var paused []string
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.Contains(l, "A (paused) writes at 41") {
			paused = append(paused, strings.Join(strings.Fields(l), " "))
		}
	}
	want := []string{
		"A (paused) writes at 41 Transferring(A, B, 41, 42) applied refused (41 < 42)",
		"A (paused) writes at 41 Owned(B, 42) applied refused (41 < 42)",
		"A (paused) writes at 41 Owned(B, 42) refused (41 < 42) refused (41 < 42)",
	}
	if strings.Join(paused, "\n") != strings.Join(want, "\n") {
		t.Fatalf("A's paused writes:\n%s\nwant:\n%s", strings.Join(paused, "\n"), strings.Join(want, "\n"))
	}
}
