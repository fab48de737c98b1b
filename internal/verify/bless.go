package verify

import (
	"fmt"
	"strings"

	"github.com/ownership-book/ownership/internal/bless"
	"github.com/ownership-book/ownership/internal/expand"
	"github.com/ownership-book/ownership/internal/markdown"
)

// blessFor builds the edit that makes c's expected output read actual. The
// command line and its expected lines must be consecutive lines of one file
// (they are, unless the transcript is assembled from several includes).
func blessFor(d *expand.Doc, blk markdown.Block, c markdown.Command, actual []string) (bless.Edit, error) {
	cmd := d.Origin(blk.LineNos[c.Line])
	for k := range c.Expected {
		o := d.Origin(blk.LineNos[c.Line+1+k])
		if o.File != cmd.File || o.Line != cmd.Line+1+k {
			return bless.Edit{}, fmt.Errorf("cannot bless: its expected output is not on the lines after it in %s (line %d comes from %s:%d)", cmd.File, k+1, o.File, o.Line)
		}
	}
	for _, a := range actual {
		t := strings.TrimLeft(a, " ")
		if strings.HasPrefix(a, "$ ") || a == "$" || strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			return bless.Edit{}, fmt.Errorf("cannot bless: output line %q would read as a command or a fence", a)
		}
	}
	return bless.Edit{File: cmd.File, From: cmd.Line + 1, To: cmd.Line + len(c.Expected), Lines: actual, Command: c.Text}, nil
}
