package render

import (
	"bytes"
	"fmt"
	"hash"
	"html"
	"path"
	"strings"
	"unicode"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"

	"github.com/ownership-book/ownership/internal/expand"
	"github.com/ownership-book/ownership/internal/markdown"
	"github.com/ownership-book/ownership/internal/verify"
)

// ChecksDirective, alone on a line outside code blocks, is replaced by the
// table of every claim's check in the book (claim, chapter, check,
// package), built from the verification's Report.Claims.
const ChecksDirective = "{{#checks}}"

// claimIndex is what the renderer knows about the book's claims.
type claimIndex struct {
	all      []verify.Claim
	byTarget map[string]verify.Claim // "examples/x/x_test.go#TestX" -> a passing claim
	byLink   map[string]verify.Claim // chapter path + "#" + the link's id (ClaimID) -> its passing claim
	mutants  map[string]killedMutant // mutantKey -> a killed mutant (mutants.go)
	set      bool
}

// SetClaims gives the renderer the claims of the verification that
// precedes it (verify.Report.Claims). A claim link whose check passed is
// rendered as a link to the function's lines in the repository, with the
// id markdown.ClaimID gives it and a badge saying it passed in this build;
// without SetClaims, or for a check that did not pass, the link is an
// ordinary link to the file.
func (r *Renderer) SetClaims(claims []verify.Claim) {
	r.claims = claimIndex{all: claims, byTarget: map[string]verify.Claim{}, byLink: map[string]verify.Claim{}, mutants: indexMutants(claims), set: true}
	for _, c := range claims {
		if c.Passed {
			r.claims.byTarget[c.Target+"#"+c.Func] = c
			r.claims.byLink[c.Chapter+"#"+c.ID] = c
		}
	}
}

// claimsKey adds to a page's cache key the claims its rendering depends
// on: those written in the chapter, and all of them when the chapter
// holds the table.
func (r *Renderer) claimsKey(h hash.Hash, d *expand.Doc) {
	all := hasChecksDirective(d.Markdown)
	fmt.Fprintf(h, "\x00claims:%v:%v:%q\x00", r.claims.set, all, r.book.Config.RequireMutants)
	for _, c := range r.claims.all {
		if all || c.Chapter == d.Chapter.Path {
			fmt.Fprintf(h, "%s:%d:%s:%s:%s#%s:%d-%d:%v:%s\x00", c.File, c.Line, c.Chapter, c.ChapterTitle, c.Target, c.Func, c.StartLine, c.EndLine, c.Passed, c.Text)
			mutantsKey(h, c)
		}
	}
}

// markClaim turns a claim link n into a link to its function's lines,
// marked as passing, when its check passed. generated is set for links of
// the table of checks, which get no id (the ids belong to the links the
// chapter's author wrote, in the order verify counts them). count holds
// the page's links per function so far.
func (r *Renderer) markClaim(chPath string, n *ast.Link, generated bool, count map[string]int) {
	file, fn, ok := markdown.ClaimTarget(r.book.RepoPath(chPath), string(n.Destination))
	if !ok {
		return
	}
	if !generated {
		count[fn]++
	}
	// A link the author wrote is its own claim, with its own mutants; the
	// same check linked elsewhere is another claim. A link of the table
	// of checks stands for the check.
	c, ok := r.claims.byTarget[file+"#"+fn]
	if !generated {
		c, ok = r.claims.byLink[chPath+"#"+markdown.ClaimID(fn, count[fn])]
	}
	if !ok {
		return
	}
	dest := string(n.Destination)
	if i := strings.IndexByte(dest, '#'); i >= 0 {
		dest = dest[:i]
	}
	n.Destination = []byte(fmt.Sprintf("%s#L%d-L%d", dest, c.StartLine, c.EndLine))
	n.SetAttributeString("class", []byte("check"))
	if !generated {
		n.SetAttributeString("id", []byte(markdown.ClaimID(fn, count[fn])))
	}
	note := "passed in this build: " + c.Command()
	k := kills(c)
	if len(k) > 0 {
		note += "; it fails with mutant " + strings.Join(k, ", ")
	}
	if t := strings.TrimSpace(string(n.Title)); t != "" {
		n.Title = []byte(t + " (" + note + ")")
	} else {
		n.Title = []byte(c.Func + " " + note)
	}
	n.AppendChild(n, &checkBadge{kills: k})
}

