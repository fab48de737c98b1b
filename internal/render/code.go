package render

import (
	"bytes"
	"html"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/alecthomas/chroma/v2"
	chtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/renderer"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"

	"github.com/ownership-book/ownership/internal/verify"
)

// LightStyle and DarkStyle name the chroma styles of code in the light and
// the dark theme.
const (
	LightStyle = "github"
	DarkStyle  = "github-dark"
)

// IgnoreNote is the note shown above a code block whose info string says
// "ignore": bookgen neither compiles nor parses it.
const IgnoreNote = "not compiled by bookgen"

// IgnoreRunNote is the note shown above a console block marked "ignore":
// bookgen does not run its commands.
const IgnoreRunNote = "not run by bookgen"

// nodeRenderer renders headings (with a permalink) and code blocks (with
// chroma), overriding goldmark's HTML renderer for those kinds.
type nodeRenderer struct {
	// emitted, when set (by tests), is called with every fenced block
	// written.
	emitted func(n *ast.FencedCodeBlock, src []byte)
	// footnotes names each footnote of the page being rendered by its
	// number (footnoteNames).
	footnotes map[int]string
}

func (nr *nodeRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindHeading, nr.heading)
	reg.Register(ast.KindFencedCodeBlock, nr.fenced)
	reg.Register(ast.KindCodeBlock, nr.indented)
	reg.Register(ast.KindBlockquote, nr.blockquote)
	reg.Register(ast.KindImage, nr.image)
	reg.Register(east.KindDefinitionTerm, nr.definitionTerm)
	reg.Register(east.KindFootnoteLink, nr.footnoteLink)
	reg.Register(east.KindFootnoteBacklink, nr.footnoteBacklink)
	reg.Register(east.KindFootnote, nr.footnote)
	reg.Register(east.KindFootnoteList, nr.footnoteList)
}

func (nr *nodeRenderer) heading(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Heading)
	if entering {
		_, _ = w.WriteString("<h" + strconv.Itoa(n.Level))
		if n.Attributes() != nil {
			// Every attribute: mdBook writes a heading's {key=value}
			// attributes whatever their name (validAttrName keeps
			// them well-formed and drops on...= handlers).
			gmhtml.RenderAttributes(w, node, nil)
		}
		_ = w.WriteByte('>')
		return ast.WalkContinue, nil
	}
	if id := headingID(n); id != "" {
		_, _ = w.WriteString(`<a class="anchor" href="#` + html.EscapeString(id) + `" aria-label="Link to this section">#</a>`)
	}
	_, _ = w.WriteString("</h" + strconv.Itoa(n.Level) + ">\n")
	return ast.WalkContinue, nil
}

func (nr *nodeRenderer) fenced(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.FencedCodeBlock)
	if attrString(n, attrVerdict) == "" {
		return ast.WalkStop, errNoVerdict
	}
	if nr.emitted != nil {
		nr.emitted(n, src)
	}
	info := ""
	if n.Info != nil {
		info = string(n.Info.Segment.Value(src))
	}
	ci := parseInfo(info)
	if attrString(n, attrVerdict) == string(verify.Ignored) {
		ci.Ignore = true
	}
	if fig := figureOf(n); fig != nil {
		writeFigure(w, n, ci.Lang, fig)
		return ast.WalkSkipChildren, nil
	}
	ci.SrcFile = attrString(n, attrSrcFile)
	ci.SrcURL = attrString(n, attrSrcURL)
	ci.Try = attrString(n, attrTry)
	if p := attrString(n, attrHidePrefix); p != "" && ci.HidePrefix == "" && !ci.HideRust {
		ci.HidePrefix = p // book.toml's [output.html.code.hidelines]
	}
	writeCode(w, hideLines(codeLines(n, src), ci), ci)
	if run := attrString(n, attrRun); run != "" {
		_, _ = w.WriteString(run + "\n")
	}
	return ast.WalkSkipChildren, nil
}

func (nr *nodeRenderer) indented(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	writeCode(w, codeLines(node, src), codeInfo{})
	return ast.WalkSkipChildren, nil
}

// codeLines returns a code block's text without its leading and trailing
// blank lines (an included region often starts with the blank line that
// separates an ANCHOR marker from a doc comment).
func codeLines(n ast.Node, src []byte) string {
	var lines []string
	for i := 0; i < n.Lines().Len(); i++ {
		seg := n.Lines().At(i)
		lines = append(lines, string(seg.Value(src)))
	}
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "")
}

