package render

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"oss.terrastruct.com/d2/d2themes/d2themescatalog"
)

// FigureFonts names the vendored folder (theme/vendor/<FigureFonts>/, on
// the site assets/vendor/<FigureFonts>/) that holds the fonts d2 measures
// labels with; FigureCSS refers to it.
const FigureFonts = "source-sans-pro-2.045"

// figurePalette maps d2's colour classes (fill-N1, stroke-B2, ...) to a
// light and a dark colour. Light is d2's default theme ("Neutral
// default", id 0), which every d2 user knows; dark follows the site's dark
// theme (GitHub dark: its background, text and blue), because d2's own
// dark themes have other backgrounds. Both keep text at WCAG AA contrast
// (4.5:1) on every fill d2 puts text on: TestFigureContrast checks them.
type figurePalette map[string][2]string

func palette() figurePalette {
	c := d2themescatalog.NeutralDefault.Colors
	light := map[string]string{
		"N1": c.Neutrals.N1, "N2": c.Neutrals.N2, "N3": c.Neutrals.N3, "N4": c.Neutrals.N4,
		"N5": c.Neutrals.N5, "N6": c.Neutrals.N6, "N7": c.Neutrals.N7,
		"B1": c.B1, "B2": c.B2, "B3": c.B3, "B4": c.B4, "B5": c.B5, "B6": c.B6,
		"AA2": c.AA2, "AA4": c.AA4, "AA5": c.AA5, "AB4": c.AB4, "AB5": c.AB5,
		// fills a figure gives as literal colours are mapped onto the
		// nearest entry (mapColours): pale hues d2's theme lacks
		"OR4": "#fbe3c2", "GR4": "#d3f0d8", "RD4": "#fbd5d5", "YE4": "#fbf1c2", "PU4": "#e6dbfb",
	}
	// d2's N2 (#676c7e), the colour of edge labels, reaches only 4.0:1
	// on N5 and 4.3:1 on B3/B4, the fills of the containers and spans
	// those labels cross; a darker grey of the same hue keeps 4.5:1.
	light["N2"] = "#555a6a"
	dark := map[string]string{
		// neutrals: text, muted text, ..., background
		"N1": "#e6edf3", "N2": "#b1bac4", "N3": "#8b949e", "N4": "#484f58",
		"N5": "#30363d", "N6": "#161b22", "N7": "#0d1117",
		// B1/B2 strokes and arrows, B3..B6 shape fills from strong to faint
		"B1": "#79c0ff", "B2": "#58a6ff", "B3": "#1f3b63", "B4": "#1a2f4d", "B5": "#132339", "B6": "#0f1b2b",
		// accents
		"AA2": "#d2a8ff", "AA4": "#2b2245", "AA5": "#211a36", "AB4": "#12343b", "AB5": "#0e2a30",
		// the pale hues, deep
		"OR4": "#3b2a14", "GR4": "#163a22", "RD4": "#431c1f", "YE4": "#3a3312", "PU4": "#2e2245",
	}
	p := figurePalette{}
	for k, v := range light {
		p[k] = [2]string{strings.ToLower(v), dark[k]}
	}
	return p
}

var (
	figCSSOnce sync.Once
	figCSS     []byte
)

