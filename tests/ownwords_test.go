package tests

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// The book is written in its own words. The notes it grew from (a directory
// outside the repository, found by $OWNWORDS_SEEDS or as shared/seeds in a
// parent directory) give facts, never sentences. The repository holds no
// wording of theirs: only tests/testdata/ownwords/seed-ngrams.txt, the sorted
// 16-hex-digit sha256 prefixes of every word 4-gram of the notes. Against it
// the chapters' prose is checked for
//
//   - a run of ownRunWords or more consecutive words covered by consecutive
//     shared 4-grams, and
//   - a sentence of ownSentenceWords or more words of which at least
//     ownSentenceShare are covered by shared 4-grams (a close paraphrase
//     that changes a word every few words).
//
// With the notes present the hash file must be current (go test -run
// OwnWords ./tests -args -update rewrites it); without them (CI) the hash file
// alone is used and nothing is skipped.

var updateOwnWords = flag.Bool("update", false, "rewrite tests/testdata/ownwords/seed-ngrams.txt from the notes")

const (
	ownN             = 4
	ownRunWords      = 6
	ownSentenceWords = 8
	ownSentenceShare = 0.45
	ownHashFile      = "testdata/ownwords/seed-ngrams.txt"
)

// ownAllow are hashed 4-grams that are phrases of the field rather than of
// the notes: a chapter may use them freely, and they count as not shared.
// Each has a reason; the phrase itself is in the comment only where it is
// the field's term (a term, not a sentence, of the notes).
var ownAllow = map[string]string{}

// ownToken is one word of prose with the line it is on.
type ownToken struct {
	word string
	line int
}

// ownHash is the hash the hash file holds for a 4-gram.
func ownHash(words []string) string {
	s := sha256.Sum256([]byte(strings.Join(words, " ")))
	return hex.EncodeToString(s[:8])
}

// ownWords splits s into lowercased runs of letters and digits.
func ownWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

var (
	ownInlineCode = regexp.MustCompile("`[^`]*`")
	ownLinkTarget = regexp.MustCompile(`\]\([^)]*\)`)
	ownRefDef     = regexp.MustCompile(`^\s*\[[^\]]+\]:\s`)
	ownHTMLTag    = regexp.MustCompile(`<[^>]*>`)
	ownURL        = regexp.MustCompile(`https?://\S+`)
	ownSentEnd    = regexp.MustCompile(`[.!?;:]+(\s|$)`)
)

// ownBlocks returns a chapter's prose as blocks (paragraphs, headings, list
// items, table cells) of sentences of tokens. Fenced code, {{# directive
// lines, link definitions, link targets, HTML tags, URLs and inline code are
// not prose.
func ownBlocks(text string) [][][]ownToken {
	var blocks [][][]ownToken
	var cur [][]ownToken
	var sent []ownToken
	endSentence := func() {
		if len(sent) > 0 {
			cur = append(cur, sent)
			sent = nil
		}
	}
	endBlock := func() {
		endSentence()
		if len(cur) > 0 {
			blocks = append(blocks, cur)
			cur = nil
		}
	}
	add := func(s string, line int) {
		for len(s) > 0 {
			loc := ownSentEnd.FindStringIndex(s)
			part := s
			if loc != nil {
				part = s[:loc[0]]
			}
			for _, w := range ownWords(part) {
				sent = append(sent, ownToken{w, line})
			}
			if loc == nil {
				return
			}
			endSentence()
			s = s[loc[1]:]
		}
	}
	fence := ""
	for i, line := range strings.Split(text, "\n") {
		n := i + 1
		trim := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trim, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~") {
			endBlock()
			fence = trim[:3]
			continue
		}
		if trim == "" || strings.HasPrefix(trim, "{{#") || ownRefDef.MatchString(line) {
			endBlock()
			continue
		}
		line = ownInlineCode.ReplaceAllString(line, " ")
		line = ownLinkTarget.ReplaceAllString(line, "] ")
		line = ownHTMLTag.ReplaceAllString(line, " ")
		line = ownURL.ReplaceAllString(line, " ")
		switch {
		case strings.HasPrefix(trim, "#"):
			endBlock()
			add(line, n)
			endBlock()
		case strings.HasPrefix(trim, "|"):
			endBlock()
			for _, cell := range strings.Split(line, "|") {
				add(cell, n)
				endBlock()
			}
		case strings.HasPrefix(trim, "- ") || strings.HasPrefix(trim, "* ") || regexp.MustCompile(`^\d+\.\s`).MatchString(trim):
			endBlock()
			add(line, n)
		default:
			add(line, n)
		}
	}
	endBlock()
	return blocks
}

