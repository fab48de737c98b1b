package main

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/demo.txt from a real run")

// The demonstration's transcript is deterministic and is the one in
// testdata/demo.txt (which the book's chapter shows): run it twice with one
// voter and once with three; only the header line may differ.
func TestDemoTranscriptIsDeterministic(t *testing.T) {
	var one, again, three bytes.Buffer
	for _, r := range []struct {
		voters int
		out    *bytes.Buffer
	}{{1, &one}, {1, &again}, {3, &three}} {
		if err := run(r.voters, false, t.TempDir(), r.out); err != nil {
			t.Fatalf("run with %d voters: %v", r.voters, err)
		}
	}
	if *update {
		if err := os.WriteFile("testdata/demo.txt", one.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("testdata/demo.txt")
	if err != nil {
		t.Fatal(err)
	}
	if one.String() != string(want) {
		t.Fatalf("transcript:\n%s\nwant (testdata/demo.txt):\n%s", one.String(), want)
	}
	if again.String() != one.String() {
		t.Fatalf("second run differs:\n%s", again.String())
	}
	body := func(s string) string { _, rest, _ := strings.Cut(s, "\n"); return rest }
	if body(three.String()) != body(one.String()) {
		t.Fatalf("three voters:\n%s\none voter:\n%s", three.String(), one.String())
	}
	if !strings.HasPrefix(three.String(), "ownership service: Raft group of 3 voters") {
		t.Fatalf("three-voter header: %q", strings.SplitN(three.String(), "\n", 2)[0])
	}
}

func TestVotersFlagRefusesOtherCounts(t *testing.T) {
	for _, n := range []int{0, 2, 5} {
		if err := run(n, false, t.TempDir(), new(bytes.Buffer)); err == nil || !strings.Contains(err.Error(), "want 1 or 3") {
			t.Errorf("run(-voters %d) = %v; want an error naming the allowed counts", n, err)
		}
	}
}
