package browser

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// figureChapter is added to a copy of the fixture book: a d2 sequence
// diagram, a d2 graph wider than a phone and a goat drawing.
const figureChapter = `

## Figures

` + "```d2 caption=\"A takeover, drawn by d2\"" + `
shape: sequence_diagram
A; stream; B
A -> stream: append epoch 1 seq 0
stream -> A: 200 appended
B -> stream: claim epoch 2
stream -> B: 200 claimed
A -> stream: append epoch 1 seq 1
stream -> A: 403 stale epoch
` + "```" + `

` + "```d2" + `
direction: right
Unowned -> Owned: Acquire
Owned -> Transferring: BeginTransfer
Transferring -> Owned: Complete
Transferring -> Owned: Abort
Owned -> Unowned: Release
Owned -> Unowned: Revoke
Transferring -> Unowned: Revoke
` + "```" + `

` + "```goat" + `
  +---------+   epoch 7    +---------+
  | owner A +------------->| storage |
  +---------+              +---------+
` + "```" + `
`

// figureJS measures the figures of the page under the current theme:
// the colours of a d2 label, of the shape behind it, of an edge label and
// of the drawing's background, and the colour goat's lines are drawn in.
// Each pair's contrast ratio is computed as WCAG 2.1 defines it.
const figureJS = `(function () {
	function rgb(s) { var m = s.match(/[\d.]+/g); return m ? m.slice(0, 3).map(Number) : [0, 0, 0]; }
	function lum(c) { c = rgb(c).map(function (v) { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }); return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]; }
	function ratio(a, b) { var x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); }
	var f = document.querySelector(".figure-d2");
	var texts = Array.prototype.slice.call(f.querySelectorAll("text"));
	var actor = texts.filter(function (t) { return t.textContent === "stream"; })[0];
	var edge = texts.filter(function (t) { return t.textContent === "403 stale epoch"; })[0];
	var shape = actor.parentNode.querySelector(".shape rect");
	var bg = f.querySelector("svg svg > rect");
	var goat = document.querySelector(".figure-goat path");
	var goatText = document.querySelector(".figure-goat text");
	var page = getComputedStyle(document.body).backgroundColor;
	var r = {
		label: getComputedStyle(actor).fill, shape: getComputedStyle(shape).fill,
		edge: getComputedStyle(edge).fill, bg: getComputedStyle(bg).fill,
		goat: getComputedStyle(goat).stroke, goatText: getComputedStyle(goatText).fill, page: page,
		font: getComputedStyle(actor).fontFamily
	};
	r.labelContrast = ratio(r.label, r.shape);
	r.edgeContrast = ratio(r.edge, r.bg);
	r.goatContrast = ratio(r.goat, page);
	r.goatTextContrast = ratio(r.goatText, page);
	return JSON.stringify(r);
})()`

type figureColours struct {
	Label, Shape, Edge, Bg, Goat, GoatText, Page, Font          string
	LabelContrast, EdgeContrast, GoatContrast, GoatTextContrast float64
}

