package markdown

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

func TestMatchLine(t *testing.T) {
	tests := []struct {
		expected, actual string
		want             bool
	}{
		{"epoch 3", "epoch 3", true},
		{"epoch 3", "epoch 3   ", true},
		{"epoch 3  ", "epoch 3", true},
		{"epoch 3", "epoch 4", false},
		{"epoch 3", " epoch 3", false},
		{"ok  \tpkg\t[..]", "ok  \tpkg\t0.012s", true},
		{"ok  \tpkg\t[..]", "ok  \tpkg\t(cached)", true},
		{"[..]", "", true},
		{"[..]", "anything at all", true},
		{"a[..]b[..]c", "a-b-c", true},
		{"a[..]b[..]c", "abc", true},
		{"a[..]b[..]c", "acb", false},
		{"a[..]a", "a", false}, // prefix and suffix may not overlap
		{"a[..]a", "aa", true},
		{"x [..] y", "x  y", true},
		{"x [..] y", "x y", false},
		{"...", "...", true},
	}
	for _, tt := range tests {
		if got := MatchLine(tt.expected, tt.actual); got != tt.want {
			t.Errorf("MatchLine(%q, %q) = %v, want %v", tt.expected, tt.actual, got, tt.want)
		}
	}
}

func TestCompare(t *testing.T) {
	l := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(s, "|")
	}
	tests := []struct {
		name             string
		expected, actual string
		ok               bool
		first            int // FirstDifference
	}{
		{"equal", "a|b|c", "a|b|c", true, -1},
		{"empty both", "", "", true, -1},
		{"dots match zero lines", "a|...|b", "a|b", true, -1},
		{"dots match many lines", "a|...|b", "a|x|y|z|b", true, -1},
		{"dots at end", "a|...", "a|x|y", true, -1},
		{"dots at start", "...|z", "x|y|z", true, -1},
		{"dots alone match nothing", "...", "", true, -1},
		{"two dots", "...|m|...", "a|m|b|c", true, -1},
		{"dots need the line after", "a|...|b", "a|x|y", false, 2},
		{"trailing blank lines ignored", "a|b||", "a|b", true, -1},
		{"changed middle", "a|b|c", "a|X|c", false, 1},
		{"missing line", "a|b|c", "a|c", false, 1},
		{"extra line at end", "a|b", "a|b|c", false, 2},
		{"extra line in middle", "a|c", "a|b|c", false, 1},
		{"no output", "a", "", false, 0},
		{"unexpected output", "", "a", false, 0},
		{"inline wildcard", "took [..]ms|done", "took 12ms|done", true, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, diff := Compare(l(tt.expected), l(tt.actual))
			if ok != tt.ok {
				t.Errorf("ok = %v, want %v\n%s", ok, tt.ok, FormatDiff(diff, 3))
			}
			if got := FirstDifference(diff, len(l(tt.expected))); got != tt.first {
				t.Errorf("FirstDifference = %d, want %d\n%s", got, tt.first, FormatDiff(diff, 3))
			}
		})
	}
}