// FigureCSS returns the stylesheet of figures: d2's colour classes bound to
// custom properties (--fig-N1 ...) whose values change with the page's theme
// ([data-theme=dark], or prefers-color-scheme: dark when the page sets no
// theme), the fonts d2 measured the labels with, goat's text, and a figure's
// box: at most the column's width, scaled down on a narrow screen only as
// far as its smallest label stays FigureTextMin pixels, beyond which its box
// scrolls sideways and a cue under it says so; on paper, the page's width.
// The result is the same on every call.
func FigureCSS() []byte {
	figCSSOnce.Do(func() {
		p := palette()
		names := make([]string, 0, len(p))
		for k := range p {
			names = append(names, k)
		}
		sort.Strings(names)
		var b strings.Builder
		b.WriteString("/* Figures: d2 and goat blocks drawn by bookgen (internal/render/figurecss.go). */\n")
		fonts := "vendor/" + FigureFonts + "/SourceSansPro-"
		for _, f := range [][3]string{{"Regular", "normal", "400"}, {"Italic", "italic", "400"}, {"Bold", "normal", "700"}} {
			fmt.Fprintf(&b, "@font-face { font-family: \"bookgen d2 sans\"; src: url(%s%s.ttf) format(\"truetype\"); font-style: %s; font-weight: %s; font-display: swap; }\n", fonts, f[0], f[1], f[2])
		}
		vars := func(i int) string {
			var v strings.Builder
			for _, k := range names {
				fmt.Fprintf(&v, " --fig-%s: %s;", k, p[k][i])
			}
			return v.String()
		}
		fmt.Fprintf(&b, ":root {%s }\n", vars(0))
		fmt.Fprintf(&b, "@media (prefers-color-scheme: dark) { :root:not([data-theme=light]) {%s } }\n", vars(1))
		fmt.Fprintf(&b, "[data-theme=dark] {%s }\n", vars(1))
		for _, k := range names {
			fmt.Fprintf(&b, ".figure .fill-%s { fill: var(--fig-%s); }\n", k, k)
			fmt.Fprintf(&b, ".figure .stroke-%s { stroke: var(--fig-%s); }\n", k, k)
			fmt.Fprintf(&b, ".figure .color-%s { color: var(--fig-%s); }\n", k, k)
		}
		b.WriteString(`.figure { margin: 0 0 1.15em; max-width: 100%; text-align: center; container: figure / inline-size; }
.figure-box { max-width: 100%; overflow-x: auto; }
.figure-box > svg { display: inline-block; max-width: 100%; height: auto; vertical-align: top; }
@media screen and (min-width: 900px) { .chapter .figure { max-width: none; margin-left: -2rem; margin-right: -2rem; } }
.figure-cue { display: none; margin-bottom: 0.3em; color: var(--muted); font-size: 0.8125rem; text-align: right; }
.figure-cue::before { content: "scroll sideways for the whole figure \2192"; }
.figure figcaption { margin-top: 0.4em; color: var(--muted); font-size: 0.9rem; text-align: center; }
.figure-d2 svg text { font-family: "bookgen d2 sans", var(--font-body); }
.figure-d2 .text-bold { font-weight: 700; }
.figure-d2 .text-italic { font-style: italic; }
.figure-d2 .text-mono, .figure-d2 .text-mono-bold, .figure-d2 .text-mono-italic { font-family: var(--font-mono); }
.figure-d2 .shape { shape-rendering: geometricPrecision; stroke-linejoin: round; }
.figure-d2 .connection { stroke-linecap: round; stroke-linejoin: round; }
.figure-d2 .blend { mix-blend-mode: multiply; opacity: 0.5; }
.figure-goat { color: var(--fg); }
.figure-goat svg { font-family: var(--font-mono); font-size: 14px; }
.figure-goat .goat-text { fill: currentColor; white-space: pre; }
.figure-goat .goat-hollow { fill: var(--bg); }
`)
		// A wide figure is scaled down only as far as its labels stay
		// FigureTextMin pixels (minWidthClass); below that its box
		// scrolls and the cue under it says so. Each figure is a
		// container, so the cue knows its own box's width. On paper
		// a figure is scaled to the page's width.
		for n := figMinFrom; n <= figMinTo; n += figMinStep {
			fmt.Fprintf(&b, ".figure.fig-min-%d svg { min-width: %dpx; }\n", n, n)
			fmt.Fprintf(&b, "@container figure (width < %dpx) { .fig-min-%d .figure-cue { display: block; } }\n", n, n)
		}
		b.WriteString(`@media print {
  .figure .figure-box > svg { min-width: 0 !important; }
  .figure .figure-cue { display: none !important; }
}
`)
		figCSS = []byte(b.String())
	})
	return figCSS
}

// FigureTextMin is the smallest size, in CSS pixels, a figure's labels
// are drawn at on a screen: a figure narrower than the column is scaled
// down only as far as its smallest label stays this large (about the
// 11px that is the floor of legible body text on a phone), and its box
// scrolls sideways beyond that.
const FigureTextMin = 11

// goatTextSize is the size of goat's text, in pixels (FigureCSS's
// .figure-goat svg font-size).
const goatTextSize = 14

var svgFontSize = regexp.MustCompile(`font-size="([\d.]+)"`)

// labelSize returns the size, in the drawing's pixels, of the smallest
// label of a figure in language lang: the least font-size d2 gave a text,
// goatTextSize for goat, 16 (d2's default) when the drawing names none.
func labelSize(lang string, svg []byte) float64 {
	if lang == FigureGoat {
		return goatTextSize
	}
	least := 0.0
	for _, m := range svgFontSize.FindAllSubmatch(svg, -1) {
		if v, err := strconv.ParseFloat(string(m[1]), 64); err == nil && v > 0 && (least == 0 || v < least) {
			least = v
		}
	}
	if least == 0 {
		return 16
	}
	return least
}

// Figure widths classes are made for: fig-min-N for N from
// figMinFrom to figMinTo in steps of figMinStep pixels.
const (
	figMinFrom = 100
	figMinTo   = 2000
	figMinStep = 20
)

// minWidthClass returns the class giving a figure of natural width w
// (pixels) whose smallest label is font pixels its smallest width on a
// screen: w scaled so that the label stays FigureTextMin pixels, rounded
// up to figMinStep ("fig-min-560"), never above w (a figure with labels
// under FigureTextMin is not scaled), "" for a figure narrower than
// figMinFrom, which fits a phone as it is.
func minWidthClass(w int, font float64) string {
	if w < figMinFrom || font <= 0 {
		return ""
	}
	least := int(math.Ceil(float64(w)*FigureTextMin/font/figMinStep)) * figMinStep
	if least > w {
		least = w / figMinStep * figMinStep
	}
	least = max(figMinFrom, min(least, figMinTo))
	return fmt.Sprintf("fig-min-%d", least)
}
