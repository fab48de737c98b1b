package markdown

import (
	"bytes"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// FootnoteDef is one footnote definition ("[^name]: text") of a chapter
// that the page leaves out, as mdBook 0.5 does (mdbook-html
// src/html/tree.rs, Tag::FootnoteDefinition and collect_footnote_defs):
// a second definition of a name (the first one is kept) or a definition
// no reference names.
type FootnoteDef struct {
	Name      string // the label, as written between "[^" and "]"
	Offset    int    // byte offset of its "[^" in the parsed source
	Duplicate bool   // a later definition of a name already defined
	First     int    // for a Duplicate, the offset of the name's first definition
}

// FootnoteDefs returns the footnote definitions that the document parsed
// with context pc leaves out, in source order.
func FootnoteDefs(pc parser.Context) []FootnoteDef {
	if v, ok := pc.Get(footnoteDefsKey).([]FootnoteDef); ok {
		return v
	}
	return nil
}

var footnoteDefsKey = parser.NewContextKey()

// footnoteDefs records, before goldmark's footnote transformer (priority
// 999) drops them, the definitions that no reference reaches. It changes
// nothing in the tree.
type footnoteDefs struct{}

func (footnoteDefs) Transform(doc *ast.Document, reader text.Reader, pc parser.Context) {
	var list *east.FootnoteList
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if l, ok := n.(*east.FootnoteList); ok && entering {
			list = l
			return ast.WalkStop, nil
		}
		return ast.WalkContinue, nil
	})
	if list == nil {
		return
	}
	src := reader.Source()
	var out []FootnoteDef
	kept := map[string]bool{}
	firstAt := map[string]int{}
	cursor := 0 // definitions are in the list in source order
	for c := list.FirstChild(); c != nil; c = c.NextSibling() {
		fn, ok := c.(*east.Footnote)
		if !ok {
			continue
		}
		pat := append(append([]byte("[^"), fn.Ref...), "]:"...)
		pos := -1
		if s := firstOffset(fn); s >= cursor {
			if i := bytes.LastIndex(src[cursor:s], pat); i >= 0 {
				pos = cursor + i
			}
		}
		if pos < 0 {
			if i := bytes.Index(src[cursor:], pat); i >= 0 {
				pos = cursor + i
			}
		}
		if pos >= 0 {
			cursor = pos + 1
		}
		name := string(fn.Ref)
		if _, ok := firstAt[name]; !ok {
			firstAt[name] = max(pos, 0)
		}
		if fn.Index >= 0 {
			kept[name] = true
			continue
		}
		out = append(out, FootnoteDef{Name: name, Offset: max(pos, 0)})
	}
	// A definition goldmark did not number is a duplicate when another
	// of its name was numbered (referenced) or comes before it.
	seen := map[string]bool{}
	for i := range out {
		d := &out[i]
		if d.Duplicate = kept[d.Name] || seen[d.Name]; d.Duplicate {
			d.First = firstAt[d.Name]
		}
		seen[d.Name] = true
	}
	pc.Set(footnoteDefsKey, out)
}

// firstOffset returns the offset of n's first line of text, or -1.
func firstOffset(n ast.Node) int {
	off := -1
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering || c.Type() != ast.TypeBlock {
			return ast.WalkContinue, nil
		}
		if l := c.Lines(); l != nil && l.Len() > 0 {
			off = l.At(0).Start
			return ast.WalkStop, nil
		}
		return ast.WalkContinue, nil
	})
	return off
}
