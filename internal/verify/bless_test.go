package verify

import (
	"strings"
	"testing"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/expand"
	"github.com/ownership-book/ownership/internal/markdown"
)

func TestBlessForRefusesScatteredTranscripts(t *testing.T) {
	d := &expand.Doc{Chapter: &book.Item{Path: "ch.md"}, Origins: []expand.Origin{
		{File: "book/ch.md", Line: 1}, {File: "book/ch.md", Line: 2}, {File: "book/out.txt", Line: 1},
	}}
	blk := markdown.Block{Lines: []string{"$ go run ./a", "old"}, LineNos: []int{2, 3}, Prefixes: []string{"", ""}}
	cmds, _ := markdown.ParseTranscript(blk.Lines)
	if _, err := blessFor(d, blk, cmds[0], []string{"new"}); err == nil || !strings.Contains(err.Error(), "book/out.txt:1") {
		t.Errorf("err = %v, want a refusal naming book/out.txt:1", err)
	}
	d.Origins[2] = expand.Origin{File: "book/ch.md", Line: 3}
	if _, err := blessFor(d, blk, cmds[0], []string{"$ go run ./b"}); err == nil {
		t.Error("an output line reading as a command was blessed")
	}
	e, err := blessFor(d, blk, cmds[0], []string{"new", ""})
	if err != nil || e.File != "book/ch.md" || e.From != 3 || e.To != 3 || strings.Join(e.Lines, "|") != "new|" {
		t.Errorf("edit = %+v, %v", e, err)
	}
}

// TestVerifyWritesNoChapter checks that Verify with Bless decides the
// edits and writes none: the chapter is as it was, and the report holds
// the edit that bless.Apply would make.
func TestVerifyWritesNoChapter(t *testing.T) {
	chapter := "```console\n$ go run ./examples/greet/hello\nold\n```\n"
	root := fixture(t, chapter, nil)
	b, err := book.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := expand.All(b)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Verify(t.Context(), b, docs, Options{Bless: true, CacheDir: sharedCache})
	if err != nil {
		t.Fatalf("Verify with Bless: %v", err)
	}
	if got := readFile(t, root, "book/ch.md"); got != chapter {
		t.Errorf("Verify rewrote the chapter: %q", got)
	}
	if len(rep.Edits) != 1 || rep.Edits[0].File != "book/ch.md" || rep.Edits[0].From != 3 || rep.Edits[0].To != 3 || len(rep.Edits[0].Lines) != 4 {
		t.Errorf("edits = %+v, want one replacing book/ch.md:3 with 4 lines", rep.Edits)
	}
}
