package verify

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/expand"
	"github.com/ownership-book/ownership/internal/markdown"
)

// Figure blocks: ```d2 and ```goat hold a diagram's source, drawn by the
// render stage. A d2 block may say where its source comes from:
//
//	```d2 run="go run ./examples/stream/takeover -figure"
//
// Its body must then be exactly what that command prints (no "..." or
// "[..]" wildcards: the drawing is the output), checked as a console
// transcript's command is (same runner, timeout, cache; bless rewrites the
// body), so a sequence diagram shows what the program really did.

// figureAttrs are the info-string attributes of figure blocks.
var figureAttrs = map[string]map[string]bool{
	"d2":   {"run": true, "timeout": true, "caption": true},
	"goat": {"caption": true},
}

// checkFigureAttrs refuses an attribute of a figure block that bookgen does
// not know, and timeout= without run=.
func checkFigureAttrs(d *expand.Doc, blk markdown.Block) *diag.Error {
	known := figureAttrs[blk.Lang]
	var unknown []string
	for k := range blk.Attrs {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		names := make([]string, 0, len(known))
		for k := range known {
			names = append(names, k+"=")
		}
		sort.Strings(names)
		return errAt(d, blk.Line, "```%s block: unknown attribute %s (bookgen knows %s)", blk.Lang, strings.Join(unknown, ", "), strings.Join(names, ", "))
	}
	if _, ok := blk.Attrs["timeout"]; ok {
		if _, run := blk.Attrs["run"]; !run {
			return errAt(d, blk.Line, "```%s block: timeout= without run= (only a figure drawn from a program's output runs anything)", blk.Lang)
		}
	}
	return nil
}

// figureJob checks a d2 block with run=: the command's output must equal
// the block's body.
func (v *verifier) figureJob(d *expand.Doc, blk markdown.Block) (job, *diag.Error) {
	run := strings.TrimSpace(blk.Attrs["run"])
	if run == "" {
		return nil, errAt(d, blk.Line, "```%s block: run= names no command (run=\"go run ./examples/x/prog\")", blk.Lang)
	}
	words, err := markdown.SplitCommand(run)
	if err != nil {
		return nil, errAt(d, blk.Line, "```%s block: run=%q: %v", blk.Lang, run, err)
	}
	if len(words) < 2 || words[0] != "go" || (words[1] != "run" && words[1] != "test") {
		return nil, errAt(d, blk.Line, "```%s block: run=%q: only \"go run ...\" and \"go test ...\" commands can be verified", blk.Lang, run)
	}
	if err := v.needModule(d, blk.Line, fmt.Sprintf("```%s block: run=%q runs", blk.Lang, run)); err != nil {
		return nil, err
	}
	for i, l := range blk.Lines {
		if strings.TrimSpace(l) == markdown.AnyLines || strings.Contains(l, markdown.AnyText) {
			return nil, errAt(d, blk.LineNos[i], "```%s block with run=: %q is a transcript wildcard; a figure drawn from a program is its exact output (run bookgen test --bless to take it)", blk.Lang, strings.TrimSpace(l))
		}
	}
	timeout := v.timeout
	if t, ok := blk.Attrs["timeout"]; ok {
		dur, err := time.ParseDuration(t)
		if err != nil || dur <= 0 {
			return nil, errAt(d, blk.Line, "```%s block: timeout=%q is not a positive Go duration such as 120s", blk.Lang, t)
		}
		timeout = dur
	}
	// The block reads as a transcript whose "$ " line is the opening
	// fence: a failing command is reported there, a differing line at its
	// own line, and bless rewrites the lines after the fence.
	tb := blk
	tb.Lines = append([]string{"$ " + run}, blk.Lines...)
	tb.LineNos = append([]int{blk.Line}, blk.LineNos...)
	tb.Prefixes = append([]string{""}, blk.Prefixes...)
	c := markdown.Command{Line: 0, Text: run, Expected: markdown.TrimTrailingBlank(append([]string{}, blk.Lines...))}
	return func(ctx context.Context) jobResult {
		var r jobResult
		v.runCommand(ctx, d, tb, c, words, timeout, &r)
		return r
	}, nil
}

// isFigureRun reports whether a block is a figure block whose body bookgen
// checks against a program's output.
func isFigureRun(blk markdown.Block) bool {
	_, ok := blk.Attrs["run"]
	return blk.Lang == "d2" && ok
}

// blockNoun names what a block's expected output is, for messages.
func blockNoun(blk markdown.Block) string {
	if _, ok := figureAttrs[blk.Lang]; ok {
		return "figure"
	}
	return "transcript"
}