// kindCheckBadge is the node kind of the badge of a passing claim link.
var kindCheckBadge = ast.NewNodeKind("CheckBadge")

// checkBadge is the mark after a passing claim link's text: a check mark
// for the eye and words for a screen reader.
type checkBadge struct {
	ast.BaseInline
	kills []string // the names of the mutants the check kills
}

func (n *checkBadge) Kind() ast.NodeKind { return kindCheckBadge }

func (n *checkBadge) Dump(src []byte, level int) { ast.DumpHelper(n, src, level, nil, nil) }

// claimRenderer renders checkBadge nodes.
type claimRenderer struct{}

func (claimRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(kindCheckBadge, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			if k := n.(*checkBadge).kills; len(k) > 0 {
				_, _ = fmt.Fprintf(w, `<span class="check-badge" aria-hidden="true">✓ kills %d</span><span class="visually-hidden"> (check passed in this build and fails with mutant %s)</span>`, len(k), util.EscapeHTML([]byte(strings.Join(k, ", "))))
			} else {
				_, _ = w.WriteString(`<span class="check-badge" aria-hidden="true">✓</span><span class="visually-hidden"> (check passed in this build)</span>`)
			}
		}
		return ast.WalkSkipChildren, nil
	})
}

// hasChecksDirective reports whether md may hold the directive (a quick
// test before the exact one in withChecksTable).
func hasChecksDirective(md []byte) bool {
	return bytes.Contains(md, []byte(ChecksDirective))
}

// withChecksTable returns d with every line that is ChecksDirective alone
// (outside fenced code blocks) replaced by the table of checks, and the
// set of 1-based lines of the result that were generated. Generated lines
// have the directive's origin, so a problem in the table is reported there.
func (r *Renderer) withChecksTable(d *expand.Doc) (*expand.Doc, map[int]bool) {
	if !hasChecksDirective(d.Markdown) {
		return d, nil
	}
	inCode := map[int]bool{}
	for _, b := range markdown.FindBlocks(d.Markdown) {
		inCode[b.Line] = true
		for _, n := range b.LineNos {
			inCode[n] = true
		}
	}
	lines := strings.Split(string(d.Markdown), "\n")
	var out []string
	var origins []expand.Origin
	generated := map[int]bool{}
	for i, l := range lines {
		o := d.Origin(i + 1)
		if strings.TrimSpace(l) != ChecksDirective || inCode[i+1] {
			out = append(out, l)
			if i < len(d.Origins) {
				origins = append(origins, o)
			}
			continue
		}
		for _, t := range r.checksTable(d.Chapter.Path) {
			out = append(out, t)
			origins = append(origins, o)
			generated[len(out)] = true
		}
	}
	if len(generated) == 0 {
		return d, nil
	}
	nd := *d
	nd.Markdown = []byte(strings.Join(out, "\n"))
	nd.Origins = origins
	return &nd, generated
}

// checksTable returns the Markdown lines of the table of checks, as seen
// from the chapter at book-relative path chPath: a row per claim, in
// reading order, where consecutive links with the same claim text in one
// chapter make one claim.
func (r *Renderer) checksTable(chPath string) []string {
	if len(r.claims.all) == 0 {
		return []string{"", "*No chapter names a check.*", ""}
	}
	dir := path.Dir(r.book.RepoPath(chPath))
	out := []string{"", "| Claim | Chapter | Check | Package | Mutants killed |", "| --- | --- | --- | --- | --- |"}
	all := r.claims.all
	for i := 0; i < len(all); {
		// Consecutive links that back one claim (one sentence, one
		// title) share a row; the chapter link goes to the first.
		j := i + 1
		for j < len(all) && all[j].Chapter == all[i].Chapter && all[j].Text == all[i].Text {
			j++
		}
		var checks, pkgs []string
		seen := map[string]bool{}
		for _, c := range all[i:j] {
			checks = append(checks, fmt.Sprintf("[`%s`](%s#%s)", c.Func, relPath(dir, c.Target), c.Func))
			if p := strings.TrimPrefix(c.Package, "./"); !seen[p] {
				seen[p] = true
				pkgs = append(pkgs, "`"+p+"`")
			}
		}
		c := all[i]
		// A claim's text may hold the typographer's entities
		// ("&rsquo;"): the table shows the characters.
		out = append(out, fmt.Sprintf("| %s | [%s](%s#%s) | %s | %s | %s |",
			escapeMarkdown(html.UnescapeString(c.Text)), escapeMarkdown(c.ChapterTitle), relPath(dir, r.book.RepoPath(c.Chapter)), c.ID,
			strings.Join(checks, " "), strings.Join(pkgs, " "), r.checksTableMutants(dir, all[i:j])))
		i = j
	}
	return append(out, "")
}

