// Package markdown is what a chapter is made of, known in one place below
// the stages (DESIGN.md, "One chapter grammar, one conductor"): the one
// goldmark configuration every stage parses a chapter with (CommonMark,
// GitHub's extensions, footnotes, typographic quotes and mdBook's
// Markdown: definition lists, heading attributes, admonitions), the index
// of its fenced code blocks with their info strings (FindBlocks,
// ParseInfo), the transcript grammar and matcher of console blocks
// (ParseTranscript, Compare, StripANSI), the grammar of their command
// lines (SplitCommand, RunArgs) and the grammar of claim links
// (ClaimLinks, ClaimTarget).
//
// verify, render and expand use it and nothing else to read a chapter's
// structure, so that what is checked and what is shown are the same
// blocks: a block that one stage saw and another did not is how a page
// once showed a transcript nobody ran. mdBook keeps one Markdown crate
// (pulldown-cmark) for the same reason.
package markdown

import (
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// New returns the goldmark Markdown every stage parses chapters with:
// goldmark's parser with CommonMark's HTML block rule for <meta>
// (mdbook.go), GFM (autolinks, tables with alignment as an align attribute,
// which the site's Content-Security-Policy allows where style= is blocked,
// strikethrough, task lists), footnotes, typographic quotes, mdBook's
// Markdown and automatic heading ids. opts are applied after these: a
// renderer adds its node renderers and options, never parser ones, or the
// stages would disagree on a chapter's blocks again.
func New(opts ...goldmark.Option) goldmark.Markdown {
	return NewFeatures(Features{}, opts...)
}

// Features are the parts of mdBook's Markdown a book can turn off, as
// mdBook 0.5's [output.html] smart-punctuation, definition-lists and
// admonitions = false do (mdbook-core's HtmlConfig; mdbook-markdown's
// MarkdownOptions). The zero value is mdBook's default: all on.
type Features struct {
	// NoSmartPunctuation leaves quotes, "--", "---" and "..." as
	// written (pulldown-cmark's ENABLE_SMART_PUNCTUATION off).
	NoSmartPunctuation bool
	// NoDefinitionLists reads "term\n: definition" as a paragraph
	// (ENABLE_DEFINITION_LIST off).
	NoDefinitionLists bool
	// NoAdmonitions leaves "> [!NOTE]" a block quote with its marker
	// as text (ENABLE_GFM off).
	NoAdmonitions bool
}

// NewFeatures is New for a book that turns some of mdBook's Markdown off.
func NewFeatures(f Features, opts ...goldmark.Option) goldmark.Markdown {
	exts := []goldmark.Extender{
		extension.Linkify,
		extension.NewTable(extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute)),
		extension.Strikethrough,
		taskList{},
		extension.Footnote,
	}
	if !f.NoSmartPunctuation {
		exts = append(exts, extension.Typographer)
	}
	exts = append(exts, mdBook{f})
	all := []goldmark.Option{
		goldmark.WithParser(newParser()),
		goldmark.WithExtensions(exts...),
		goldmark.WithParserOptions(parser.WithAutoHeadingID()),
	}
	return goldmark.New(append(all, opts...)...)
}

// Parse parses a chapter's Markdown with New's parser and returns the
// document. Options (an id table, for instance) are passed to goldmark.
func Parse(src []byte, opts ...parser.ParseOption) ast.Node {
	return New().Parser().Parse(text.NewReader(src), opts...)
}
