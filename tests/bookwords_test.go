package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// makingWords are phrases that talk about how the book was made rather than
// about its subject: the notes it was written from, the issues and sessions
// of its authoring, the people who ran them. A chapter is in the book's own
// words and never mentions them (the project's rule for reader prose). The
// patterns are phrases, not bare words, because "seed" (of a random
// generator), "session" (Chubby's) and "issue" (a certificate, a token) are
// the subject's own terms and appear in the book rightly.
var makingWords = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\bthe seed'?s\b`),
	regexp.MustCompile(`(?i)\bseed (notes?|rules?|files?|texts?|documents?)\b`),
	regexp.MustCompile(`(?i)\b(the|this|that|an?) issue (that|which|who)\b`),
	regexp.MustCompile(`(?i)\b(this|the) issue'?s\b`),
	regexp.MustCompile(`(?i)\bissue #?\d+`),
	regexp.MustCompile(`(?i)\b(this|a|the|another|writing|authoring) session (of the project|that wrote|it was written in)\b`),
	regexp.MustCompile(`(?i)\b(in|during|by) (this|an earlier|a previous|another) session\b`),
	regexp.MustCompile(`(?i)\bnotes (it|the book|this book|this chapter) (was|were) written from\b`),
	regexp.MustCompile(`(?i)\bwritten from (the )?notes\b`),
	regexp.MustCompile(`(?i)\b(the|a|another) helper\b`),
	regexp.MustCompile(`(?i)\bthe (brief|lead)\b`),
}

// makingProblems returns, for text read from name, one "name:line: phrase"
// entry per match of makingWords, in line order.
func makingProblems(name, text string) []string {
	var out []string
	for i, line := range strings.Split(text, "\n") {
		for _, re := range makingWords {
			for _, m := range re.FindAllString(line, -1) {
				out = append(out, fmt.Sprintf("%s:%d: %q", name, i+1, m))
			}
		}
	}
	return out
}

// No chapter of the book mentions how the book was made. Every match in
// every chapter is reported at once, by file and line.
func TestBookHasNoMakingWords(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "book", "*.md"))
	if err != nil || len(files) < 5 {
		t.Fatalf("chapters: %v, %d files", err, len(files))
	}
	slices.Sort(files)
	var problems []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		problems = append(problems, makingProblems(filepath.ToSlash(strings.TrimPrefix(f, ".."+string(filepath.Separator))), string(b))...)
	}
	if len(problems) > 0 {
		t.Errorf("the book's prose mentions how it was made:\n%s", strings.Join(problems, "\n"))
	}
}

// Negative control: each phrase the check is for is found, at its line, and
// the subject's own uses of the same words are not.
func TestMakingWordsCheckCanFail(t *testing.T) {
	bad := []string{
		"the bound the issue that introduced it states",
		"The seed's assumption table already says so",
		"as the seed notes put it",
		"as this issue's title says",
		"fixed in issue #24",
		"the notes it was written from",
		"written from notes",
		"which another helper added",
		"as the brief says",
	}
	for _, s := range bad {
		if p := makingProblems("x.md", "ok line\n"+s); len(p) != 1 || !strings.HasPrefix(p[0], "x.md:2: ") {
			t.Errorf("%q: %v, want one problem at x.md:2", s, p)
		}
	}
	good := []string{
		"client 1's session expired: lock free",
		"Zombie-writer sweep: seed 1, 2000 trials per row",
		"The seed fixes every draw",
		"a different seed different ones",
		"it may issue its own peer and server certificates",
		"a session of its own, for it",
		"the leader's lease",
	}
	for _, s := range good {
		if p := makingProblems("x.md", s); len(p) != 0 {
			t.Errorf("%q flagged: %v", s, p)
		}
	}
}
