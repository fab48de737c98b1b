package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing/fstest"
	"time"

	"github.com/bep/goat"
	"oss.terrastruct.com/d2/d2graph"
	"oss.terrastruct.com/d2/d2layouts/d2dagrelayout"
	"oss.terrastruct.com/d2/d2layouts/d2elklayout"
	"oss.terrastruct.com/d2/d2lib"
	"oss.terrastruct.com/d2/d2renderers/d2svg"
	d2log "oss.terrastruct.com/d2/lib/log"
	"oss.terrastruct.com/d2/lib/textmeasure"
)

// Figure languages: a fenced block whose info string starts with one of
// these is drawn as a figure (inline SVG) instead of shown as code.
const (
	// FigureD2 is D2 source (https://d2lang.com), laid out and drawn by
	// oss.terrastruct.com/d2: dagre layout by default, elk when the source
	// asks for it (vars: {d2-config: {layout-engine: elk}}); sequence
	// diagrams (shape: sequence_diagram) have their own layout.
	FigureD2 = "d2"
	// FigureGoat is ASCII art drawn by github.com/bep/goat (as Hugo
	// does): lines, arrows, boxes and text on a grid of 8 × 16 pixels.
	FigureGoat = "goat"
)

// IsFigure reports whether lang (a fenced block's language, lower case)
// is drawn as a figure.
func IsFigure(lang string) bool { return lang == FigureD2 || lang == FigureGoat }

// Figure is a drawn diagram, ready to be placed in a page.
type Figure struct {
	// SVG is one <svg> element without an XML declaration, <style>
	// element or style attribute (the site's Content-Security-Policy has
	// style-src 'self'): colours come from classes styled by FigureCSS, so
	// the figure follows the page's light or dark theme.
	SVG []byte
	// Text is the figure's labels in document order, whitespace
	// collapsed, for the search index.
	Text string
	// Width and Height are the drawing's natural size in CSS pixels.
	Width, Height int
}

// FigureError is a problem in a figure's source. Line is 1-based within
// the block's body (0 when the library did not say where).
type FigureError struct {
	Line int
	Msg  string
}

