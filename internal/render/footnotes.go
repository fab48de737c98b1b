package render

import (
	"fmt"
	"html"
	"strconv"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/util"

	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/expand"
	"github.com/ownership-book/ownership/internal/markdown"
)

// Footnotes are written as mdBook 0.5 writes them (mdbook-html
// src/html/tree.rs, footnote_reference and collect_footnote_defs; its
// tests/testsuite/markdown/footnotes), so that links written for an mdBook
// site reach them:
//
//	reference   <sup class="footnote-reference" id="fr-NAME-K"><a href="#footnote-NAME">N</a></sup>
//	definitions <hr> <ol class="footnote-definition"> <li id="footnote-NAME"> ... </li> </ol>
//
// NAME is the label as written, N the footnote's number (in the order of
// first reference), K counts the references to NAME (1, 2, ...); each
// definition ends with a link back to each reference, "↩", "↩2", ...
// Two references in a row are parted by a space.

// footnoteNames maps the number of each footnote of doc to its name.
func footnoteNames(doc ast.Node) map[int]string {
	names := map[int]string{}
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if fn, ok := n.(*east.Footnote); ok && entering {
			names[fn.Index] = string(fn.Ref)
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return names
}

func (nr *nodeRenderer) footnoteLink(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*east.FootnoteLink)
	if _, ok := n.PreviousSibling().(*east.FootnoteLink); ok {
		_ = w.WriteByte(' ')
	}
	name := html.EscapeString(nr.footnotes[n.Index])
	fmt.Fprintf(w, `<sup class="footnote-reference" id="fr-%s-%d"><a href="#footnote-%s">%d</a></sup>`, name, n.RefIndex+1, name, n.Index)
	return ast.WalkSkipChildren, nil
}

func (nr *nodeRenderer) footnoteBacklink(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*east.FootnoteBacklink)
	nth := ""
	if n.RefIndex > 0 {
		nth = strconv.Itoa(n.RefIndex + 1)
	}
	fmt.Fprintf(w, ` <a href="#fr-%s-%d">↩%s</a>`, html.EscapeString(nr.footnotes[n.Index]), n.RefIndex+1, nth)
	return ast.WalkSkipChildren, nil
}

func (nr *nodeRenderer) footnote(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		fmt.Fprintf(w, "<li id=\"footnote-%s\">\n", html.EscapeString(string(node.(*east.Footnote).Ref)))
	} else {
		_, _ = w.WriteString("</li>\n")
	}
	return ast.WalkContinue, nil
}

func (nr *nodeRenderer) footnoteList(w util.BufWriter, _ []byte, _ ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		_, _ = w.WriteString("<hr>\n<ol class=\"footnote-definition\">\n")
	} else {
		_, _ = w.WriteString("</ol>\n")
	}
	return ast.WalkContinue, nil
}

// footnoteProblems returns a problem for each footnote definition that
// the page leaves out, as mdBook warns about it ("footnote `x` in a.md
// defined multiple times - not updating to new definition"; "footnote `x`
// in `a.md` is defined but not referenced"), at the definition's line.
// A reference to a name never defined is text ("[^x]"), in mdBook (
// pulldown-cmark's GFM footnotes) as here, and mdBook says nothing of it;
// neither does bookgen.
func footnoteProblems(d *expand.Doc, pc parser.Context, lines lineIndex) []*diag.Error {
	var out []*diag.Error
	for _, def := range markdown.FootnoteDefs(pc) {
		file, line := origin(d, lines.line(def.Offset))
		msg := fmt.Sprintf("footnote [^%s] is defined but never referenced; the page leaves it out, as mdBook does", def.Name)
		if def.Duplicate {
			ff, fl := origin(d, lines.line(def.First))
			msg = fmt.Sprintf("footnote [^%s] is defined twice (first at %s:%d); the page keeps the first definition, as mdBook does", def.Name, ff, fl)
		}
		out = append(out, &diag.Error{File: file, Line: line, Msg: msg})
	}
	return out
}
