package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the program's output")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run with -update if intended)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// The table is deterministic and equal to the golden file the chapter's
// transcript shows. Regenerate with: go test ./examples/chubby/zombie -update
func TestTableMatchesGolden(t *testing.T) {
	var a, b bytes.Buffer
	if err := run(&a); err != nil {
		t.Fatal(err)
	}
	if err := run(&b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two runs printed different tables")
	}
	golden(t, "table.golden", a.Bytes())
}

// The table states the zombie writer's outcomes: overwritten when nothing
// is checked and when the pause outlasts lock-delay, safe when it does not,
// refused by every sequencer check, and late for the newest-seen server
// while client 2 has not written yet; the ownership model's refusal in the
// slow case comes from the coordinator's fence notice (without it, A is late,
// as with the newest-seen sequencer).
// Reference: Kleppmann 2016; Burrows 2006, section 2.4.
func TestTableShowsTheOutcomes(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"unchecked": "overwritten", "lockdelay-short": "safe", "lockdelay-long": "overwritten",
		"cell": "refused", "newest": "refused", "ownership": "refused",
		"cell-slow": "refused", "newest-slow": "late", "ownership-slow": "refused",
		"ownership-quiet": "late",
	}
	seen := 0
	for _, line := range strings.Split(out.String(), "\n") {
		f := strings.Fields(line)
		if len(f) > 1 {
			if v, ok := want[f[0]]; ok {
				seen++
				if f[len(f)-1] != v {
					t.Errorf("row %s ends %q, want %q", f[0], f[len(f)-1], v)
				}
			}
		}
	}
	if seen != len(want) {
		t.Fatalf("found %d of %d rows:\n%s", seen, len(want), out.String())
	}
}

// Every row's timeline and figure can be printed, the figure is a D2
// sequence diagram, and an unknown key is an error that lists the keys.
func TestTimelinesAndFigures(t *testing.T) {
	for _, r := range rows {
		var tl, fig bytes.Buffer
		if err := printTimeline(&tl, r.key); err != nil {
			t.Fatalf("%s: %v", r.key, err)
		}
		if err := printD2(&fig, r.key); err != nil {
			t.Fatalf("%s: %v", r.key, err)
		}
		if !strings.HasPrefix(fig.String(), "shape: sequence_diagram\n") || !strings.Contains(fig.String(), "c1 -> server") {
			t.Errorf("%s: figure lacks the diagram or client 1's write:\n%s", r.key, fig.String())
		}
	}
	var fig bytes.Buffer
	if err := printD2(&fig, "lockdelay-long"); err != nil {
		t.Fatal(err)
	}
	golden(t, "lockdelay-long.d2", fig.Bytes())
	err := printTimeline(&bytes.Buffer{}, "nope")
	if err == nil || !strings.Contains(err.Error(), "unchecked, lockdelay-short") {
		t.Fatalf("unknown key: %v", err)
	}
}