// relPath returns the slash path of repository path to relative to the
// repository directory from.
func relPath(from, to string) string {
	f := strings.Split(from, "/")
	t := strings.Split(to, "/")
	i := 0
	for i < len(f) && i < len(t)-1 && f[i] == t[i] {
		i++
	}
	return strings.Repeat("../", len(f)-i) + strings.Join(t[i:], "/")
}

// escapeMarkdown escapes every ASCII punctuation character of s with a
// backslash (CommonMark section 2.4), so that s is literal text in a
// table cell.
func escapeMarkdown(s string) string {
	var b strings.Builder
	for _, c := range s {
		if c < 0x80 && strings.ContainsRune("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// linkStart returns the byte offset of a link's first text (the line the
// link is written on), else that of its block.
func linkStart(l *ast.Link) int {
	off := -1
	_ = ast.Walk(l, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := n.(*ast.Text); ok && entering {
			off = t.Segment.Start
			return ast.WalkStop, nil
		}
		return ast.WalkContinue, nil
	})
	if off < 0 {
		return blockStart(l)
	}
	return off
}

// ChecksTableClass is the class of the table of checks' <table>: the
// theme lays it out for reading (wrapping names, a sticky header, a card
// per claim on a phone) instead of as a generic table.
const ChecksTableClass = "checks-table"

// markChecksTable gives the generated table of checks (nodes holds it and
// the code spans of its cells) its class, and turns each code span into a
// breakableCode, whose name may wrap.
func markChecksTable(nodes []ast.Node) {
	for _, n := range nodes {
		switch n := n.(type) {
		case *east.Table:
			n.SetAttributeString("class", []byte(ChecksTableClass))
		case *ast.CodeSpan:
			b := &breakableCode{}
			for c := n.FirstChild(); c != nil; {
				next := c.NextSibling()
				b.AppendChild(b, c) // moves c: the text stays for search
				c = next
			}
			n.Parent().ReplaceChild(n.Parent(), n, b)
		}
	}
}

// kindBreakableCode is the node kind of a code span of the table of checks.
var kindBreakableCode = ast.NewNodeKind("BreakableCode")

// breakableCode is a code span (its children are the span's *ast.Text)
// written with a <wbr> where a Go name or path may break: after "/" and
// "_", and before a capital that follows a lower-case letter or digit
// ("TestFence<wbr>Rejects<wbr>Stale", "examples/<wbr>stream/<wbr>owner").
// <wbr> is no character, so a copied name is the name.
type breakableCode struct {
	ast.BaseInline
}

func (n *breakableCode) Kind() ast.NodeKind { return kindBreakableCode }

func (n *breakableCode) Dump(src []byte, level int) { ast.DumpHelper(n, src, level, nil, nil) }

// wordBreaks returns s, HTML-escaped, with <wbr> where breakableCode
// allows a break.
func wordBreaks(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, c := range rs {
		if i > 0 && unicode.IsUpper(c) && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1])) {
			b.WriteString("<wbr>")
		}
		b.WriteString(html.EscapeString(string(c)))
		if (c == '/' || c == '_') && i < len(rs)-1 {
			b.WriteString("<wbr>")
		}
	}
	return b.String()
}

// checksTableRenderer renders breakableCode nodes.
type checksTableRenderer struct{}

func (checksTableRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(kindBreakableCode, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		var text strings.Builder
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			if t, ok := c.(*ast.Text); ok {
				v := t.Segment.Value(src)
				text.Write(bytes.TrimSuffix(v, []byte("\n")))
				if bytes.HasSuffix(v, []byte("\n")) {
					text.WriteByte(' ')
				}
			}
		}
		_, _ = w.WriteString("<code>" + wordBreaks(text.String()) + "</code>")
		return ast.WalkSkipChildren, nil
	})
}