// TestFigures reads figures drawn by bookgen in Chromium, served with
// netlify.toml's Content-Security-Policy: in the light and the dark theme
// (the system's, and the one the reader picks) their colours change and
// keep text at WCAG AA contrast (4.5:1); their labels are SVG text a reader
// can select and the browser's find can match, and they are in the search
// index; on a phone no figure runs off the screen (it is scaled down, its
// labels kept at 11px or more, or its box scrolls, with a cue shown above
// it exactly when it does); print.html keeps their masks and arrowheads; and no
// CSP violation is reported. Screenshots:
// figure-light.png, figure-dark.png, figure-mobile.png.
func TestFigures(t *testing.T) {
	bctx := newBrowser(t)
	root := fixture(t)
	ch := filepath.Join(root, "book", "streams.md")
	old, err := os.ReadFile(ch)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, ch, string(old)+figureChapter)
	site := buildSite(t, root)
	srv := serveSite(t, site)
	url := srv.URL + "/streams.html"
	tb := newTab(t, bctx)

	measure := func(where string) figureColours {
		t.Helper()
		var c figureColours
		s := eval[string](tb, figureJS)
		if err := json.Unmarshal([]byte(s), &c); err != nil {
			t.Fatalf("%s: %v (%s)", where, err, s)
		}
		for name, v := range map[string]float64{"d2 label on its shape": c.LabelContrast, "d2 edge label on the background": c.EdgeContrast, "goat line on the page": c.GoatContrast, "goat text on the page": c.GoatTextContrast} {
			if v < 4.5 {
				t.Errorf("%s: %s: contrast %.2f:1, want at least 4.5:1 (%+v)", where, name, v, c)
			}
		}
		if c.Bg != c.Page && where != "" {
			t.Errorf("%s: the d2 drawing's background %s differs from the page's %s", where, c.Bg, c.Page)
		}
		if !strings.Contains(c.Font, "bookgen d2 sans") {
			t.Errorf("%s: d2 labels use %q, not the font d2 measured them with", where, c.Font)
		}
		return c
	}
	show := func() {
		tb.do(chromedp.Evaluate[chromedp.Void](`document.querySelector(".figure-d2").scrollIntoView({block: "start"})`))
		tb.waitTrue("fonts loaded", `document.fonts.status === "loaded"`, 15*time.Second)
	}

	t.Run("themes", func(t *testing.T) {
		tb.t = t
		prefersDark(tb, false)
		tb.navigate(url)
		show()
		light := measure("light")
		if light.Page != lightBG {
			t.Errorf("light page background %s, want %s", light.Page, lightBG)
		}
		tb.screenshot("figure-light.png")
		prefersDark(tb, true)
		dark := measure("dark (system)")
		if dark.Page != darkBG {
			t.Errorf("dark page background %s, want %s", dark.Page, darkBG)
		}
		for _, p := range [][3]string{{"d2 label", light.Label, dark.Label}, {"d2 shape", light.Shape, dark.Shape}, {"d2 background", light.Bg, dark.Bg}, {"goat line", light.Goat, dark.Goat}} {
			if p[1] == p[2] {
				t.Errorf("%s is %s in both themes", p[0], p[1])
			}
		}
		tb.screenshot("figure-dark.png")
		// The reader's choice wins over the system's.
		prefersDark(tb, false)
		tb.do(chromedp.Evaluate[chromedp.Void](`document.documentElement.setAttribute("data-theme", "dark")`))
		if picked := measure("dark (picked)"); picked.Label != dark.Label || picked.Bg != dark.Bg {
			t.Errorf("data-theme=dark under a light system: label %s on %s, want %s on %s", picked.Label, picked.Bg, dark.Label, dark.Bg)
		}
		tb.do(chromedp.Evaluate[chromedp.Void](`document.documentElement.setAttribute("data-theme", "light")`))
		prefersDark(tb, true)
		if picked := measure("light (picked)"); picked.Label != light.Label {
			t.Errorf("data-theme=light under a dark system: label %s, want %s", picked.Label, light.Label)
		}
		tb.noConsoleErrors("figures")
	})

	t.Run("text", func(t *testing.T) {
		tb.t = t
		prefersDark(tb, false)
		tb.navigate(url)
		sel := eval[string](tb, `(function () {
			var t = Array.prototype.filter.call(document.querySelectorAll(".figure-d2 text"), function (e) { return e.textContent === "403 stale epoch"; })[0];
			var r = document.createRange(); r.selectNodeContents(t);
			var s = getSelection(); s.removeAllRanges(); s.addRange(r);
			return s.toString();
		})()`)
		if sel != "403 stale epoch" {
			t.Errorf("selecting a d2 label gives %q", sel)
		}
		for _, q := range []string{"stale epoch", "BeginTransfer", "owner A", "epoch 7"} {
			if !eval[bool](tb, `(getSelection().removeAllRanges(), window.find(`+jsString(q)+`))`) {
				t.Errorf("the browser's find does not match %q in a figure", q)
			}
		}
		if got := eval[string](tb, `document.querySelector(".figure-d2 figcaption").textContent`); got != "A takeover, drawn by d2" {
			t.Errorf("caption %q", got)
		}
		idx, err := filepath.Glob(filepath.Join(site, "assets", "search.*.json"))
		if err != nil || len(idx) != 1 {
			t.Fatalf("search index: %v %v", idx, err)
		}
		data, err := os.ReadFile(idx[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"403 stale epoch", "BeginTransfer", "owner A"} {
			if !strings.Contains(string(data), q) {
				t.Errorf("search index lacks the figure text %q", q)
			}
		}
		if strings.Contains(string(data), "sequence_diagram") {
			t.Error("search index holds d2 source (sequence_diagram), not only the figure's text")
		}
	})

	t.Run("print", func(t *testing.T) {
		tb.t = t
		tb.navigate(srv.URL + "/print.html")
		// print.html prefixes every id of a chapter; a figure's masks and
		// arrowheads must still find theirs.
		missing := eval[string](tb, `(function () {
			var out = [], n = 0;
			document.querySelectorAll(".figure [mask], .figure [marker-end], .figure [marker-start]").forEach(function (e) {
				["mask", "marker-end", "marker-start"].forEach(function (a) {
					var v = e.getAttribute(a), m = v && v.match(/^url\(#(.*)\)$/);
					if (m) { n++; if (!document.getElementById(m[1])) { out.push(v); } }
				});
			});
			return n === 0 ? "no references" : out.join(" ");
		})()`)
		if missing != "" {
			t.Errorf("print.html: figure references without their element: %s", missing)
		}
		tb.noConsoleErrors("print.html")
	})

	t.Run("phone", func(t *testing.T) {
		tb.t = t
		tb.do(chromedp.EmulateViewport(360, 780, chromedp.EmulateMobile, chromedp.EmulateScale(2)))
		defer tb.do(chromedp.EmulateViewport(1280, 900))
		tb.navigate(url)
		show()
		if w := eval[float64](tb, `document.documentElement.scrollWidth - innerWidth`); w > 0 {
			t.Errorf("the page is %vpx wider than a 360px screen", w)
		}
		type box struct {
			Left, Right, SVG, Client, Scroll, Natural float64
			Overflow                                  string
			Cue                                       bool
		}
		s := eval[string](tb, `JSON.stringify(Array.prototype.map.call(document.querySelectorAll(".figure"), function (f) {
			var b = f.querySelector(".figure-box"), r = b.getBoundingClientRect(), s = f.querySelector("svg"), c = f.querySelector(".figure-cue");
			return {Left: r.left, Right: r.right, SVG: s.getBoundingClientRect().width, Client: b.clientWidth, Scroll: b.scrollWidth,
				Natural: Number(s.getAttribute("width")) || s.viewBox.baseVal.width, Overflow: getComputedStyle(b).overflowX,
				Cue: c.getClientRects().length > 0 && c.offsetHeight > 0};
		}))`)
		var boxes []box
		if err := json.Unmarshal([]byte(s), &boxes); err != nil {
			t.Fatal(err)
		}
		if len(boxes) != 3 {
			t.Fatalf("%d figures on the page, want 3", len(boxes))
		}
		scaled := false
		for i, b := range boxes {
			if b.Left < 0 || b.Right > 360 {
				t.Errorf("figure %d spans %v..%vpx of a 360px screen", i+1, b.Left, b.Right)
			}
			fits := b.SVG <= b.Client+0.5
			if !fits && (b.Scroll <= b.Client || (b.Overflow != "auto" && b.Overflow != "scroll")) {
				t.Errorf("figure %d: drawing %vpx wide in a %vpx box that does not scroll (%+v)", i+1, b.SVG, b.Client, b)
			}
			if fits == b.Cue {
				t.Errorf("figure %d: drawing %vpx wide in a %vpx box, scroll cue shown: %v (want it exactly when the box scrolls)", i+1, b.SVG, b.Client, b.Cue)
			}
			// d2's labels are 16px, goat's 14px: scaled no further
			// than to 11px (render.FigureTextMin).
			if b.SVG < b.Natural*11/16-0.5 {
				t.Errorf("figure %d scaled to %vpx of %vpx: its 16px labels would be under 11px", i+1, b.SVG, b.Natural)
			}
			if b.SVG < b.Natural-0.5 {
				scaled = true
			}
		}
		if !scaled {
			t.Errorf("no figure was scaled down on a phone: the test does not exercise it (%+v)", boxes)
		}
		tb.screenshot("figure-mobile.png")
		tb.noConsoleErrors("figures on a phone")
	})
}

