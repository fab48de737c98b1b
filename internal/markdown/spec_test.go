package markdown

import (
	"strings"
	"testing"

	"github.com/ownership-book/ownership/internal/spectest"
)

// TestBlocksSpec runs testdata/blocks, one rule of where a fenced code
// block is (and is not) per case: the chapter book/ch.md and the blocks
// FindBlocks must return, one "LINE INFO | CONTENT LINE | ..." line each
// in order. render's TestEmittedBlocksAreIndexed renders the same cases
// and checks that the page writes exactly these blocks.
func TestBlocksSpec(t *testing.T) {
	for _, c := range spectest.Load(t, "testdata/blocks") {
		t.Run(c.Name, func(t *testing.T) {
			got := summarize(FindBlocks([]byte(c.File(t, "book/ch.md"))))
			if want := c.File(t, "blocks"); got != want {
				t.Errorf("%s\nFindBlocks:\n%s\nwant:\n%s", c.Comment, got, want)
			}
		})
	}
}

// summarize writes blocks as the "blocks" section of a case.
func summarize(blocks []Block) string {
	var b strings.Builder
	for _, blk := range blocks {
		b.WriteString(strings.TrimSpace(itoa(blk.Line) + " " + blk.Info))
		for _, l := range blk.Lines {
			b.WriteString(" | " + l)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func itoa(n int) string {
	var d []byte
	if n == 0 {
		return "0"
	}
	for ; n > 0; n /= 10 {
		d = append([]byte{byte('0' + n%10)}, d...)
	}
	return string(d)
}