// codeInfo is what the page needs from a fenced block's info string, and
// where the block's lines come from.
type codeInfo struct {
	Lang    string
	Ignore  bool
	LineNos bool
	HLLines [][2]int // 1-based inclusive ranges
	// HideRust hides rustdoc's hidden lines ("# " prefix) of a rust block;
	// HidePrefix, when set, hides the lines starting with it (after
	// indentation), mdBook's hidelines=PREFIX (format/mdbook.md "Hiding
	// code lines").
	HideRust   bool
	HidePrefix string

	SrcFile string // "examples/x/y.go" for a block included from examples/
	SrcURL  string // that file (and lines) in the repository, "" without one
	Try     string // "go run ./examples/x/prog" or "go test ./examples/x"
}

// Node attributes set by Renderer.markSource and read by the fenced block
// renderer; they never reach the page as attributes.
const (
	attrSrcFile = "bookgen-src-file"
	attrSrcURL  = "bookgen-src-url"
	attrTry     = "bookgen-try"
	// attrHidePrefix is book.toml's hidelines prefix for the block's
	// language.
	attrHidePrefix = "bookgen-hide-prefix"
)

func attrString(n ast.Node, name string) string {
	v, ok := n.AttributeString(name)
	if !ok {
		return ""
	}
	switch v := v.(type) {
	case []byte:
		return string(v)
	case string:
		return v
	}
	return ""
}

var langClass = regexp.MustCompile(`[^A-Za-z0-9_+-]`)

// The formatters of blocks without highlighted lines are shared: a
// formatter caches the CSS of its style, which is costly to build.
var (
	plainFormatter    = chtml.New(chtml.WithClasses(true), chtml.TabWidth(4))
	numberedFormatter = chtml.New(chtml.WithClasses(true), chtml.TabWidth(4), chtml.WithLineNumbers(true))
)

// writeCode writes a highlighted code block:
//
//	<div class="code-block" data-lang="go">[<p class="code-note">…</p>]<pre class="chroma">…</pre></div>
func writeCode(w util.BufWriter, code string, ci codeInfo) {
	lang := ci.Lang
	lexer := lexers.Get(lang)
	if lexer == nil || lang == "" {
		lexer = lexers.Fallback
	}
	if lexer == goChroma {
		lexer = goFast
	}
	lexer = chroma.Coalesce(lexer)
	f := plainFormatter
	if ci.LineNos {
		f = numberedFormatter
	}
	if len(ci.HLLines) > 0 {
		f = chtml.New(chtml.WithClasses(true), chtml.TabWidth(4), chtml.WithLineNumbers(ci.LineNos), chtml.HighlightLines(ci.HLLines))
	}
	if dedentable[lang] {
		code = dedent(code)
	}
	_, _ = w.WriteString(`<div class="code-block`)
	if ci.Ignore {
		_, _ = w.WriteString(` ignored`)
	}
	_ = w.WriteByte('"')
	if lang != "" {
		_, _ = w.WriteString(` data-lang="` + html.EscapeString(langClass.ReplaceAllString(lang, "")) + `"`)
	}
	_ = w.WriteByte('>')
	if ci.Ignore {
		note := IgnoreNote
		if ci.Lang == "console" {
			note = IgnoreRunNote
		}
		_, _ = w.WriteString(`<p class="code-note">` + note + `</p>`)
	}
	it, err := lexer.Tokenise(nil, code)
	var buf bytes.Buffer
	if err == nil {
		err = f.Format(&buf, styles.Get(LightStyle), it)
	}
	if err != nil {
		buf.Reset()
		buf.WriteString(`<pre class="chroma"><code>` + html.EscapeString(code) + `</code></pre>`)
	}
	_, _ = w.Write(bytes.TrimRight(buf.Bytes(), "\n"))
	if ci.SrcFile != "" {
		writeSource(w, ci)
	}
	_, _ = w.WriteString("</div>\n")
}

// writeSource writes the footer of a block included from examples/:
//
//	<p class="code-source"><span class="code-try">Try it: <code>go run ./examples/x/p</code></span>
//	<a href="https://github.com/o/r/blob/main/examples/x/p/main.go#L3-L9">View examples/x/p/main.go</a></p>
func writeSource(w util.BufWriter, ci codeInfo) {
	_, _ = w.WriteString(`<p class="code-source">`)
	if ci.Try != "" {
		_, _ = w.WriteString(`<span class="code-try">Try it: <code>` + html.EscapeString(ci.Try) + `</code></span>`)
	}
	if ci.SrcURL != "" {
		_, _ = w.WriteString(`<a class="code-view" href="` + html.EscapeString(ci.SrcURL) + `">View ` + html.EscapeString(ci.SrcFile) + `</a>`)
	} else {
		_, _ = w.WriteString(`<span class="code-view">` + html.EscapeString(ci.SrcFile) + `</span>`)
	}
	_, _ = w.WriteString(`</p>`)
}

// dedentable lists the languages whose blocks lose their common leading
// whitespace on the page (a region included from inside a function). Output
// blocks (console, text) keep theirs: it is part of what a program printed.
var dedentable = map[string]bool{"go": true, "golang": true, "json": true, "yaml": true, "toml": true, "sh": true, "bash": true}

