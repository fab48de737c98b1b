package markdown

// The grammar of mutant links: after the link to a claim's check, in the
// same paragraph, list item's text or table row, a chapter may link to
// mutants of the check's package,
//
//	[TestMayMutate](../examples/ownership/fence_test.go#TestMayMutate)
//	kills [mutant owned-by-anyone](../examples/ownership/testdata/mutants/owned-by-anyone/).
//
// a folder <package>/testdata/mutants/<name>/ under examples/ (relative to
// the chapter). ClaimLinks attaches each to the claim link before it;
// verify runs the claim's check against it, render links it to its diff.

import (
	"net/url"
	"path"
	"regexp"
	"strings"

	gast "github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
)

// mutantRE matches a mutant's folder: a package directory, testdata/mutants/
// and one name.
var mutantRE = regexp.MustCompile(`^(examples/(?:[^/]+/)*?[^/]+)/testdata/mutants/([^/]+)$`)

// MutantTarget reports whether dest, a link destination written in the
// chapter file chFile (repository-relative), names a mutant's folder
// (<package>/testdata/mutants/<name>, with or without the final slash,
// under examples/). It returns the repository-relative folder, the
// package directory ("examples/ownership") and the mutant's name.
func MutantTarget(chFile, dest string) (dir, pkgDir, name string, ok bool) {
	u, err := url.Parse(dest)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Path == "" || u.Fragment != "" || strings.HasPrefix(dest, "/") {
		return "", "", "", false
	}
	p := path.Join(path.Dir(chFile), u.Path)
	sm := mutantRE.FindStringSubmatch(p)
	if sm == nil {
		return "", "", "", false
	}
	return p, sm[1], sm[2], true
}

// MutantLink is a link to a mutant as the Markdown alone tells it.
type MutantLink struct {
	Dest string // the link's destination as written
	Dir  string // MutantTarget's folder
	Line int    // 1-based Markdown line
}

// mutantBlock is the block a mutant link must share with its claim's link:
// the table row for a link in a table, else the nearest block (paragraph,
// list item's text, heading).
func mutantBlock(l *gast.Link) gast.Node {
	var blk gast.Node
	for p := l.Parent(); p != nil; p = p.Parent() {
		if _, ok := p.(*east.TableRow); ok {
			return p
		}
		if _, ok := p.(*east.TableHeader); ok {
			return p
		}
		if blk == nil && p.Type() == gast.TypeBlock {
			blk = p
		}
	}
	return blk
}

// attachMutant adds the mutant link l (to the folder dir) to the last
// claim link of out when both are in one block (last is that claim's
// block), and otherwise appends it as an orphan (ClaimLink.Orphan).
func attachMutant(out []ClaimLink, last gast.Node, l *gast.Link, dir string, src []byte, lines []int) []ClaimLink {
	ml := MutantLink{Dest: string(l.Destination), Dir: dir, Line: linkLine(l, src, lines)}
	if n := len(out); n > 0 && last != nil && mutantBlock(l) == last && !out[n-1].InHeading && out[n-1].Orphan == nil {
		out[n-1].Mutants = append(out[n-1].Mutants, ml)
		return out
	}
	return append(out, ClaimLink{Dest: ml.Dest, Line: ml.Line, Orphan: &ml})
}
