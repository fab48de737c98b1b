package markdown

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

// matchCase is one case of testdata/match.json, which theme/run.js's
// matcher must pass too (theme TestRunJSMatchCases).
type matchCase struct {
	Name     string   `json:"name"`
	Expected []string `json:"expected"`
	Actual   string   `json:"actual"`
	Match    bool     `json:"match"`
	Lines    []string `json:"lines"`
}

func readMatchCases(t *testing.T) []matchCase {
	t.Helper()
	data, err := os.ReadFile("testdata/match.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Cases []matchCase }
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) < 20 {
		t.Fatalf("testdata/match.json has %d cases", len(f.Cases))
	}
	return f.Cases
}

// TestMatchCases runs the matcher's shared cases through OutputLines,
// Matches and Compare, which must agree with each other and with the case.
func TestMatchCases(t *testing.T) {
	for _, c := range readMatchCases(t) {
		lines := OutputLines(c.Actual)
		if c.Lines != nil && !(len(c.Lines) == 0 && len(lines) == 0) && !reflect.DeepEqual(lines, c.Lines) {
			t.Errorf("%s: OutputLines(%q) = %q, want %q", c.Name, c.Actual, lines, c.Lines)
		}
		if got := Matches(c.Expected, lines); got != c.Match {
			t.Errorf("%s: Matches(%q, %q) = %v, want %v", c.Name, c.Expected, lines, got, c.Match)
		}
		if got, _ := Compare(c.Expected, lines); got != c.Match {
			t.Errorf("%s: Compare(%q, %q) = %v, want %v", c.Name, c.Expected, lines, got, c.Match)
		}
	}
}