func (e *FigureError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// FigureErrors is every problem DrawFigure found in one source.
type FigureErrors []*FigureError

func (l FigureErrors) Error() string {
	var s []string
	for _, e := range l {
		s = append(s, e.Error())
	}
	return strings.Join(s, "; ")
}

// DrawFigure draws src, the body of a fenced block in language lang (one
// of FigureD2, FigureGoat). A source the library refuses gives a
// FigureErrors naming lines of src. The same source always gives the same
// Figure.
func DrawFigure(lang, src string) (*Figure, error) {
	return DrawFigureWithin(context.Background(), 0, nil, lang, src)
}

// DrawFigureWithin draws like DrawFigure, in a goroutine the caller can
// abandon: d2's layouts (dagre, elk) run JavaScript to the end and listen
// to no context, and dagre's time grows steeply with a diagram's
// connections (a chain of 20, 40 and 60 nodes with labelled edges between
// random pairs took 1.5, 9.2 and 38.4 s). When ctx is done first,
// DrawFigureWithin returns ctx.Err() at once; when budget (> 0) passes
// first, it returns FigureErrors naming the budget (Line 0: the block's
// fence) and suggesting a smaller diagram or the elk layout. An abandoned
// drawing runs on to its end in the background and its result is
// dropped. tick, when set, is called about once a second while the
// drawing runs, with the time it has taken.
func DrawFigureWithin(ctx context.Context, budget time.Duration, tick func(time.Duration), lang, src string) (*Figure, error) {
	var draw func(string) (*Figure, error)
	switch lang {
	case FigureD2:
		draw = drawD2
		// d2 drawings take turns (as when one lock guarded the text
		// ruler); an abandoned one gives its turn up with the caller.
		select {
		case d2turn <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		defer func() { <-d2turn }()
	case FigureGoat:
		draw = drawGoat
	default:
		return nil, fmt.Errorf("%q is not a figure language (d2, goat)", lang)
	}
	type result struct {
		fig *Figure
		err error
	}
	done := make(chan result, 1) // the drawing never blocks on an abandoned send
	go func() {
		fig, err := draw(src)
		done <- result{fig, err}
	}()
	var expire <-chan time.Time
	if budget > 0 {
		t := time.NewTimer(budget)
		defer t.Stop()
		expire = t.C
	}
	start := time.Now()
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	for {
		select {
		case r := <-done:
			return r.fig, r.err
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-expire:
			msg := fmt.Sprintf("drawing the figure took longer than its budget of %s ([bookgen] figure-timeout in book.toml)", budget)
			if lang == FigureD2 {
				msg += "; d2's default layout (dagre) grows steeply with the number of connections: split the diagram into smaller ones, or ask for the elk layout (vars: {d2-config: {layout-engine: elk}})"
			}
			return nil, FigureErrors{{Msg: msg}}
		case <-ticker.C:
			if tick != nil {
				tick(time.Since(start))
			}
		}
	}
}

// d2 state: the ruler measures text with the fonts d2 embeds (Source Sans
// Pro); it is costly to make and not safe for concurrent use, so each
// drawing takes one from d2rulers (or makes one) and gives it back when
// it ends. d2turn lets one drawing run at a time, but for those abandoned.
var (
	d2mu     sync.Mutex
	d2rulers []*textmeasure.Ruler
	d2turn   = make(chan struct{}, 1)
)

// takeRuler returns a free text ruler, made when none is free.
func takeRuler() (*textmeasure.Ruler, error) {
	d2mu.Lock()
	if n := len(d2rulers); n > 0 {
		r := d2rulers[n-1]
		d2rulers = d2rulers[:n-1]
		d2mu.Unlock()
		return r, nil
	}
	d2mu.Unlock()
	return textmeasure.NewRuler()
}

func giveRuler(r *textmeasure.Ruler) {
	d2mu.Lock()
	d2rulers = append(d2rulers, r)
	d2mu.Unlock()
}

// d2Pad is the margin around a d2 drawing, in pixels.
const d2Pad = 8

// d2StyleDot, d2StyleOpen and d2StyleInner find the colours a d2 source
// sets on a shape, a connection or a label: the keys fill, stroke and
// font-color, after "style." or inside a style block.
var (
	d2StyleDot   = regexp.MustCompile(`\bstyle\.(fill|stroke|font-color)\s*:\s*("[^"]*"|'[^']*'|[^\s;}]+)`)
	d2StyleOpen  = regexp.MustCompile(`\bstyle\s*:\s*\{`)
	d2StyleInner = regexp.MustCompile(`(?:^|[\s;{])(fill|stroke|font-color)\s*:\s*("[^"]*"|'[^']*'|[^\s;}]+)`)
)

// namedColours are the CSS colour names a figure may use (d2 accepts every
// CSS name; these are the ones mapColours knows the value of).
var namedColours = map[string]string{
	"black": "#000000", "white": "#ffffff", "gray": "#808080", "grey": "#808080",
	"lightgray": "#d3d3d3", "lightgrey": "#d3d3d3", "lightblue": "#add8e6", "lightgreen": "#90ee90",
	"pink": "#ffc0cb", "lavender": "#e6e6fa", "aliceblue": "#f0f8ff", "honeydew": "#f0fff0",
	"lightyellow": "#ffffe0", "moccasin": "#ffe4b5", "mistyrose": "#ffe4e1", "beige": "#f5f5dc",
}

// maxColourDistance is how far (Euclidean, in 8-bit RGB) a figure's
// literal colour may be from the palette entry it is drawn as.
const maxColourDistance = 64

// rgb parses #rgb, #rrggbb or a name of namedColours.
func rgb(c string) ([3]int, bool) {
	c = strings.ToLower(strings.TrimSpace(c))
	if v, ok := namedColours[c]; ok {
		c = v
	}
	if !strings.HasPrefix(c, "#") {
		return [3]int{}, false
	}
	h := c[1:]
	if len(h) == 3 {
		h = string([]byte{h[0], h[0], h[1], h[1], h[2], h[2]})
	}
	if len(h) != 6 {
		return [3]int{}, false
	}
	var out [3]int
	for i := range 3 {
		v, err := strconv.ParseUint(h[2*i:2*i+2], 16, 8)
		if err != nil {
			return [3]int{}, false
		}
		out[i] = int(v)
	}
	return out, true
}

// nearestColour returns the palette entry whose light value is nearest
// to the literal colour c, and its distance; ok is false when c is not a
// colour rgb parses.
func nearestColour(p figurePalette, c string) (key string, dist float64, ok bool) {
	want, ok := rgb(c)
	if !ok {
		return "", 0, false
	}
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	dist = math.Inf(1)
	for _, k := range keys {
		have, _ := rgb(p[k][0])
		d := math.Sqrt(float64((want[0]-have[0])*(want[0]-have[0]) + (want[1]-have[1])*(want[1]-have[1]) + (want[2]-have[2])*(want[2]-have[2])))
		if d < dist {
			key, dist = k, d
		}
	}
	return key, dist, true
}

// literalColours returns an error, at its line of src, for every colour a
// d2 figure sets that the site cannot draw in both themes: a fixed colour
// stays as it is in the dark theme while the text on it turns light, so
// each literal colour is drawn as the nearest entry of the site's figure
// palette (which has a light and a dark value; mapColours), and one that no
// entry is near, or a name whose value bookgen does not know, is refused.
func literalColours(src string) FigureErrors {
	p := palette()
	var out FigureErrors
	check := func(line int, key, val string) {
		v := strings.Trim(val, `"'`)
		if strings.EqualFold(v, "transparent") || strings.EqualFold(v, "none") {
			return
		}
		k, d, ok := nearestColour(p, v)
		switch {
		case !ok:
			out = append(out, &FigureError{Line: line, Msg: fmt.Sprintf("style.%s %q: write the colour as #rrggbb (or one of bookgen's colour names), so that it can be drawn in the light and the dark theme", key, v)})
		case d > maxColourDistance:
			out = append(out, &FigureError{Line: line, Msg: fmt.Sprintf("style.%s %q is far from every colour of the site's figure palette (nearest: %s, %s); a fixed colour would stay as it is in the dark theme while the text on it turns light: pick a colour near one of the palette's", key, v, k, p[k][0])})
		}
	}
	depth := 0 // braces open inside a style block
	for i, l := range strings.Split(src, "\n") {
		if depth > 0 {
			for _, m := range d2StyleInner.FindAllStringSubmatch(l, -1) {
				check(i+1, m[1], m[2])
			}
			depth = max(0, depth+strings.Count(l, "{")-strings.Count(l, "}"))
			continue
		}
		for _, m := range d2StyleDot.FindAllStringSubmatch(l, -1) {
			check(i+1, m[1], m[2])
		}
		if loc := d2StyleOpen.FindStringIndex(l); loc != nil {
			block := l[loc[1]:]
			for _, m := range d2StyleInner.FindAllStringSubmatch(block, -1) {
				check(i+1, m[1], m[2])
			}
			depth = max(0, 1+strings.Count(block, "{")-strings.Count(block, "}"))
		}
	}
	return out
}

var (
	svgPaint = regexp.MustCompile(`\s(fill|stroke)="(#[0-9A-Fa-f]{3,6}|[a-z]+)"`)
	svgClass = regexp.MustCompile(`\sclass="([^"]*)"`)
	svgMask  = regexp.MustCompile(`(?s)<mask\b.*?</mask>`)
)

// mapColours gives every literal fill and stroke of a d2 drawing that no
// theme class colours (d2 writes fill="#dbe7fb" class=" stroke-B1" for a
// shape whose style.fill is #dbe7fb) the class of the nearest palette
// entry, so that FigureCSS draws it in the page's theme. Masks keep their
// colours (white and black there mean shown and hidden).
func mapColours(svg []byte) []byte {
	p := palette()
	masks := svgMask.FindAllIndex(svg, -1)
	inMask := func(at int) bool {
		for _, m := range masks {
			if at >= m[0] && at < m[1] {
				return true
			}
		}
		return false
	}
	var b bytes.Buffer
	last := 0
	for _, t := range tagRe.FindAllIndex(svg, -1) {
		tag := svg[t[0]:t[1]]
		if inMask(t[0]) {
			continue
		}
		class := ""
		cm := svgClass.FindSubmatchIndex(tag)
		if cm != nil {
			class = string(tag[cm[2]:cm[3]])
		}
		var add []string
		for _, m := range svgPaint.FindAllSubmatch(tag, -1) {
			prop, val := string(m[1]), string(m[2])
			if val == "none" || val == "transparent" || strings.Contains(" "+class, " "+prop+"-") {
				continue
			}
			if k, _, ok := nearestColour(p, val); ok {
				add = append(add, prop+"-"+k)
			}
		}
		if len(add) == 0 {
			continue
		}
		b.Write(svg[last:t[0]])
		if cm != nil {
			b.Write(tag[:cm[2]])
			b.WriteString(strings.Join(add, " ") + " ")
			b.Write(tag[cm[2]:])
		} else {
			end := len(tag) - 1
			if bytes.HasSuffix(tag, []byte("/>")) {
				end--
			}
			b.Write(tag[:end])
			b.WriteString(` class="` + strings.Join(add, " ") + `"`)
			b.Write(tag[end:])
		}
		last = t[1]
	}
	b.Write(svg[last:])
	return b.Bytes()
}

func drawD2(src string) (fig *Figure, err error) {
	if errs := literalColours(src); len(errs) > 0 {
		return nil, errs
	}
	d2ruler, err := takeRuler()
	if err != nil {
		return nil, fmt.Errorf("d2: text ruler: %w", err)
	}
	defer giveRuler(d2ruler)
	// d2's layouts run JavaScript (dagre, elk) in goja; a panic there is a
	// bad diagram, not a crash of bookgen.
	defer func() {
		if p := recover(); p != nil {
			fig, err = nil, FigureErrors{{Msg: fmt.Sprintf("d2 failed to lay the diagram out: %v", p)}}
		}
	}()
	ctx := d2log.With(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	pad := int64(d2Pad)
	noXML := true
	omit := true
	themeID := int64(0)
	ropts := &d2svg.RenderOpts{Pad: &pad, NoXMLTag: &noXML, OmitVersion: &omit, ThemeID: &themeID}
	diagram, _, err := d2lib.Compile(ctx, src, &d2lib.CompileOptions{
		Ruler: d2ruler,
		// No imports: a figure is the text of its block.
		FS: fstest.MapFS{},
		LayoutResolver: func(engine string) (d2graph.LayoutGraph, error) {
			switch engine {
			case "", "dagre":
				return d2dagrelayout.DefaultLayout, nil
			case "elk":
				return d2elklayout.DefaultLayout, nil
			}
			return nil, fmt.Errorf("layout engine %q is not available (dagre, elk)", engine)
		},
	}, ropts)
	if err != nil {
		return nil, d2Errors(err)
	}
	svg, err := d2svg.Render(diagram, ropts)
	if err != nil {
		return nil, FigureErrors{{Msg: "d2: " + err.Error()}}
	}
	out, err := cleanSVG(svg)
	if err != nil {
		return nil, FigureErrors{{Msg: "d2: " + err.Error()}}
	}
	out = mapColours(out)
	w, h := svgSize(out)
	out = sizeOuter(out, w, h)
	return &Figure{SVG: out, Text: svgText(out), Width: w, Height: h}, nil
}

// d2Pos matches the position d2 puts before each message: "3:7: ".
var d2Pos = regexp.MustCompile(`^(?:[^\s:]*:)?(\d+):(\d+): (.*)$`)

// d2Errors turns d2's error (one "line:col: message" per line) into
// FigureErrors.
func d2Errors(err error) FigureErrors {
	var out FigureErrors
	for _, l := range strings.Split(strings.TrimSpace(err.Error()), "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if m := d2Pos.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			out = append(out, &FigureError{Line: n, Msg: m[3]})
			continue
		}
		out = append(out, &FigureError{Msg: l})
	}
	if len(out) == 0 {
		out = FigureErrors{{Msg: err.Error()}}
	}
	return out
}

// goat draws on a grid of cells 8 pixels wide and 16 high.
const goatCellW = 8

func drawGoat(src string) (*Figure, error) {
	if strings.TrimSpace(src) == "" {
		return nil, FigureErrors{{Msg: "goat figure is empty"}}
	}
	for i, l := range strings.Split(src, "\n") {
		if strings.ContainsRune(l, '\t') {
			return nil, FigureErrors{{Line: i + 1, Msg: "goat figure has a tab; use spaces (a tab has no width on goat's grid)"}}
		}
	}
	var buf bytes.Buffer
	var perr error
	func() {
		defer func() {
			if p := recover(); p != nil {
				perr = FigureErrors{{Msg: fmt.Sprintf("goat failed to draw the figure: %v", p)}}
			}
		}()
		goat.BuildAndWriteSVG(strings.NewReader(src), &buf)
	}()
	if perr != nil {
		return nil, perr
	}
	svg := buf.Bytes()
	// Open circles are filled with white; give them a class so that the
	// page's background shows through in both themes.
	svg = bytes.ReplaceAll(svg, []byte(`fill='#fff'`), []byte(`fill='#fff' class='goat-hollow'`))
	svg = mergeGoatText(svg)
	out, err := cleanSVG(svg)
	if err != nil {
		return nil, FigureErrors{{Msg: "goat: " + err.Error()}}
	}
	w, h := goatSize(out)
	out = bytes.Replace(out, []byte("<svg "), []byte(fmt.Sprintf(`<svg viewBox="0 0 %d %d" `, w, h)), 1)
	return &Figure{SVG: out, Text: svgText(out), Width: w, Height: h}, nil
}

var goatDims = regexp.MustCompile(`height='(\d+)' width='(\d+)'`)

func goatSize(svg []byte) (int, int) {
	m := goatDims.FindSubmatch(svg)
	if m == nil {
		return 0, 0
	}
	h, _ := strconv.Atoi(string(m[1]))
	w, _ := strconv.Atoi(string(m[2]))
	return w, h
}

// goatChar is one character goat draws as text: a <text> element per
// grid cell, centred on it.
var goatChar = regexp.MustCompile(`<text text-anchor='middle' x='(-?\d+)' y='(-?\d+)' fill='currentColor' style='font-size:1em'>([^<]*)</text>\n?`)

// mergeGoatText joins the characters goat draws one by one into one <text>
// element per run of a row (characters separated by at most one blank
// cell), so that a reader can select a label and the browser's find
// matches its words. textLength keeps each run on goat's grid whatever the
// monospace font's advance.
func mergeGoatText(svg []byte) []byte {
	type ch struct {
		x, y int
		s    string
	}
	var chars []ch
	const mark = "\x00goat-text\x00"
	out := goatChar.ReplaceAllFunc(svg, func(m []byte) []byte {
		sm := goatChar.FindSubmatch(m)
		x, _ := strconv.Atoi(string(sm[1]))
		y, _ := strconv.Atoi(string(sm[2]))
		chars = append(chars, ch{x, y, string(sm[3])})
		if len(chars) == 1 {
			return []byte(mark) // the runs go where goat put its text
		}
		return nil
	})
	if len(chars) == 0 {
		return svg
	}
	// goat writes text in reading order (row by row, left to right); sort
	// anyway so that the runs do not depend on it.
	sortChars := func(a, b ch) bool { return a.y < b.y || a.y == b.y && a.x < b.x }
	for i := 1; i < len(chars); i++ {
		for j := i; j > 0 && sortChars(chars[j], chars[j-1]); j-- {
			chars[j], chars[j-1] = chars[j-1], chars[j]
		}
	}
	var b bytes.Buffer
	flush := func(run []ch) {
		if len(run) == 0 {
			return
		}
		var s strings.Builder
		for i, c := range run {
			if i > 0 {
				gap := (c.x-run[i-1].x)/goatCellW - 1
				s.WriteString(strings.Repeat(" ", gap))
			}
			s.WriteString(c.s)
		}
		cells := (run[len(run)-1].x-run[0].x)/goatCellW + 1
		x0 := run[0].x - goatCellW/2
		fmt.Fprintf(&b, "<text class='goat-text' x='%d' y='%d' textLength='%d' lengthAdjust='spacingAndGlyphs' xml:space='preserve'>%s</text>\n", x0, run[0].y, cells*goatCellW, s.String())
	}
	var run []ch
	for _, c := range chars {
		if len(run) > 0 {
			last := run[len(run)-1]
			if c.y != last.y || c.x-last.x > 2*goatCellW {
				flush(run)
				run = nil
			}
		}
		run = append(run, c)
	}
	flush(run)
	return bytes.Replace(out, []byte(mark), b.Bytes(), 1)
}

var (
	styleElem = regexp.MustCompile(`(?s)<style[^>]*>.*?</style>`)
	xmlDecl   = regexp.MustCompile(`^\s*<\?xml[^>]*\?>\s*`)
	tagRe     = regexp.MustCompile(`<[A-Za-z][^<>]*>`)
	styleAttr = regexp.MustCompile(`\sstyle=("[^"]*"|'[^']*')`)
	// remoteRef is an image or other resource the browser would fetch
	// (links, <a href>, are not fetched and stay).
	remoteRef = regexp.MustCompile(`<image[^>]*\shref="(?:https?:)?//[^"]*"|url\((?:["']?)(?:https?:)?//[^)]*\)`)
)

// presentation lists the CSS properties that SVG also accepts as
// presentation attributes (SVG 2, section 6.6): a style attribute made of
// them becomes attributes, which no Content-Security-Policy governs.
var presentation = map[string]bool{
	"fill": true, "fill-opacity": true, "fill-rule": true, "stroke": true, "stroke-width": true,
	"stroke-dasharray": true, "stroke-dashoffset": true, "stroke-linecap": true, "stroke-linejoin": true,
	"stroke-opacity": true, "stroke-miterlimit": true, "opacity": true, "text-anchor": true,
	"font-size": true, "font-family": true, "font-weight": true, "font-style": true,
	"text-decoration": true, "dominant-baseline": true, "alignment-baseline": true,
	"mix-blend-mode": true, "display": true, "visibility": true, "letter-spacing": true,
	"word-spacing": true, "white-space": true, "color": true, "transform": true,
}

// cleanSVG makes a library's SVG fit an HTML page under the site's
// Content-Security-Policy (style-src 'self'): no XML declaration, no
// <style> element, and each style attribute turned into presentation
// attributes. A style property that has no presentation attribute (d2's
// Markdown labels set some) is an error, so that no figure loses its look
// only in the browser.
func cleanSVG(svg []byte) ([]byte, error) {
	svg = xmlDecl.ReplaceAll(svg, nil)
	svg = styleElem.ReplaceAll(svg, nil)
	var bad error
	svg = tagRe.ReplaceAllFunc(svg, func(tag []byte) []byte {
		return styleAttr.ReplaceAllFunc(tag, func(attr []byte) []byte {
			m := styleAttr.FindSubmatch(attr)
			v := html.UnescapeString(string(m[1][1 : len(m[1])-1]))
			var b strings.Builder
			for _, decl := range strings.Split(v, ";") {
				prop, val, ok := strings.Cut(decl, ":")
				prop, val = strings.TrimSpace(strings.ToLower(prop)), strings.TrimSpace(val)
				if !ok || prop == "" {
					continue
				}
				if !presentation[prop] {
					if bad == nil {
						bad = fmt.Errorf("the drawing sets the style %q, which the site's Content-Security-Policy (style-src 'self') would block and which has no SVG attribute; use a plainer label or shape", prop+":"+val)
					}
					continue
				}
				if prop == "font-size" {
					val = strings.TrimSuffix(val, "px")
				}
				fmt.Fprintf(&b, ` %s="%s"`, prop, html.EscapeString(val))
			}
			return []byte(b.String())
		})
	})
	if bad != nil {
		return nil, bad
	}
	if m := remoteRef.Find(svg); m != nil {
		return nil, fmt.Errorf("the drawing loads %s from another site (an icon or image?); a page of the book requests nothing from other hosts", m)
	}
	if bytes.Contains(svg, []byte("<script")) || bytes.Contains(svg, []byte("<foreignObject")) {
		return nil, errors.New("the drawing holds HTML (a Markdown, LaTeX or code label?), which the page cannot show as SVG text; use a plain label")
	}
	return bytes.TrimSpace(svg), nil
}

var viewBox = regexp.MustCompile(`viewBox="(-?[\d.]+) (-?[\d.]+) ([\d.]+) ([\d.]+)"`)

// svgSize reads the size of the outer <svg> from its viewBox.
func svgSize(svg []byte) (int, int) {
	m := viewBox.FindSubmatch(svg)
	if m == nil {
		return 0, 0
	}
	w, _ := strconv.ParseFloat(string(m[3]), 64)
	h, _ := strconv.ParseFloat(string(m[4]), 64)
	return int(w + 0.5), int(h + 0.5)
}

// sizeOuter gives d2's outer <svg> (which has only a viewBox) its natural
// width and height, so that a small figure is not blown up to the column's
// width; CSS lets it shrink on a narrow screen (see FigureCSS).
func sizeOuter(svg []byte, w, h int) []byte {
	return bytes.Replace(svg, []byte("<svg "), []byte(fmt.Sprintf(`<svg width="%d" height="%d" `, w, h)), 1)
}

var (
	textElem = regexp.MustCompile(`(?s)<text[^>]*>(.*?)</text>`)
	anyTag   = regexp.MustCompile(`<[^>]*>`)
)

// svgText returns the text of svg's <text> elements, for search.
func svgText(svg []byte) string {
	var parts []string
	for _, m := range textElem.FindAllSubmatch(svg, -1) {
		t := html.UnescapeString(string(anyTag.ReplaceAll(m[1], []byte(" "))))
		if t = strings.Join(strings.Fields(t), " "); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, " ")
}
