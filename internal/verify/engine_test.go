package verify

import (
	"strings"
	"testing"

	"github.com/ownership-book/ownership/internal/markdown"
)

func TestFirstDiff(t *testing.T) {
	for _, c := range []struct {
		expected, actual []string
		want             string
	}{
		{[]string{"a", "b", "c"}, []string{"a", "x", "c"}, `the transcript's line 2 is "b", the program printed "x"`},
		{[]string{"a", "b"}, []string{"a"}, `the transcript's line 2, "b", is not printed`},
		{[]string{"a"}, []string{"a", "z"}, `the program printed "z" where the transcript shows nothing`},
		{[]string{"one", "two"}, []string{"mkdir /tmp/x: not implemented on js", "exit status 1"}, `the transcript's line 1 is "one", the program printed "mkdir /tmp/x: not implemented on js"`},
	} {
		same, diff := markdown.Compare(c.expected, c.actual)
		if same {
			t.Fatalf("%q and %q compare equal", c.expected, c.actual)
		}
		if got := firstDiff(diff); !strings.HasPrefix(got, c.want) {
			t.Errorf("firstDiff(%q vs %q) = %s, want %s", c.expected, c.actual, got, c.want)
		}
	}
}
