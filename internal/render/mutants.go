package render

// Mutants on a page (see verify.Mutant). A link to a mutant that its
// claim's check killed in this build becomes a link to the mutant's diff,
// marked "killed"; the diffs follow the chapter's text, one figure per
// mutant, in the order the page first names them. A link to a mutant that
// was not killed stays a link to its folder (the build has failed at its
// claim anyway). With [bookgen] require-mutants, every paragraph, list
// item or table row of the named chapter or section that holds a claim
// must hold a link to a mutant that was killed.

import (
	"bytes"
	"fmt"
	"hash"
	"html"
	"path"
	"sort"
	"strings"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"

	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/markdown"
	"github.com/ownership-book/ownership/internal/verify"
)

// killedMutant is a killed mutant with the claim that names it.
type killedMutant struct {
	m verify.Mutant
	c verify.Claim
}

// mutantKey is how a mutant link is found again: where it is written and
// its destination.
func mutantKey(file string, line int, dest string) string {
	return fmt.Sprintf("%s:%d:%s", file, line, dest)
}

// indexMutants maps every killed mutant's link to it.
func indexMutants(claims []verify.Claim) map[string]killedMutant {
	idx := map[string]killedMutant{}
	for _, c := range claims {
		for _, m := range c.Mutants {
			if m.Killed {
				idx[mutantKey(m.LinkFile, m.LinkLine, m.Dest)] = killedMutant{m: m, c: c}
			}
		}
	}
	return idx
}

// MutantID returns the id of mutant m's diff on the page that names it:
// "mutant-", the package's folder under examples/ with "-" for "/", "-"
// and the mutant's name ("mutant-ownership-owned-by-anyone").
func MutantID(m verify.Mutant) string {
	pkg := path.Dir(path.Dir(path.Dir(m.Dir))) // strip testdata/mutants/<name>
	return "mutant-" + strings.ReplaceAll(strings.TrimPrefix(pkg, "examples/"), "/", "-") + "-" + m.Name
}

// mutantsKey adds to a page's cache key what its mutants' rendering
// depends on: the claim c's mutants and the book's requirement.
func mutantsKey(h hash.Hash, c verify.Claim) {
	for _, m := range c.Mutants {
		fmt.Fprintf(h, "mutant:%s:%d:%s:%s:%v:%s\x00", m.LinkFile, m.LinkLine, m.Dest, m.File, m.Killed, m.Diff)
	}
}

// kills returns the names of the mutants of claim c that were killed.
func kills(c verify.Claim) []string {
	var out []string
	for _, m := range c.Mutants {
		if m.Killed {
			out = append(out, m.Name)
		}
	}
	return out
}

// pageMutants collects what one page's render learns about mutants.
type pageMutants struct {
	shown []killedMutant // in the order first linked
	seen  map[string]int // MutantID -> index in shown
	by    map[string][]string
	// The requirement: blocks holding claims, and the sections they are in.
	required bool     // the whole chapter is required
	sections []string // required section ids of this chapter
	stack    []headingAt
	blocks   map[ast.Node]*requiredBlock
	order    []ast.Node
	found    map[string]bool // required section ids seen
}

type headingAt struct {
	level int
	id    string
}

type requiredBlock struct {
	claim      string // first claim link's function
	file       string
	line       int
	hasKilled  bool
	inRequired bool
}

func (r *Renderer) newPageMutants(chPath string) *pageMutants {
	pm := &pageMutants{seen: map[string]int{}, by: map[string][]string{}, blocks: map[ast.Node]*requiredBlock{}, found: map[string]bool{}}
	for _, req := range r.book.Config.RequireMutants {
		p, frag, hasFrag := strings.Cut(req, "#")
		if p != chPath {
			continue
		}
		if hasFrag && frag != "" {
			pm.sections = append(pm.sections, frag)
		} else {
			pm.required = true
		}
	}
	return pm
}

