package verify

import "github.com/ownership-book/ownership/internal/markdown"

// Verdict is what verification concluded about one fenced code block.
type Verdict string

const (
	// Checked: the block was compiled, parsed, run or compared (Check
	// says which) and, when the verification passed, was found true.
	Checked Verdict = "checked"
	// Ignored: the author marked the block "ignore"; the page says so.
	Ignored Verdict = "ignored"
	// Shown: a block bookgen does not check (text, rust, a drawing, a
	// console block that is not a transcript, see IsTranscript), shown as
	// it is.
	Shown Verdict = "shown"
)

// BlockVerdict is the verdict on one fenced code block of a chapter,
// keyed by the block's identity: the chapter and the block's position in
// markdown.FindBlocks of the chapter's expanded Markdown (the one index of
// a chapter's blocks every stage reads). render refuses to write a go,
// console or figure block that has none (see render.Renderer.SetVerdicts).
type BlockVerdict struct {
	Chapter string // book-relative path of the chapter ("ownership.md")
	Index   int    // 0-based position among the chapter's fenced blocks
	Line    int    // 1-based Markdown line of the opening fence (expanded)
	Info    string // the info string as written, to catch a disagreement
	Verdict Verdict
	// Check is the kind of check of a Checked block: "transcript",
	// "compile", "parse" or "figure".
	Check string
}

func verdictOf(chapter string, i int, blk markdown.Block, v Verdict, check string) BlockVerdict {
	return BlockVerdict{Chapter: chapter, Index: i, Line: blk.Line, Info: blk.Info, Verdict: v, Check: check}
}
