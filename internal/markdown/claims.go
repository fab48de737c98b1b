package markdown

// The grammar of claim links: a Markdown link from a chapter to the Go
// test that checks a claim,
//
//	[TestAtMostOneUsing](../examples/raymond/raymond_test.go#TestAtMostOneUsing)
//
// names a check when its target is a _test.go file under examples/
// (relative to the chapter) and its fragment is the function's name. This
// file finds such links and the claim each states; verify resolves and
// runs the checks, render marks the links.

import (
	"fmt"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	gast "github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
)

// ClaimTarget reports whether dest, a link destination written in the
// chapter file chFile (repository-relative: Item.File, "book/ch.md"), names a check: a _test.go file
// under examples/ with a fragment. It returns the repository-relative file
// and the fragment. A fragment that is a line reference (#L12, #L12-L20)
// is a link to lines, not a claim.
func ClaimTarget(chFile, dest string) (file, fn string, ok bool) {
	u, err := url.Parse(dest)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Path == "" || u.Fragment == "" || strings.HasPrefix(dest, "/") {
		return "", "", false
	}
	if !strings.HasSuffix(u.Path, "_test.go") {
		return "", "", false
	}
	p := path.Join(path.Dir(chFile), u.Path)
	if !strings.HasPrefix(p, "examples/") {
		return "", "", false
	}
	if lineRef.MatchString(u.Fragment) {
		return "", "", false
	}
	return p, u.Fragment, true
}

var lineRef = regexp.MustCompile(`^L\d+(-L\d+)?$`)

// ClaimID returns the id of the n-th (1-based) link to fn on one page.
func ClaimID(fn string, n int) string {
	if n <= 1 {
		return "check-" + fn
	}
	return fmt.Sprintf("check-%s-%d", fn, n)
}

// ClaimLink is a link of a chapter's Markdown that names a check
// (ClaimTarget), as the Markdown alone tells it: what verify learns from
// parsing, before it looks at the Go files.
type ClaimLink struct {
	Dest       string // the link's destination as written
	File, Func string // ClaimTarget's answer
	Line       int    // 1-based Markdown line (linkLine)
	InHeading  bool
	Text       string // claimText, "" in a heading
	// Mutants are the mutant links after it in its block (mutants.go).
	Mutants []MutantLink
	// Orphan is set, and the other fields but Dest and Line are empty,
	// for a mutant link that follows no claim link in its block.
	Orphan *MutantLink
}

// ClaimLinks parses src, the Markdown of the chapter file chFile
// (repository-relative), with the book's parser (Parse) and returns its
// claim links in document order, each with the mutant links after it in
// its block, and a ClaimLink with Orphan set for each mutant link that
// follows none: the same links, in the same order, that render sees. The
// result depends on chFile and src only.
func ClaimLinks(chFile string, src []byte) []ClaimLink {
	doc := Parse(src)
	lines := lineStarts(src)
	var out []ClaimLink
	var lastBlock gast.Node // the block of the last claim link (mutantBlock)
	_ = gast.Walk(doc, func(n gast.Node, entering bool) (gast.WalkStatus, error) {
		if !entering {
			return gast.WalkContinue, nil
		}
		l, ok := n.(*gast.Link)
		if !ok {
			return gast.WalkContinue, nil
		}
		if dir, _, _, ok := MutantTarget(chFile, string(l.Destination)); ok {
			out = attachMutant(out, lastBlock, l, dir, src, lines)
			return gast.WalkSkipChildren, nil
		}
		file, fn, ok := ClaimTarget(chFile, string(l.Destination))
		if !ok {
			return gast.WalkContinue, nil
		}
		cl := ClaimLink{Dest: string(l.Destination), File: file, Func: fn, Line: linkLine(l, src, lines)}
		for p := l.Parent(); p != nil; p = p.Parent() {
			if _, ok := p.(*gast.Heading); ok {
				cl.InHeading = true
				break
			}
		}
		if !cl.InHeading {
			cl.Text = claimText(l, src)
		}
		out = append(out, cl)
		lastBlock = mutantBlock(l)
		return gast.WalkSkipChildren, nil
	})
	return out
}