// heading notes a heading, for the sections the requirement names.
func (pm *pageMutants) heading(n *ast.Heading) {
	for len(pm.stack) > 0 && pm.stack[len(pm.stack)-1].level >= n.Level {
		pm.stack = pm.stack[:len(pm.stack)-1]
	}
	id := headingID(n)
	pm.stack = append(pm.stack, headingAt{n.Level, id})
	for _, s := range pm.sections {
		if s == id {
			pm.found[s] = true
		}
	}
}

func (pm *pageMutants) inRequired() bool {
	if pm.required {
		return true
	}
	for _, h := range pm.stack {
		for _, s := range pm.sections {
			if h.id == s {
				return true
			}
		}
	}
	return false
}

// block returns the requirement's record of the block holding link n: its
// table row, else its nearest block.
func (pm *pageMutants) block(n *ast.Link) *requiredBlock {
	var blk ast.Node
	for p := n.Parent(); p != nil; p = p.Parent() {
		if _, ok := p.(*east.TableRow); ok {
			blk = p
			break
		}
		if blk == nil && p.Type() == ast.TypeBlock {
			blk = p
		}
	}
	b, ok := pm.blocks[blk]
	if !ok {
		b = &requiredBlock{inRequired: pm.inRequired()}
		pm.blocks[blk] = b
		pm.order = append(pm.order, blk)
	}
	return b
}

// link notes the link n, written at file:line, before markClaim rewrites
// it: a claim link (not generated: the table of checks is not covered by
// the requirement) for the requirement, a mutant link for markMutant.
func (pm *pageMutants) link(r *Renderer, chPath string, n *ast.Link, file string, line int, generated bool) {
	if generated {
		return
	}
	if _, fn, ok := markdown.ClaimTarget(r.book.RepoPath(chPath), string(n.Destination)); ok {
		if b := pm.block(n); b.claim == "" {
			b.claim, b.file, b.line = fn, file, line
		}
		return
	}
	r.markMutant(chPath, n, file, line, pm)
}

// markMutant turns the link n, written at file:line, into a link to its
// mutant's diff when the mutant was killed, with a badge saying so.
func (r *Renderer) markMutant(chPath string, n *ast.Link, file string, line int, pm *pageMutants) {
	if _, _, _, ok := markdown.MutantTarget(r.book.RepoPath(chPath), string(n.Destination)); !ok {
		return
	}
	k, ok := r.claims.mutants[mutantKey(file, line, string(n.Destination))]
	if !ok {
		return
	}
	pm.block(n).hasKilled = true
	id := MutantID(k.m)
	if _, ok := pm.seen[id]; !ok {
		pm.seen[id] = len(pm.shown)
		pm.shown = append(pm.shown, k)
	}
	by := k.c.ID
	if !contains(pm.by[id], by) {
		pm.by[id] = append(pm.by[id], by)
	}
	n.Destination = []byte("#" + id)
	n.SetAttributeString("class", []byte("mutant"))
	n.Title = []byte(fmt.Sprintf("mutant %s: %s in place of %s; %s fails with it in this build", k.m.Name, k.m.File, k.m.Replaces, k.c.Func))
	n.AppendChild(n, &mutantBadge{check: k.c.Func})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// errors returns the requirement's errors: a block with a claim and no
// killed mutant, a required section that the chapter does not have.
func (pm *pageMutants) errors(r *Renderer, chPath string) diag.List {
	var errs diag.List
	for _, blk := range pm.order {
		b := pm.blocks[blk]
		if b.inRequired && b.claim != "" && !b.hasKilled {
			errs = append(errs, &diag.Error{File: b.file, Line: b.line, Msg: fmt.Sprintf(
				"claim %s names no mutant that its check kills; book.toml's require-mutants requires one for every claim in %s (link a folder testdata/mutants/NAME/ after the check)",
				b.claim, strings.Join(r.book.Config.RequireMutants, ", "))})
		}
	}
	for _, s := range pm.sections {
		if !pm.found[s] {
			errs = append(errs, &diag.Error{File: r.book.ConfigFile, Line: r.book.Config.RequireMutantsLine, Msg: fmt.Sprintf(
				"require-mutants names %s#%s, but %s has no heading with id %q", chPath, s, r.book.RepoPath(chPath), s)})
		}
	}
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Line < errs[j].Line })
	return errs
}