// realFiguresJS measures every figure of the page: its caption, natural
// and drawn width, its box (does it scroll sideways, is the cue under it
// shown), the smallest size a label is drawn at on the screen (its
// font-size times the drawing's scale), and, for every label, the WCAG 2.1
// contrast of its colour against what it is painted on: the page's
// background with every filled shape before it in the drawing that covers
// the label's centre (isPointInFill) composited over it, by each shape's
// opacity, in paint order. The worst label is reported.
const realFiguresJS = `(function () {
	function parse(c) { var m = c && c.match(/rgba?\(([^)]+)\)/); if (!m) { return null; } var v = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number); return [v[0], v[1], v[2], v.length > 3 ? v[3] : 1]; }
	function over(top, a, bottom) { return [0, 1, 2].map(function (i) { return top[i] * a + bottom[i] * (1 - a); }); }
	function lum(c) { c = c.map(function (v) { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }); return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]; }
	function ratio(a, b) { var x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); }
	function hex(c) { return "#" + c.map(function (v) { return ("0" + Math.round(v).toString(16)).slice(-2); }).join(""); }
	function hidden(e, svg) { for (var p = e; p && p !== svg; p = p.parentNode) { if (/^(mask|defs|marker|clipPath|pattern|symbol)$/.test(p.tagName)) { return true; } } return false; }
	var page = parse(getComputedStyle(document.body).backgroundColor);
	return JSON.stringify(Array.prototype.map.call(document.querySelectorAll("figure.figure"), function (f, i) {
		var svg = f.querySelector("svg"), box = f.querySelector(".figure-box") || f, cue = f.querySelector(".figure-cue");
		var cap = f.querySelector("figcaption");
		var r = {Index: i + 1, Caption: cap ? cap.textContent.trim() : "", Natural: Number(svg.getAttribute("width")) || svg.viewBox.baseVal.width,
			Drawn: svg.getBoundingClientRect().width, BoxClient: box.clientWidth, BoxScroll: box.scrollWidth,
			BoxRight: box.getBoundingClientRect().right, Overflow: getComputedStyle(box).overflowX,
			Cue: !!cue && cue.getClientRects().length > 0 && cue.offsetHeight > 0, MinText: 1e9, Labels: 0, Contrast: 1e9};
		var shapes = Array.prototype.filter.call(svg.querySelectorAll("rect, path, polygon, circle, ellipse"), function (s) {
			if (hidden(s, svg)) { return false; }
			var st = getComputedStyle(s), c = parse(st.fill);
			return c && c[3] * Number(st.fillOpacity) * Number(st.opacity) > 0 && st.display !== "none" && st.visibility !== "hidden";
		});
		svg.querySelectorAll("text").forEach(function (t) {
			if (hidden(t, svg) || !t.textContent.trim()) { return; }
			var b = t.getBoundingClientRect();
			if (b.width === 0 || b.height === 0) { return; }
			var st = getComputedStyle(t), m = t.getScreenCTM();
			var size = parseFloat(st.fontSize) * Math.sqrt(m.a * m.a + m.b * m.b);
			r.MinText = Math.min(r.MinText, size);
			var x = b.left + b.width / 2, y = b.top + b.height / 2, bg = page.slice(0, 3);
			shapes.forEach(function (s) {
				if (!(s.compareDocumentPosition(t) & Node.DOCUMENT_POSITION_FOLLOWING)) { return; }
				var p = new DOMPoint(x, y).matrixTransform(s.getScreenCTM().inverse());
				if (!s.isPointInFill(p)) { return; }
				var ss = getComputedStyle(s), c = parse(ss.fill);
				bg = over(c, c[3] * Number(ss.fillOpacity) * Number(ss.opacity), bg);
			});
			var fc = parse(st.fill);
			if (!fc) { return; }
			var fg = over(fc, fc[3] * Number(st.fillOpacity) * Number(st.opacity), bg);
			var k = ratio(fg, bg);
			r.Labels++;
			if (k < r.Contrast) { r.Contrast = k; r.Worst = t.textContent.trim().slice(0, 60); r.WorstFg = hex(fg); r.WorstBg = hex(bg); r.WorstSize = size; }
		});
		return r;
	}));
})()`