// linkLine returns the 1-based Markdown line of link l: that of its first
// text, else that of its block.
func linkLine(l *gast.Link, src []byte, lines []int) int {
	off := -1
	_ = gast.Walk(l, func(n gast.Node, entering bool) (gast.WalkStatus, error) {
		if t, ok := n.(*gast.Text); ok && entering && off < 0 {
			off = t.Segment.Start
			return gast.WalkStop, nil
		}
		return gast.WalkContinue, nil
	})
	if off < 0 {
		for p := gast.Node(l); p != nil; p = p.Parent() {
			if p.Type() == gast.TypeBlock && p.Lines() != nil && p.Lines().Len() > 0 {
				off = p.Lines().At(0).Start
				break
			}
		}
	}
	if off < 0 {
		return 0
	}
	return sort.Search(len(lines), func(i int) bool { return lines[i] > off })
}

func lineStarts(src []byte) []int {
	idx := []int{0}
	for i, c := range src {
		if c == '\n' {
			idx = append(idx, i+1)
		}
	}
	return idx
}

// claimText is the link's title, or the sentence of its block that holds
// it, or (in a table) the row's first cell when the link sits in another.
func claimText(l *gast.Link, src []byte) string {
	if t := strings.TrimSpace(string(l.Title)); t != "" {
		return collapse(t)
	}
	var blk gast.Node
	for p := l.Parent(); p != nil; p = p.Parent() {
		if p.Type() == gast.TypeBlock {
			blk = p
			break
		}
	}
	if blk == nil {
		return collapse(inlineText(l, src))
	}
	if cell, ok := blk.(*east.TableCell); ok {
		if first := cell.Parent().FirstChild(); first != nil && first != gast.Node(cell) {
			if t := collapse(inlineText(first, src)); t != "" {
				return t
			}
		}
	}
	// The block's text with the link marked, cut at sentence ends.
	const mark = "\x00"
	var b strings.Builder
	_ = gast.Walk(blk, func(n gast.Node, entering bool) (gast.WalkStatus, error) {
		if n == gast.Node(l) && entering {
			b.WriteString(mark)
		}
		if !entering {
			return gast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *gast.Text:
			b.Write(n.Segment.Value(src))
			if n.SoftLineBreak() || n.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *gast.String:
			b.Write(n.Value)
		case *gast.CodeSpan:
			for c := n.FirstChild(); c != nil; c = c.NextSibling() {
				if t, ok := c.(*gast.Text); ok {
					b.Write(t.Segment.Value(src))
				}
			}
			return gast.WalkSkipChildren, nil
		case *gast.RawHTML:
			return gast.WalkSkipChildren, nil
		}
		return gast.WalkContinue, nil
	})
	s := b.String()
	at := strings.Index(s, mark)
	if at < 0 {
		return collapse(inlineText(l, src))
	}
	s = strings.Replace(s, mark, "", 1)
	start, end := 0, len(s)
	for i := at - 1; i > 0; i-- {
		if sentenceEnd(s, i) {
			start = i + 1
			break
		}
	}
	for i := at; i < len(s); i++ {
		if sentenceEnd(s, i) {
			end = i + 1
			break
		}
	}
	return collapse(s[start:end])
}

// sentenceEnd reports whether s[i] ends a sentence: '.', '!' or '?'
// followed by a space and an upper-case letter, or at the end of s.
func sentenceEnd(s string, i int) bool {
	if !strings.ContainsRune(".!?", rune(s[i])) {
		return false
	}
	if i+1 == len(s) {
		return true
	}
	if s[i+1] != ' ' {
		return false
	}
	r, _ := utf8.DecodeRuneInString(strings.TrimLeft(s[i+1:], " "))
	return unicode.IsUpper(r)
}

func inlineText(n gast.Node, src []byte) string {
	var b strings.Builder
	_ = gast.Walk(n, func(c gast.Node, entering bool) (gast.WalkStatus, error) {
		if !entering {
			return gast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *gast.Text:
			b.Write(c.Segment.Value(src))
			if c.SoftLineBreak() {
				b.WriteByte(' ')
			}
		case *gast.String:
			b.Write(c.Value)
		}
		return gast.WalkContinue, nil
	})
	return b.String()
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }
