package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ownership-book/ownership/internal/book"
)

// endingLines is how many lines at the end of a chapter count as its ending.
const endingLines = 15

// mdLink is an inline link to a .md file, with an optional fragment and
// title.
var mdLink = regexp.MustCompile(`\]\(([^)#\s]+\.md)(#[^)\s]*)?(\s+"[^"]*")?\)`)

// readingOrder returns the chapter files of a parsed SUMMARY.md in reading
// order (each chapter before the chapters nested under it), drafts left out.
func readingOrder(items []*book.Item) []string {
	var order []string
	for _, it := range items {
		if !it.Draft && it.Path != "" {
			order = append(order, it.Path)
		}
		order = append(order, readingOrder(it.Children)...)
	}
	return order
}

// chaptersWithoutNext returns, in SUMMARY.md's order, every chapter but the
// last whose last endingLines lines link to no chapter that comes after it:
// a chapter that does not say where the book goes next. order holds the
// chapters' file names as SUMMARY.md lists them; text maps a name to its
// Markdown.
func chaptersWithoutNext(order []string, text map[string]string) []string {
	var missing []string
	for i, name := range order[:max(len(order)-1, 0)] {
		lines := strings.Split(strings.TrimRight(text[name], "\n"), "\n")
		tail := strings.Join(lines[max(len(lines)-endingLines, 0):], "\n")
		linked := map[string]bool{}
		for _, m := range mdLink.FindAllStringSubmatch(tail, -1) {
			linked[filepath.Clean(m[1])] = true
		}
		found := false
		for _, later := range order[i+1:] {
			if linked[later] {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, name)
		}
	}
	return missing
}

// TestChaptersSayWhereNext: every chapter of the book but the last ends by
// linking to a chapter that follows it in SUMMARY.md, so a reader at the end
// of any page knows where the book goes next.
func TestChaptersSayWhereNext(t *testing.T) {
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
	if len(order) < 2 {
		t.Fatalf("SUMMARY.md lists %d chapters", len(order))
	}
	for _, name := range chaptersWithoutNext(order, text) {
		t.Errorf("book/%s: its last %d lines link to no later chapter of SUMMARY.md", name, endingLines)
	}
}

// TestWhereNextCheckCanFail is the negative control: a chapter whose ending
// links only backwards is reported, and the last chapter never is.
func TestWhereNextCheckCanFail(t *testing.T) {
	order := []string{"a.md", "b.md", "c.md"}
	text := map[string]string{
		"a.md": "# A\n\nOn to [B](b.md#top \"the next one\").\n",
		"b.md": "# B\n\nBack to [A](a.md).\n",
		"c.md": "# C\n\nThe end.\n",
	}
	got := chaptersWithoutNext(order, text)
	if len(got) != 1 || got[0] != "b.md" {
		t.Fatalf("chaptersWithoutNext = %v, want [b.md]", got)
	}
}