// html returns the section of diffs that follows the chapter's text, or
// nil when the page links no killed mutant.
func (pm *pageMutants) html() []byte {
	if len(pm.shown) == 0 {
		return nil
	}
	var b bytes.Buffer
	b.WriteString("<section class=\"mutants\" aria-label=\"Mutants on this page\">\n<p class=\"mutants-title\">Mutants on this page: each is a copy of one file with a rule broken, applied with <code>go test -overlay</code>; the check named beside it fails with it in this build.</p>\n")
	for _, k := range pm.shown {
		id := MutantID(k.m)
		var by []string
		for _, cid := range pm.by[id] {
			fn := strings.TrimPrefix(cid, "check-")
			if i := strings.LastIndexByte(fn, '-'); i > 0 && isDigits(fn[i+1:]) {
				fn = fn[:i]
			}
			by = append(by, fmt.Sprintf(`<a href="#%s">%s</a>`, html.EscapeString(cid), html.EscapeString(fn)))
		}
		fmt.Fprintf(&b, "<figure class=\"mutant\" id=\"%s\">\n<figcaption>Mutant <code>%s</code>: <code>%s</code> in place of <code>%s</code>, killed by %s</figcaption>\n<pre class=\"mutant-diff\"><code>",
			html.EscapeString(id), html.EscapeString(k.m.Name), html.EscapeString(k.m.File), html.EscapeString(k.m.Replaces), strings.Join(by, ", "))
		for _, l := range strings.Split(strings.TrimRight(k.m.Diff, "\n"), "\n") {
			class := ""
			switch {
			case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
				class = "diff-file"
			case strings.HasPrefix(l, "@@"):
				class = "diff-hunk"
			case strings.HasPrefix(l, "+"):
				class = "diff-add"
			case strings.HasPrefix(l, "-"):
				class = "diff-del"
			}
			if class == "" {
				b.WriteString(html.EscapeString(l))
			} else {
				fmt.Fprintf(&b, `<span class="%s">%s</span>`, class, html.EscapeString(l))
			}
			b.WriteByte('\n')
		}
		b.WriteString("</code></pre>\n</figure>\n")
	}
	b.WriteString("</section>\n")
	return b.Bytes()
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// checksTableMutants is the table of checks' cell for the mutants killed
// by the checks of one row (claims, seen from the chapter folder dir).
func (r *Renderer) checksTableMutants(dir string, claims []verify.Claim) string {
	var cells []string
	seen := map[string]bool{}
	for _, c := range claims {
		for _, m := range c.Mutants {
			if !m.Killed {
				continue
			}
			id := MutantID(m)
			if seen[id] {
				continue
			}
			seen[id] = true
			cells = append(cells, fmt.Sprintf("[`%s`](%s#%s)", m.Name, relPath(dir, r.book.RepoPath(c.Chapter)), id))
		}
	}
	if len(cells) == 0 {
		return "—"
	}
	return strings.Join(cells, " ")
}

// kindMutantBadge is the node kind of the badge of a killed mutant's link.
var kindMutantBadge = ast.NewNodeKind("MutantBadge")

// mutantBadge is the mark after a killed mutant's link text.
type mutantBadge struct {
	ast.BaseInline
	check string
}

func (n *mutantBadge) Kind() ast.NodeKind { return kindMutantBadge }

func (n *mutantBadge) Dump(src []byte, level int) { ast.DumpHelper(n, src, level, nil, nil) }

// mutantRenderer renders mutantBadge nodes.
type mutantRenderer struct{}

func (mutantRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(kindMutantBadge, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			_, _ = fmt.Fprintf(w, `<span class="mutant-badge" aria-hidden="true">killed</span><span class="visually-hidden"> (mutant killed by %s in this build; its diff follows the chapter)</span>`, html.EscapeString(n.(*mutantBadge).check))
		}
		return ast.WalkSkipChildren, nil
	})
}
