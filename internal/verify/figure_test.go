package verify

import (
	"strings"
	"testing"
)

// figureProgram prints a small D2 sequence diagram.
const figureProgram = `package main

import "fmt"

func main() {
	fmt.Println("shape: sequence_diagram")
	fmt.Println("A -> stream: append epoch 1")
	fmt.Println("stream -> A: 200")
}
`

var figureExtra = map[string]string{"examples/greet/figure/main.go": figureProgram}

// TestFigureRunPassesAndCaches checks that a d2 block with run= whose body
// is the program's output passes, and that the next verification takes
// the result from the cache without starting the program.
func TestFigureRunPassesAndCaches(t *testing.T) {
	chapter := "# Chapter\n\n```d2 run=\"go run ./examples/greet/figure\" caption=\"A run\"\n" +
		"shape: sequence_diagram\nA -> stream: append epoch 1\nstream -> A: 200\n```\n\n```goat\n+--+\n```\n"
	root := fixture(t, chapter, figureExtra)
	cache := t.TempDir()
	rec := &recorder{}
	rep, err := verifyRoot(t, root, Options{exec: rec.exec, CacheDir: cache})
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if n := countPrefix(rec.take(), "run ./examples/greet/figure"); n != 1 {
		t.Errorf("figure program ran %d times, want 1", n)
	}
	found := false
	for _, c := range rep.Checks {
		if c.Kind == "transcript" && c.Subject == "book/ch.md:3" {
			found = true
		}
	}
	if !found {
		t.Errorf("no check for the figure at book/ch.md:3 in %+v", rep.Checks)
	}
	if _, err := verifyRoot(t, root, Options{exec: rec.exec, CacheDir: cache}); err != nil {
		t.Fatalf("second Verify: %v", err)
	}
	if n := countPrefix(rec.take(), "run ./examples/greet/figure"); n != 0 {
		t.Errorf("figure program ran %d times on the second verification, want 0 (cached)", n)
	}
}

// TestFigureRunMismatch checks that a body that differs from the program's
// output fails at the first differing line, and that the failure is not
// cached.
func TestFigureRunMismatch(t *testing.T) {
	chapter := "# Chapter\n" + // 1
		"```d2 run=\"go run ./examples/greet/figure\"\n" + // 2
		"shape: sequence_diagram\n" + // 3
		"A -> stream: append epoch 2\n" + // 4
		"stream -> A: 200\n" + // 5
		"```\n"
	root := fixture(t, chapter, figureExtra)
	errs := only(t, func() error { _, err := verifyRoot(t, root, Options{CacheDir: sharedCache}); return err }())
	if len(errs) != 1 {
		t.Fatalf("got %d errors, want 1: %v", len(errs), errs)
	}
	e := errs[0]
	if e.File != "book/ch.md" || e.Line != 4 || !strings.Contains(e.Msg, "differs from the figure") {
		t.Errorf("error = %v, want book/ch.md:4 ... differs from the figure", e)
	}
	if !strings.Contains(e.Detail, "-A -> stream: append epoch 2\n+A -> stream: append epoch 1") {
		t.Errorf("detail lacks the diff:\n%s", e.Detail)
	}
}

// TestFigureRunBless checks that bless rewrites a figure's body (in a list
// item, keeping its indentation) and that the result then passes.
func TestFigureRunBless(t *testing.T) {
	chapter := "# Chapter\n\n- The run:\n\n  ```d2 run=\"go run ./examples/greet/figure\"\n  old\n  ```\n\nDone.\n"
	root := fixture(t, chapter, figureExtra)
	cache := sharedCache
	_, blessed, err := blessRoot(t, root, Options{CacheDir: cache})
	if err != nil {
		t.Fatalf("Verify with Bless: %v", err)
	}
	want := "# Chapter\n\n- The run:\n\n  ```d2 run=\"go run ./examples/greet/figure\"\n" +
		"  shape: sequence_diagram\n  A -> stream: append epoch 1\n  stream -> A: 200\n  ```\n\nDone.\n"
	if got := readFile(t, root, "book/ch.md"); got != want {
		t.Errorf("blessed chapter:\n%s\nwant:\n%s", got, want)
	}
	if len(blessed) != 1 || !strings.HasPrefix(blessed[0], "book/ch.md:6: go run ./examples/greet/figure (1 lines -> 3 lines)") {
		t.Errorf("Blessed = %q", blessed)
	}
	if _, err := verifyRoot(t, root, Options{CacheDir: cache}); err != nil {
		t.Fatalf("Verify after blessing: %v", err)
	}

	// A fence on a list item's own line: the body is indented under it.
	chapter = "# Chapter\n\n- ```d2 run=\"go run ./examples/greet/figure\"\n  old\n  ```\n"
	root = fixture(t, chapter, figureExtra)
	if _, err := verifyRoot(t, root, Options{Bless: true, CacheDir: cache}); err != nil {
		t.Fatalf("Verify with Bless: %v", err)
	}
	want = "# Chapter\n\n- ```d2 run=\"go run ./examples/greet/figure\"\n" +
		"  shape: sequence_diagram\n  A -> stream: append epoch 1\n  stream -> A: 200\n  ```\n"
	if got := readFile(t, root, "book/ch.md"); got != want {
		t.Errorf("blessed chapter:\n%s\nwant:\n%s", got, want)
	}
}

// TestFigureRefusals checks the figure blocks bookgen refuses before
// running anything, each at its line.
func TestFigureRefusals(t *testing.T) {
	cases := []struct {
		name, block string
		line        int
		msg         string
	}{
		{"wildcard lines", "```d2 run=\"go run ./examples/greet/figure\"\nshape: sequence_diagram\n...\n```\n", 4, "transcript wildcard"},
		{"wildcard text", "```d2 run=\"go run ./examples/greet/figure\"\nA -> stream: [..]\n```\n", 3, "transcript wildcard"},
		{"unknown attribute", "```d2 rnu=\"go run ./examples/greet/figure\"\na -> b\n```\n", 2, "unknown attribute rnu"},
		{"goat with run", "```goat run=\"go run ./examples/greet/figure\"\n+--+\n```\n", 2, "unknown attribute run"},
		{"not go", "```d2 run=\"sh -c date\"\na -> b\n```\n", 2, "only \"go run ...\""},
		{"empty run", "```d2 run=\"\"\na -> b\n```\n", 2, "names no command"},
		{"timeout without run", "```d2 timeout=2m\na -> b\n```\n", 2, "timeout= without run="},
		{"bad timeout", "```d2 run=\"go run ./examples/greet/figure\" timeout=soon\na -> b\n```\n", 2, "timeout=\"soon\""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := fixture(t, "# Chapter\n"+c.block, figureExtra)
			rec := &recorder{}
			// The fixture's packages pass; their checks come from the
			// shared cache, so a refusal costs no go process.
			_, err := verifyRoot(t, root, Options{exec: rec.exec, CacheDir: sharedCache})
			errs := only(t, err)
			if len(errs) != 1 || errs[0].File != "book/ch.md" || errs[0].Line != c.line || !strings.Contains(errs[0].Msg, c.msg) {
				t.Errorf("errors = %v, want one at book/ch.md:%d containing %q", errs, c.line, c.msg)
			}
			if n := countPrefix(rec.take(), "run ./examples/greet/figure"); n != 0 {
				t.Errorf("the figure program ran (%d times) for a refused block", n)
			}
		})
	}
}