// dedent removes the longest common run of leading tabs and spaces from the
// non-blank lines of code.
func dedent(code string) string {
	lines := strings.SplitAfter(code, "\n")
	prefix := ""
	first := true
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		ws := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		if first {
			prefix, first = ws, false
			continue
		}
		for !strings.HasPrefix(ws, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	if prefix == "" {
		return code
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(strings.TrimPrefix(l, prefix))
	}
	return b.String()
}

// parseHLLines parses "1,3-5" or "1 3-5" into ranges; bad parts are dropped.
func parseHLLines(s string) [][2]int {
	var out [][2]int
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		lo, hi, found := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 1 {
			continue
		}
		b := a
		if found {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				continue
			}
		}
		out = append(out, [2]int{a, b})
	}
	return out
}

var (
	cssOnce sync.Once
	cssText []byte
)

// CSS returns the stylesheet of highlighted code: the light style on
// ".chroma", the dark style under [data-theme=dark] and, when the page sets
// no data-theme, under prefers-color-scheme: dark. The result is the same on
// every call.
func CSS() []byte {
	cssOnce.Do(func() {
		f := chtml.New(chtml.WithClasses(true), chtml.WithLineNumbers(true))
		var light, dark bytes.Buffer
		_ = f.WriteCSS(&light, styles.Get(LightStyle))
		_ = f.WriteCSS(&dark, styles.Get(DarkStyle))
		// Contrast fixes (WCAG AA, 4.5:1 on the code background and on a
		// highlighted line; internal/site's TestThemeContrast checks them):
		// whitespace tokens take the text colour (github paints them
		// white, github-dark a grey below 4.5:1), and github-dark's error
		// red is too dark on a highlighted line.
		fixLight := strings.NewReplacer(".chroma .w { color: #ffffff }", ".chroma .w { color: inherit }")
		fixDark := strings.NewReplacer(".chroma .w { color: #6e7681 }", ".chroma .w { color: inherit }",
			".chroma .err { color: #f85149 }", ".chroma .err { color: #ff7b72 }")
		lightCSS, darkCSS := fixLight.Replace(light.String()), fixDark.Replace(dark.String())
		var b bytes.Buffer
		b.WriteString("/* Code highlighting: chroma styles " + LightStyle + " (light) and " + DarkStyle + " (dark). */\n")
		b.WriteString(lightCSS)
		// The light style colours token classes the dark one leaves to
		// inheritance (punctuation, names): reset them first in dark mode.
		reset := ".chroma span { color: inherit; background-color: transparent; font-weight: inherit; font-style: inherit; text-decoration: none }\n"
		b.WriteString(scope(reset+darkCSS, "[data-theme=dark] "))
		b.WriteString("@media (prefers-color-scheme: dark) {\n")
		b.WriteString(scope(reset+darkCSS, ":root:not([data-theme=light]) "))
		b.WriteString("}\n")
		cssText = b.Bytes()
	})
	return cssText
}

// scope prefixes the selector of every "selector { rules }" line of css.
func scope(css, prefix string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(css, "\n"), "\n") {
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "/*") {
			if i := strings.Index(line, "*/"); i >= 0 {
				line = strings.TrimSpace(line[i+2:])
			}
		}
		b.WriteString(prefix + line + "\n")
	}
	return b.String()
}

// hideLines drops the lines mdBook hides from a code block's display
// (format/mdbook.md "Hiding code lines"). In a rust block (rustdoc's rule,
// as mdBook's hide_lines_rust applies it) a line whose first non-blank
// character is "#" followed by a space or by nothing is hidden, "##" shows
// as "#" and any other "#..." ("#[derive]", "#!") is shown as written. With
// ci.HidePrefix, a line whose text after indentation starts with the prefix
// is hidden. mdBook keeps hidden lines behind a toggle; bookgen's pages
// leave them out (README, "Coming from mdBook").
func hideLines(code string, ci codeInfo) string {
	if !ci.HideRust && ci.HidePrefix == "" {
		return code
	}
	lines := strings.SplitAfter(code, "\n")
	out := lines[:0]
	for _, l := range lines {
		body := strings.TrimLeft(l, " \t")
		indent := l[:len(l)-len(body)]
		if ci.HidePrefix != "" {
			if !strings.HasPrefix(body, ci.HidePrefix) {
				out = append(out, l)
			}
			continue
		}
		switch rest, ok := strings.CutPrefix(body, "#"); {
		case !ok:
			out = append(out, l)
		case strings.HasPrefix(rest, "#"):
			out = append(out, indent+rest)
		case rest == "" || rest == "\n" || rest == "\r\n" || strings.HasPrefix(rest, " "):
			// hidden
		default:
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}