type realFigure struct {
	Index                                          int
	Caption, Overflow, Worst, WorstFg, WorstBg     string
	Natural, Drawn, BoxClient, BoxScroll, BoxRight float64
	MinText, Contrast, WorstSize                   float64
	Labels                                         int
	Cue                                            bool
}

// TestFiguresRealBook reads every figure of the real book's built site
// (each chapter page; print.html repeats them) in Chromium. Each has a
// caption. At a 1280px window each fits the text column whole (its box
// does not scroll) with every label drawn at FigureTextMin (11px) or
// more. On a 360px phone no page scrolls sideways, no figure's box runs
// off the screen, and each figure either fits with 11px labels or scrolls
// inside its box with the cue under it shown (and the cue is hidden when
// it fits). In the light and the dark theme every label keeps WCAG AA
// contrast (4.5:1) against the fill it is painted on. Screenshots:
// tests/artifacts/figure-real-<page>-<n>-{light,dark,phone}.png.
func TestFiguresRealBook(t *testing.T) {
	res := realBook(t)
	bctx := newBrowser(t)
	srv := serveSite(t, res.Out)
	var pages []string
	for _, p := range sitePages(t, res.Out) {
		data, err := os.ReadFile(filepath.Join(res.Out, filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		if p != "/print.html" && strings.Contains(string(data), `<figure class="figure `) {
			pages = append(pages, p)
		}
	}
	if len(pages) < 5 {
		t.Fatalf("figures on %d pages (%v), want the book's", len(pages), pages)
	}
	tb := newTab(t, bctx)
	const minText = 11 - 0.05
	read := func(p string) []realFigure {
		t.Helper()
		tb.waitTrue("fonts loaded", `document.fonts.status === "loaded"`, 15*time.Second)
		var figs []realFigure
		s := eval[string](tb, realFiguresJS)
		if err := json.Unmarshal([]byte(s), &figs); err != nil {
			t.Fatalf("%s: %v (%s)", p, err, s)
		}
		return figs
	}
	shoot := func(p string, n int, mode string) {
		tb.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelectorAll("figure.figure")[%d].scrollIntoView({block: "start"})`, n-1)))
		tb.screenshot(fmt.Sprintf("figure-real-%s-%d-%s.png", strings.TrimSuffix(strings.TrimPrefix(p, "/"), ".html"), n, mode))
	}
	name := func(p string, f realFigure) string {
		return fmt.Sprintf("%s figure %d (%q)", p, f.Index, f.Caption)
	}
	total := 0
	tb.do(chromedp.EmulateViewport(1280, 900))
	for _, dark := range []bool{false, true} {
		mode := map[bool]string{false: "light", true: "dark"}[dark]
		prefersDark(tb, dark)
		for _, p := range pages {
			tb.navigate(srv.URL + p)
			figs := read(p)
			for _, f := range figs {
				if !dark {
					total++
					if f.Caption == "" {
						t.Errorf("%s has no caption (caption=\"...\" in its fence's info string)", name(p, f))
					}
					if f.Drawn > f.BoxClient+0.5 || f.BoxScroll > f.BoxClient+1 {
						t.Errorf("%s does not fit the text column at 1280px: drawn %.0fpx of its %.0fpx in a %.0fpx box (scrolls to %.0fpx)", name(p, f), f.Drawn, f.Natural, f.BoxClient, f.BoxScroll)
					}
					if f.MinText < minText {
						t.Errorf("%s at 1280px: its smallest label is drawn at %.1fpx, want %dpx or more (a %.0fpx drawing in a %.0fpx column: draw it narrower)", name(p, f), f.MinText, 11, f.Natural, f.BoxClient)
					}
				}
				if f.Labels == 0 {
					t.Errorf("%s (%s): no label measured", name(p, f), mode)
				} else if f.Contrast < 4.5 {
					t.Errorf("%s (%s theme): label %q in %s on %s, contrast %.2f:1, want at least 4.5:1", name(p, f), mode, f.Worst, f.WorstFg, f.WorstBg, f.Contrast)
				}
				shoot(p, f.Index, mode)
			}
			tb.noConsoleErrors(p)
		}
	}
	if total < 5 {
		t.Errorf("%d figures in the book, want the book's", total)
	}
	prefersDark(tb, false)
	tb.do(chromedp.EmulateViewport(360, 780, chromedp.EmulateMobile, chromedp.EmulateScale(2)))
	defer tb.do(chromedp.EmulateViewport(1280, 900))
	for _, p := range pages {
		tb.navigate(srv.URL + p)
		figs := read(p)
		if o := measureOverflow(tb); o.Scroll > o.Viewport {
			t.Errorf("%s at 360px: the page scrolls sideways, %.0fpx; widest: %s", p, o.Scroll, o)
		}
		for _, f := range figs {
			scrolls := f.BoxScroll > f.BoxClient+1
			switch {
			case f.BoxRight > 360.5:
				t.Errorf("%s at 360px: its box runs off the screen to %.0fpx", name(p, f), f.BoxRight)
			case f.MinText < minText:
				t.Errorf("%s at 360px: its smallest label is drawn at %.1fpx (drawn %.0fpx of %.0fpx), want %dpx or more", name(p, f), f.MinText, f.Drawn, f.Natural, 11)
			case scrolls && (f.Overflow != "auto" && f.Overflow != "scroll"):
				t.Errorf("%s at 360px: drawn %.0fpx in a %.0fpx box that does not scroll (overflow-x %s)", name(p, f), f.Drawn, f.BoxClient, f.Overflow)
			case scrolls && !f.Cue:
				t.Errorf("%s at 360px: its box scrolls sideways (%.0fpx in %.0fpx) with no cue shown above it", name(p, f), f.BoxScroll, f.BoxClient)
			case !scrolls && f.Cue:
				t.Errorf("%s at 360px: it fits its box (%.0fpx in %.0fpx) but the scroll cue is shown", name(p, f), f.Drawn, f.BoxClient)
			}
			t.Logf("%s at 360px: drawn %.0fpx of %.0fpx, smallest label %.1fpx, box scrolls %v", name(p, f), f.Drawn, f.Natural, f.MinText, scrolls)
			shoot(p, f.Index, "phone")
		}
		tb.noConsoleErrors(p + " on a phone")
	}
}