func TestFormatDiff(t *testing.T) {
	exp := []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}
	act := []string{"1", "2", "3", "4", "5", "6", "7", "8", "nine", "10"}
	_, diff := Compare(exp, act)
	got := FormatDiff(diff, 2)
	want := "--- expected\n+++ actual\n@@ ... @@\n 7\n 8\n-9\n+nine\n 10\n"
	if got != want {
		t.Errorf("FormatDiff:\n%s\nwant:\n%s", got, want)
	}
}

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"go run ./examples/x", []string{"go", "run", "./examples/x"}},
		{"  go   test  -run TestX ./x  ", []string{"go", "test", "-run", "TestX", "./x"}},
		{`go run ./x 'a b' "c d" e\ f`, []string{"go", "run", "./x", "a b", "c d", "e f"}},
		{`go run ./x "say \"hi\"" 'it''s'`, []string{"go", "run", "./x", `say "hi"`, "its"}},
		{`go test -run '^Test(A|B)$' ./x`, []string{"go", "test", "-run", "^Test(A|B)$", "./x"}},
		{`go run ./x a=b c#d`, []string{"go", "run", "./x", "a=b", "c#d"}},
		{`go run ./x ""`, []string{"go", "run", "./x", ""}},
	}
	for _, tt := range tests {
		got, err := SplitCommand(tt.in)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SplitCommand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{
		"go run ./x | head", "go run ./x > out", "go run ./x; ls", "go run ./x &", "go run $X",
		"go run `x`", `go run "$HOME"`, "go run ./x *", "GOFLAGS=-v go run ./x", "go run ./x # comment",
		"go run ~/x", "go run 'open", `go run "open`, `go run x\`,
	} {
		if got, err := SplitCommand(bad); err == nil {
			t.Errorf("SplitCommand(%q) = %q, want an error", bad, got)
		}
	}
	if _, err := SplitCommand("go run ./x | head"); !errors.Is(err, ErrShellSyntax) {
		t.Errorf("pipe: err = %v, want ErrShellSyntax", err)
	}
}

func TestParseTranscript(t *testing.T) {
	cmds, err := ParseTranscript([]string{
		"",
		"$ go run ./a",
		"one",
		"",
		"two",
		"",
		"$ go test ./b",
		"$ go run ./c",
		"...",
		"",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []Command{
		{Line: 1, Text: "go run ./a", Expected: []string{"one", "", "two"}},
		{Line: 6, Text: "go test ./b"},
		{Line: 7, Text: "go run ./c", Expected: []string{"..."}},
	}
	if !reflect.DeepEqual(cmds, want) {
		t.Errorf("ParseTranscript =\n%+v\nwant\n%+v", cmds, want)
	}
	for _, bad := range [][]string{{"output first", "$ go run ./a"}, {"$", "x"}, {"$   "}} {
		_, err := ParseTranscript(bad)
		var te *TranscriptError
		if !errors.As(err, &te) || te.Line != 0 {
			t.Errorf("ParseTranscript(%q) err = %v, want a TranscriptError at line 0", bad, err)
		}
	}
}

func TestExitAccepted(t *testing.T) {
	tests := []struct {
		code     int
		expected []string
		want     bool
	}{
		{0, nil, true},
		{1, nil, false},
		{1, []string{"refused", "exit status 3"}, true},
		{1, []string{"exit status 0"}, false},
		{1, []string{"exit status [..]"}, false},
		{2, []string{"  exit status 2  "}, true},
	}
	for _, tt := range tests {
		if got := ExitAccepted(tt.code, tt.expected); got != tt.want {
			t.Errorf("ExitAccepted(%d, %q) = %v, want %v", tt.code, tt.expected, got, tt.want)
		}
	}
}

func TestPackageArgs(t *testing.T) {
	tests := []struct {
		cmd  string
		want []string
	}{
		{"go run ./examples/x", []string{"./examples/x"}},
		{"go run ./examples/x -flag ./not/a/package", []string{"./examples/x"}},
		{"go run -tags t -race ./examples/x arg", []string{"./examples/x"}},
		{"go run -ldflags=-s ./examples/x", []string{"./examples/x"}},
		{"go run main.go util.go arg", []string{"main.go", "util.go"}},
		{"go test ./a ./b/...", []string{"./a", "./b/..."}},
		{"go test -run TestX -count 1 ./a", []string{"./a"}},
		{"go test -v", []string{"."}},
		{"go test ./a -args ./b", []string{"./a"}},
	}
	for _, tt := range tests {
		w, err := SplitCommand(tt.cmd)
		if err != nil {
			t.Fatal(err)
		}
		if got := PackageArgs(w); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("PackageArgs(%q) = %q, want %q", tt.cmd, got, tt.want)
		}
	}
}

// FuzzParseTranscript checks the transcript parser and the matcher on
// arbitrary blocks: no panics; commands and expected lines account for
// every non-leading line; a block's expected lines always match themselves
// when they hold no wildcard; the diff reproduces both sides.
func FuzzParseTranscript(f *testing.F) {
	f.Add("$ go run ./x\na\n...\nb\n$ go test ./y\nok [..]\n")
	f.Add("\n$ go run ./x\n\n\n")
	f.Add("text\n$ go run ./x")
	f.Add("$\n$ $\n")
	f.Fuzz(func(t *testing.T, block string) {
		lines := strings.Split(block, "\n")
		cmds, err := ParseTranscript(lines)
		if err != nil {
			var te *TranscriptError
			if !errors.As(err, &te) || te.Line < 0 || te.Line >= len(lines) {
				t.Fatalf("bad error %v", err)
			}
			return
		}
		for i, c := range cmds {
			if !strings.HasPrefix(lines[c.Line], "$") || (i > 0 && c.Line <= cmds[i-1].Line) {
				t.Fatalf("command %d at line %d: %q", i, c.Line, lines[c.Line])
			}
			if len(c.Expected) > 0 && strings.TrimSpace(c.Expected[len(c.Expected)-1]) == "" {
				t.Fatalf("trailing blank expected line kept")
			}
			ok, diff := Compare(c.Expected, c.Expected)
			wild := strings.Contains(strings.Join(c.Expected, "\n"), "...") || strings.Contains(strings.Join(c.Expected, "\n"), "[..]")
			if !ok && !wild {
				t.Fatalf("expected lines %q do not match themselves:\n%s", c.Expected, FormatDiff(diff, 3))
			}
			// Against an unrelated output, the diff still accounts for
			// both sides.
			actual := []string{"zz", lines[0]}
			_, diff = Compare(c.Expected, actual)
			var gotA []string
			for _, e := range diff {
				if e.Op != '-' {
					gotA = append(gotA, e.Text)
				}
			}
			if !reflect.DeepEqual(gotA, TrimTrailingBlank(append([]string(nil), actual...))) && len(TrimTrailingBlank(append([]string(nil), actual...))) == len(actual) {
				t.Fatalf("diff actual side %q, want %q", gotA, actual)
			}
			if fd := FirstDifference(diff, len(c.Expected)); fd > len(c.Expected) {
				t.Fatalf("FirstDifference %d past %d expected lines", fd, len(c.Expected))
			}
		}
	})
}

func TestWhitespaceHint(t *testing.T) {
	_, diff := Compare([]string{"ok      example.com/x [..]", "done"}, []string{"ok  \texample.com/x\t0.01s", "done"})
	if h := WhitespaceHint(diff); !strings.Contains(h, "differ only in white space") || !strings.Contains(h, `"ok  \texample.com/x\t0.01s"`) {
		t.Errorf("hint = %q, want a note quoting the line with its tab", h)
	}
	_, diff = Compare([]string{"epoch 1"}, []string{"epoch 2"})
	if h := WhitespaceHint(diff); h != "" {
		t.Errorf("hint for a real difference = %q, want none", h)
	}
}

// TestMatchesAgreesWithCompare: Matches, the cache's quick check, gives
// Compare's verdict on random transcripts of a few line shapes, "..."
// lines and "[..]" patterns among them.
func TestMatchesAgreesWithCompare(t *testing.T) {
	expectedLines := []string{"a", "b", "ab", "a[..]", "[..]b", AnyLines, "  " + AnyLines, "", "c  "}
	actualLines := []string{"a", "b", "ab", "axb", "c", "", "..."}
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(from []string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = from[rng.IntN(len(from))]
		}
		return out
	}
	matched := 0
	for range 200000 {
		e, a := pick(expectedLines, rng.IntN(6)), pick(actualLines, rng.IntN(7))
		want, _ := Compare(e, a)
		if got := Matches(e, a); got != want {
			t.Fatalf("Matches(%q, %q) = %v, Compare says %v", e, a, got, want)
		}
		if want {
			matched++
		}
	}
	if matched < 1000 {
		t.Errorf("only %d of the random transcripts match: the test compares little", matched)
	}
}
