package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ownership-book/ownership/examples/ownership"
	"github.com/ownership-book/ownership/examples/ownership/service"
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

// A -data directory can be used again: the voters come back on the Raft
// addresses their log's configuration names and elect a leader, and the
// owner record is still there. A directory made for another number of
// voters is refused with a message naming it. Before the fix each start
// picked fresh ports, so three voters restarted on an old directory could
// not find each other and ownerd failed after 30 s with "no leader".
func TestDataDirectoryCanBeUsedAgain(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := startCluster(3, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.waitLeader(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.coordinate(ctx, func(s *service.Server) (ownership.State, error) { return s.Create(ctx, "x", "A") }); err != nil {
		t.Fatal(err)
	}
	c.close()

	c, err = startCluster(3, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	if err := c.waitLeader(ctx); err != nil {
		t.Fatalf("restarted on the same directory: %v", err)
	}
	_, err = c.coordinate(ctx, func(s *service.Server) (ownership.State, error) { return s.Create(ctx, "x", "A") })
	if !errors.Is(err, service.ErrActorExists) {
		t.Fatalf("Create x after the restart: %v; want ErrActorExists (the record survived)", err)
	}
	if _, err := startCluster(1, dir); err == nil || !strings.Contains(err.Error(), "3 voters") {
		t.Fatalf("one voter on a three-voter directory: %v; want an error naming 3 voters", err)
	}
}
