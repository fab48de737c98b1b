package verify

import (
	"fmt"
	"strings"
	"testing"
)

// consoleChapter holds console blocks bookgen cannot run, and one of each
// other verdict.
const consoleChapter = "# C\n" + // 1
	"\n" + // 2
	"```console\n" + // 3
	"$ cargo run\n" + // 4
	"   Compiling hello v0.1.0\n" + // 5
	"```\n" + // 6
	"\n" + // 7
	"```console\n" + // 8
	"Hello, world!\n" + // 9
	"```\n" + // 10
	"\n" + // 11
	"```console title=\"a shell\"\n" + // 12
	"$ cd /tmp && ls\n" + // 13
	"```\n" + // 14
	"\n" + // 15
	"```console ignore\n" + // 16
	"$ go run ./examples/greet/hello\n" + // 17
	"```\n" + // 18
	"\n" + // 19
	"```go\n" + // 20
	"x := 1\n" + // 21
	"```\n" + // 22
	"\n" + // 23
	"```text\n" + // 24
	"plain\n" + // 25
	"```\n" // 26

// TestConsoleBlocksThatAreNotTranscripts checks the rule of which console
// blocks are transcripts: one with a "$ go run" or "$ go test" line in a
// book with a go.mod. Others ("$ cargo run", output with no "$" line, a
// shell session) are shown as they are, with no error and no go process,
// and every block gets a verdict keyed by its place in the chapter.
func TestConsoleBlocksThatAreNotTranscripts(t *testing.T) {
	root := fixture(t, consoleChapter, nil)
	rep, err := verifyRoot(t, root, Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	var got []string
	for _, b := range rep.Blocks {
		if b.Chapter == "ch.md" {
			got = append(got, fmt.Sprintf("%d@%d %s %s", b.Index, b.Line, b.Verdict, b.Check))
		}
	}
	want := []string{"0@3 shown ", "1@8 shown ", "2@12 shown ", "3@16 ignored ", "4@20 checked parse", "5@24 shown "}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("verdicts:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, c := range rep.Checks {
		if c.Kind == "transcript" {
			t.Errorf("a console block that is not a transcript was run: %s", c.Subject)
		}
	}
}

// TestStrictConsole checks the two ways to ask for a transcript: the
// book's [bookgen] strict-console, under which every console block not
// marked ignore is one and those bookgen cannot run are errors at their
// lines, and a block's own "transcript" attribute.
func TestStrictConsole(t *testing.T) {
	root := fixture(t, consoleChapter, map[string]string{"book/book.toml": "[book]\ntitle = \"Fixture\"\n\n[bookgen]\nstrict-console = true\n"})
	_, err := verifyRoot(t, root, Options{CacheDir: t.TempDir()})
	var got []string
	for _, e := range only(t, err) {
		got = append(got, fmt.Sprintf("%s:%d", e.File, e.Line))
	}
	// cargo (4), text before the first command (9), the shell session's
	// unknown attribute (12); the ignored block stays ignored.
	if want := "book/ch.md:4 book/ch.md:9 book/ch.md:12"; strings.Join(got, " ") != want {
		t.Errorf("strict-console errors at %s, want %s\n%v", strings.Join(got, " "), want, err)
	}

	root = fixture(t, strings.Replace(consoleChapter, "```console\n$ cargo run", "```console transcript\n$ cargo run", 1), nil)
	_, err = verifyRoot(t, root, Options{CacheDir: t.TempDir()})
	errs := only(t, err)
	if len(errs) != 1 || errs[0].Line != 4 || !strings.Contains(errs[0].Msg, `only "go run ..." and "go test ..."`) {
		t.Errorf("console transcript with cargo: %v, want one error at book/ch.md:4", err)
	}
}