// ownSeedGrams returns the hashes of every 4-gram of every .txt file in dir,
// sorted and without repeats. A file's words run on across its lines.
func ownSeedGrams(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no .txt notes in %s", dir)
	}
	set := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		w := ownWords(string(b))
		for i := 0; i+ownN <= len(w); i++ {
			set[ownHash(w[i:i+ownN])] = true
		}
	}
	out := make([]string, 0, len(set))
	for h := range set {
		out = append(out, h)
	}
	slices.Sort(out)
	return out, nil
}

const ownHashHeader = `# sha256 prefixes (16 hex digits) of every word 4-gram of the notes the book
# grew from: words are lowercased runs of letters and digits, joined by one
# space. No wording of the notes is kept. Regenerate with
#   OWNWORDS_SEEDS=/path/to/seeds go test -count=1 -run OwnWords ./tests -args -update
`

func ownReadHashes(path string) (map[string]bool, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	set := map[string]bool{}
	var list []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		set[l] = true
		list = append(list, l)
	}
	return set, list, sc.Err()
}

// ownSeedsDir is $OWNWORDS_SEEDS, or shared/seeds in the nearest parent
// directory that has one, or "" when the notes are not on this machine.
func ownSeedsDir() string {
	if d := os.Getenv("OWNWORDS_SEEDS"); d != "" {
		return d
	}
	dir, err := filepath.Abs(".")
	if err != nil {
		return ""
	}
	for {
		d := filepath.Join(dir, "shared", "seeds")
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return d
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// ownHits returns one "name:line: words" entry per flagged run or sentence
// of text, in line order, checked against the hash set seed.
func ownHits(name, text string, seed map[string]bool) []string {
	type hit struct {
		line int
		msg  string
	}
	var hits []hit
	shared := func(ws []ownToken, i int) bool {
		words := make([]string, ownN)
		for k := range ownN {
			words[k] = ws[i+k].word
		}
		h := ownHash(words)
		return seed[h] && ownAllow[h] == ""
	}
	join := func(ws []ownToken) string {
		s := make([]string, len(ws))
		for i, w := range ws {
			s[i] = w.word
		}
		return strings.Join(s, " ")
	}
	for _, block := range ownBlocks(text) {
		var all []ownToken
		var starts []int // index in all of each sentence's first token
		for _, s := range block {
			starts = append(starts, len(all))
			all = append(all, s...)
		}
		covered := make([]bool, len(all))
		isShared := make([]bool, len(all))
		for i := 0; i+ownN <= len(all); i++ {
			if shared(all, i) {
				isShared[i] = true
				for k := range ownN {
					covered[i+k] = true
				}
			}
		}
		// (a) runs: consecutive shared 4-grams covering ownRunWords words.
		for i := 0; i < len(all); {
			if !isShared[i] {
				i++
				continue
			}
			j := i
			for j+1 < len(all) && isShared[j+1] {
				j++
			}
			if j-i+ownN >= ownRunWords {
				hits = append(hits, hit{all[i].line, fmt.Sprintf("%s:%d: run of %d shared words: %q", name, all[i].line, j-i+ownN, join(all[i:j+ownN]))})
			}
			i = j + 1
		}
		// (b) sentences mostly made of shared 4-grams.
		for k, s := range block {
			if len(s) < ownSentenceWords {
				continue
			}
			c := 0
			for i := range s {
				if covered[starts[k]+i] {
					c++
				}
			}
			if share := float64(c) / float64(len(s)); share >= ownSentenceShare {
				hits = append(hits, hit{s[0].line, fmt.Sprintf("%s:%d: sentence %d%% shared (%d of %d words): %q", name, s[0].line, int(share*100), c, len(s), join(s))})
			}
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return a.line - b.line })
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.msg
	}
	return out
}

// The hash file is current with the notes when they are on this machine
// (and -update rewrites it); the chapters share no run of six words and no
// mostly-shared sentence with the notes.
func TestOwnWords(t *testing.T) {
	if dir := ownSeedsDir(); dir != "" {
		want, err := ownSeedGrams(dir)
		if err != nil {
			t.Fatalf("notes in %s: %v", dir, err)
		}
		if *updateOwnWords {
			if err := os.MkdirAll(filepath.Dir(ownHashFile), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(ownHashFile, []byte(ownHashHeader+strings.Join(want, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, have, err := ownReadHashes(ownHashFile)
		if err != nil {
			t.Fatalf("%s: %v (run with -update)", ownHashFile, err)
		}
		if !slices.Equal(have, want) {
			t.Fatalf("%s is not current with the notes in %s (%d hashes, want %d); run go test -run OwnWords ./tests -args -update", ownHashFile, dir, len(have), len(want))
		}
	}
	seed, list, err := ownReadHashes(ownHashFile)
	if err != nil {
		t.Fatalf("%s: %v", ownHashFile, err)
	}
	if len(list) < 1000 {
		t.Fatalf("%s holds %d hashes; the notes have well over 1000 4-grams", ownHashFile, len(list))
	}
	for h := range ownAllow {
		if !seed[h] {
			t.Errorf("allowlisted hash %s is not a 4-gram of the notes: remove it", h)
		}
	}
	files, err := filepath.Glob(filepath.Join("..", "book", "*.md"))
	if err != nil || len(files) < 5 {
		t.Fatalf("chapters: %v, %d files", err, len(files))
	}
	slices.Sort(files)
	var hits []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		hits = append(hits, ownHits(filepath.ToSlash(strings.TrimPrefix(f, ".."+string(filepath.Separator))), string(b), seed)...)
	}
	if len(hits) > 0 {
		t.Errorf("%d passages follow the notes' wording; write them in the book's own words:\n%s", len(hits), strings.Join(hits, "\n"))
	}
}

// Negative control: a sentence copied from the notes into a chapter is
// reported at its line, as a run and as a sentence; the same words in a
// code block, inline code or a link target are not; a sentence that swaps
// every fourth word is still caught by the share rule; fresh prose is not
// flagged. The notes here are synthetic so the control runs in CI too.
func TestOwnWordsCheckCanFail(t *testing.T) {
	notes := "The keeper of the ledger stamps every entry with the round it was granted in, and a clerk refuses entries stamped with an older round. A round only ever grows."
	seed := map[string]bool{}
	w := ownWords(notes)
	for i := 0; i+ownN <= len(w); i++ {
		seed[ownHash(w[i:i+ownN])] = true
	}
	copied := "Intro line that is ours.\n\nSo the keeper of the ledger stamps every entry with the\nround it was granted in.\n"
	hits := ownHits("x.md", copied, seed)
	if len(hits) != 2 || !strings.HasPrefix(hits[0], "x.md:3: run of ") || !strings.HasPrefix(hits[1], "x.md:3: sentence ") ||
		!strings.Contains(hits[0], "keeper of the ledger stamps every entry with the round it was granted in") {
		t.Errorf("copied sentence: %q, want a run and a sentence at x.md:3", hits)
	}
	// A paraphrase that changes every fourth word keeps no run of six but
	// most of its words are in shared 4-grams.
	para := "The keeper of the ledger marks every entry with the term it was granted in while a clerk refuses entries stamped by an older round.\n"
	hits = ownHits("p.md", para, seed)
	if len(hits) != 1 || !strings.HasPrefix(hits[0], "p.md:1: sentence ") {
		t.Errorf("paraphrase: %q, want it flagged as a sentence at p.md:1", hits)
	}
	hidden := "```\nthe keeper of the ledger stamps every entry with the round it was granted in\n```\n\nSee `the keeper of the ledger stamps every entry with the round` and [this](the-keeper-of-the-ledger-stamps-every-entry-with-the-round.md).\n\n{{#include the keeper of the ledger stamps every entry with the round}}\n"
	if hits := ownHits("h.md", hidden, seed); len(hits) != 0 {
		t.Errorf("code, inline code, link targets and directives flagged: %q", hits)
	}
	fresh := "Each write carries the number of the term its writer was elected in; a server drops writes from a term it has seen surpassed.\n"
	if hits := ownHits("f.md", fresh, seed); len(hits) != 0 {
		t.Errorf("fresh prose flagged: %q", hits)
	}
	// With the real notes on this machine, a sentence of theirs pasted into a
	// chapter is flagged against the committed hash file.
	if dir := ownSeedsDir(); dir != "" {
		real, _, err := ownReadHashes(ownHashFile)
		if err != nil {
			t.Fatal(err)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
		slices.Sort(files)
		if len(files) == 0 {
			t.Fatalf("no notes in %s", dir)
		}
		b, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		words := ownWords(string(b))
		mid := len(words) / 2
		pasted := "A line of ours.\n\n" + strings.Join(words[mid:mid+12], " ") + ".\n"
		if hits := ownHits("seed.md", pasted, real); len(hits) == 0 || !strings.HasPrefix(hits[0], "seed.md:3: ") {
			t.Errorf("twelve consecutive words of %s not flagged: %q", filepath.Base(files[0]), hits)
		}
	}
}
