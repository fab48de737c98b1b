package render

import (
	"errors"
	"fmt"
	"html"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/util"

	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/expand"
	"github.com/ownership-book/ownership/internal/markdown"
)

// Node attributes of a fenced block drawn as a figure (set by
// Renderer.figure, read by the block renderer and by blockText).
const (
	attrFigure  = "bookgen-figure"  // *Figure
	attrCaption = "bookgen-caption" // string
)

// figure draws the fenced block n when its language is a figure language
// and keeps the drawing on the node. A source the library refuses is a
// *diag.Error at the line of the block it names (the opening fence when
// the library names none).
func (r *Renderer) figure(d *expand.Doc, n *ast.FencedCodeBlock, src []byte, lines lineIndex) diag.List {
	info := ""
	if n.Info != nil {
		info = string(n.Info.Segment.Value(src))
	}
	lang, attrs := markdown.ParseInfo(info)
	if !IsFigure(lang) {
		return nil
	}
	fence := 0
	if n.Info != nil {
		fence = lines.line(n.Info.Segment.Start)
	}
	var body strings.Builder
	for i := 0; i < n.Lines().Len(); i++ {
		seg := n.Lines().At(i)
		body.WriteString(strings.Repeat(" ", seg.Padding))
		body.Write(seg.Value(src))
	}
	at := func(bodyLine int) (string, int) {
		if bodyLine >= 1 && bodyLine <= n.Lines().Len() {
			return origin(d, lines.line(n.Lines().At(bodyLine-1).Start))
		}
		if fence == 0 && n.Lines().Len() > 0 {
			return origin(d, lines.line(n.Lines().At(0).Start)-1)
		}
		return origin(d, fence)
	}
	if strings.TrimSpace(body.String()) == "" {
		file, line := at(0)
		return diag.List{{File: file, Line: line, Msg: fmt.Sprintf("```%s figure is empty", lang)}}
	}
	file, line := at(0)
	fig, err := r.Figures.DrawAt(fmt.Sprintf("%s:%d", file, line), lang, body.String())
	if err != nil {
		var fe FigureErrors
		if !errors.As(err, &fe) {
			file, line := at(0)
			return diag.List{{File: file, Line: line, Msg: fmt.Sprintf("```%s figure: %v", lang, err)}}
		}
		var out diag.List
		for _, e := range fe {
			file, line := at(e.Line)
			out = append(out, &diag.Error{File: file, Line: line, Msg: fmt.Sprintf("```%s figure: %s", lang, e.Msg)})
		}
		return out
	}
	n.SetAttributeString(attrFigure, fig)
	if c, ok := attrs["caption"]; ok {
		n.SetAttributeString(attrCaption, c)
	}
	return nil
}

// figureOf returns the figure drawn for n, if any.
func figureOf(n ast.Node) *Figure {
	v, ok := n.AttributeString(attrFigure)
	if !ok {
		return nil
	}
	fig, _ := v.(*Figure)
	return fig
}

// writeFigure writes a drawn figure:
//
//	<figure class="figure figure-d2 fig-min-560"><div class="figure-cue" aria-hidden="true"></div><div class="figure-box"><svg …>…</svg></div>[<figcaption>…</figcaption>]</figure>
//
// The box scrolls sideways when the column is narrower than the figure's
// smallest legible width (minWidthClass); the cue above it, shown by
// FigureCSS only then, says so where the reader starts the figure.
func writeFigure(w util.BufWriter, n ast.Node, lang string, fig *Figure) {
	class := "figure figure-" + lang
	if wc := minWidthClass(fig.Width, labelSize(lang, fig.SVG)); wc != "" {
		class += " " + wc
	}
	_, _ = w.WriteString(`<figure class="` + class + `"><div class="figure-cue" aria-hidden="true"></div><div class="figure-box">`)
	_, _ = w.Write(fig.SVG)
	_, _ = w.WriteString(`</div>`)
	if c := attrString(n, attrCaption); c != "" {
		_, _ = w.WriteString(`<figcaption>` + html.EscapeString(c) + `</figcaption>`)
	}
	_, _ = w.WriteString("</figure>\n")
}
