package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ownership-book/ownership/internal/book"
)

// fieldTerms are the words of the field the book gives a meaning to. Each
// is introduced where it first appears in emphasis (*term* or **term**),
// and no chapter uses it before that, in SUMMARY.md's reading order. The
// introduction is a map of the whole book and may name what later
// chapters introduce; so may the text of a link, which sends the reader
// to where the term is explained.
var fieldTerms = []string{
	"quorum", "leader read", "lock-delay", "sequencer", "privilege",
	"incarnation", "fencing token", "producer id",
}

// termUse is one place a term appears in prose: its chapter, its line,
// whether it is emphasized there (a definition), the paragraph and the
// section (counted from the top of the chapter) it is in, and whether it is
// in a heading.
type termUse struct {
	file    string
	line    int
	defines bool
	para    int
	section int
	heading bool
}

var (
	fenceLine  = regexp.MustCompile("^\\s*(```|~~~)")
	inlineCode = regexp.MustCompile("`[^`]*`")
	// A link's text and target: the text may name a later chapter's term,
	// because the link says where it is explained.
	linkSpan    = regexp.MustCompile(`\[[^\]]*\]\([^)]*\)`)
	htmlComment = regexp.MustCompile(`<!--.*?-->`)
)

// proseLines returns a chapter's lines with fenced blocks, inline code,
// links and comments blanked, so that only running text is searched; line
// numbers are kept.
func proseLines(text string) []string {
	lines := strings.Split(text, "\n")
	in := false
	for i, l := range lines {
		if fenceLine.MatchString(l) {
			in = !in
			lines[i] = ""
			continue
		}
		if in {
			lines[i] = ""
			continue
		}
		l = inlineCode.ReplaceAllString(l, "")
		l = linkSpan.ReplaceAllString(l, "")
		lines[i] = htmlComment.ReplaceAllString(l, "")
	}
	return lines
}

// termPattern matches the term (or its plural), case-insensitively, at word
// boundaries, with any white space between its words; group 1 is an
// emphasis marker right before it that closes right after it.
func termPattern(term string) *regexp.Regexp {
	words := strings.Fields(regexp.QuoteMeta(term))
	body := strings.Join(words, `\s+`) + `s?`
	return regexp.MustCompile(`(?i)(\*\*?)?\b` + body + `\b`)
}

// usesBeforeDefinition returns, for every term, the uses that come before
// its first definition in reading order (order: chapter files; text: their
// Markdown; skip: the chapters that may name any term), and the terms that
// are defined nowhere. A use on the definition's own line, or in the
// definition's paragraph, is not early.
func usesBeforeDefinition(order []string, text map[string]string, skip map[string]bool, terms []string) (early []string, undefined []string) {
	for _, term := range terms {
		re := termPattern(term)
		var uses []termUse
		for _, name := range order {
			if skip[name] {
				continue
			}
			lines := proseLines(text[name])
			// Paragraphs: join lines so that a term broken over two lines
			// is found, and remember where each line starts. A heading
			// is a paragraph of its own and starts a section.
			para, starts, first := "", []int{}, 0
			paras, section, heading := 0, 0, false
			flush := func() {
				for _, m := range re.FindAllStringSubmatchIndex(para, -1) {
					line := first
					for j, s := range starts {
						if s <= m[0] {
							line = first + j
						}
					}
					defines := m[2] >= 0 && strings.HasPrefix(para[m[1]:], para[m[2]:m[3]])
					uses = append(uses, termUse{file: name, line: line + 1, defines: defines,
						para: paras, section: section, heading: heading})
				}
				if para != "" {
					paras++
				}
				para, starts, heading = "", starts[:0], false
			}
			for i, l := range lines {
				isHeading := strings.HasPrefix(l, "#")
				if strings.TrimSpace(l) == "" || isHeading {
					flush()
				}
				if strings.TrimSpace(l) == "" {
					continue
				}
				if isHeading {
					section++
					heading = true
				}
				if para == "" {
					first = i
				}
				starts = append(starts, len(para))
				para += l + " "
				if isHeading {
					flush()
				}
			}
			flush()
		}
		def := -1
		for i, u := range uses {
			if u.defines {
				def = i
				break
			}
		}
		if def < 0 {
			undefined = append(undefined, term)
			continue
		}
		d := uses[def]
		for _, u := range uses[:def] {
			if u.file == d.file && (u.para == d.para || u.heading && u.section == d.section) {
				continue // the definition's own paragraph, or its section's heading
			}
			early = append(early, fmt.Sprintf("book/%s:%d: %q is used before the book introduces it at book/%s:%d", u.file, u.line, term, d.file, d.line))
		}
	}
	return early, undefined
}

// TestTermsIntroducedBeforeUse: no chapter uses one of the field's terms
// before the chapter (and the place) that introduces it, in SUMMARY.md's
// reading order, so a reader reading in order never meets a term that is
// explained only later.
func TestTermsIntroducedBeforeUse(t *testing.T) {
	root := ".."
	summary, err := os.ReadFile(filepath.Join(root, "book", "SUMMARY.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, items, err := book.ParseSummary(summary)
	if err != nil {
		t.Fatal(err)
	}
	order := readingOrder(items)
	text := map[string]string{}
	for _, name := range order {
		b, err := os.ReadFile(filepath.Join(root, "book", name))
		if err != nil {
			t.Fatal(err)
		}
		text[name] = string(b)
	}
	early, undefined := usesBeforeDefinition(order, text, map[string]bool{"introduction.md": true}, fieldTerms)
	for _, e := range early {
		t.Error(e)
	}
	for _, term := range undefined {
		t.Errorf("%q is never introduced: no chapter puts it in emphasis (*%s*)", term, term)
	}
}

// TestTermsCheckCanFail is the negative control: a term used a chapter
// before the one that introduces it is reported at its line, a term broken
// over two lines is found, link text and code are not uses, and a term
// never emphasized is reported as undefined.
func TestTermsCheckCanFail(t *testing.T) {
	order := []string{"a.md", "b.md"}
	text := map[string]string{
		"a.md": "# A\n\nSee [the quorum](b.md) and `quorum`.\n\nA leader\nread is cheap.\n",
		"b.md": "# B\n\nA *quorum* is a majority.\n\n## Leader reads\n\nA *leader read* confirms first.\n",
	}
	early, undefined := usesBeforeDefinition(order, text, nil, []string{"quorum", "leader read", "lease"})
	want := []string{
		`book/a.md:5: "leader read" is used before the book introduces it at book/b.md:7`,
	}
	if strings.Join(early, "\n") != strings.Join(want, "\n") {
		t.Errorf("early uses:\n%s\nwant:\n%s", strings.Join(early, "\n"), strings.Join(want, "\n"))
	}
	if len(undefined) != 1 || undefined[0] != "lease" {
		t.Errorf("undefined = %v, want [lease]", undefined)
	}
}
