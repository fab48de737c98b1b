package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"oss.terrastruct.com/d2/d2renderers/d2fonts"

	"github.com/ownership-book/ownership/internal/diag"
)

const seqD2 = `shape: sequence_diagram
A; stream; B
A -> stream: append epoch 1 seq 0
stream -> A: 200 appended
B -> stream: claim epoch 2
A -> stream: append epoch 1 seq 1
stream -> A: 403 stale epoch
`

const graphD2 = `direction: right
Unowned -> Owned: Acquire
Owned -> Transferring: BeginTransfer
Transferring -> Owned: Complete
Transferring -> Owned: Abort
Owned -> Unowned: Revoke
`

const goatArt = `  +---------+   epoch 7    +---------+
  | owner A +------------->| storage |
  +---------+              +---------+
`

// cspUnsafe finds what the site's Content-Security-Policy (style-src
// 'self', script-src 'self') blocks in inline SVG.
var cspUnsafe = regexp.MustCompile(`(?i)<style|\sstyle=|<script|\son[a-z]+=|<foreignObject|<\?xml|javascript:|data:`)

// TestDrawFigureIsInlineSafeAndDeterministic checks that d2's and goat's
// drawings have no <style> element, style attribute, script, foreign HTML,
// XML declaration or data: URL (which the CSP forbids or an HTML page
// cannot hold), keep their labels as SVG text, carry the classes FigureCSS
// colours, and come out byte for byte the same twice.
func TestDrawFigureIsInlineSafeAndDeterministic(t *testing.T) {
	for _, c := range []struct{ lang, src, label, class string }{
		{FigureD2, seqD2, "403 stale epoch", "fill-N1"},
		{FigureD2, graphD2, "BeginTransfer", "stroke-B1"},
		{FigureGoat, goatArt, "owner A", "goat-text"},
	} {
		fig, err := DrawFigure(c.lang, c.src)
		if err != nil {
			t.Fatalf("%s: %v", c.lang, err)
		}
		if m := cspUnsafe.Find(fig.SVG); m != nil {
			t.Errorf("%s figure holds %q, which the CSP blocks or a page cannot inline", c.lang, m)
		}
		if !bytes.HasPrefix(fig.SVG, []byte("<svg ")) || !bytes.HasSuffix(fig.SVG, []byte("</svg>")) {
			t.Errorf("%s figure is not one <svg> element: %.80q", c.lang, fig.SVG)
		}
		if !strings.Contains(fig.Text, c.label) {
			t.Errorf("%s figure text %q lacks the label %q", c.lang, fig.Text, c.label)
		}
		if !bytes.Contains(fig.SVG, []byte(c.class)) {
			t.Errorf("%s figure has no class %s for the theme to colour", c.lang, c.class)
		}
		if fig.Width < 100 || fig.Height < 40 {
			t.Errorf("%s figure size %dx%d", c.lang, fig.Width, fig.Height)
		}
		again, err := DrawFigure(c.lang, c.src)
		if err != nil || !bytes.Equal(again.SVG, fig.SVG) {
			t.Errorf("%s: drawing twice gives different SVG (err %v)", c.lang, err)
		}
	}
}

// TestGoatTextIsOneElementPerLabel checks that goat's characters become
// one <text> per label, on goat's grid, so that a label can be selected
// and found.
func TestGoatTextIsOneElementPerLabel(t *testing.T) {
	fig, err := DrawFigure(FigureGoat, goatArt)
	if err != nil {
		t.Fatal(err)
	}
	texts := textElem.FindAllSubmatch(fig.SVG, -1)
	var got []string
	for _, m := range texts {
		got = append(got, string(m[1]))
	}
	if want := []string{"epoch 7", "owner A", "storage"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("text elements %q, want %q", got, want)
	}
	// "owner A" starts in column 4 (goat centres column c on x = 8c, so
	// the cell begins at 8c-4) and spans 7 cells.
	if !bytes.Contains(fig.SVG, []byte(`x='28' y='20' textLength='56'`)) {
		t.Errorf("\"owner A\" is not at column 4 with 7 cells:\n%s", fig.SVG)
	}
}

// TestFigureErrorsNameTheChapterLine checks that a diagram d2 refuses is
// reported at the chapter line inside the block that d2 names, and that an
// empty figure or a tab in goat art is refused at its block.
func TestFigureErrorsNameTheChapterLine(t *testing.T) {
	b := testBook(t)
	md := "# Figures\n" + // 1
		"\n" + // 2
		"```d2\n" + // 3
		"a -> b\n" + // 4
		"c -> : {\n" + // 5
		"}\n" + // 6
		"```\n" + // 7
		"```d2\n" + // 8
		"d.shape: nonsense\n" + // 9
		"```\n" + // 10
		"```goat\n" + // 11
		"+--+\n" + // 12
		"|\t|\n" + // 13
		"```\n" + // 14
		"```d2\n" + // 15
		"\n" + // 16
		"```\n" // 17
	_, err := New(b).Render(doc(b, 1, md))
	var l diag.List
	if !errors.As(err, &l) {
		t.Fatalf("err = %v, want a diag.List", err)
	}
	want := []string{
		"book/ownership.md:5: ```d2 figure: connection missing destination",
		"book/ownership.md:9: ```d2 figure: unknown shape \"nonsense\"",
		"book/ownership.md:13: ```goat figure: goat figure has a tab",
		"book/ownership.md:15: ```d2 figure is empty",
	}
	var got []string
	for _, e := range l {
		got = append(got, e.Error())
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || strings.HasPrefix(g, w)
		}
		if !found {
			t.Errorf("no error %q in:\n%s", w, strings.Join(got, "\n"))
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d errors, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
}

// TestFigurePage checks the page and search text of a figure: a <figure>
// holding the SVG (no code block), its caption, and the labels (not the
// D2 source) in the section's search text.
func TestFigurePage(t *testing.T) {
	b := testBook(t)
	pg, err := New(b).Render(doc(b, 1, "# Figures\n\n```d2 caption=\"A takeover\"\n"+seqD2+"```\n"))
	if err != nil {
		t.Fatal(err)
	}
	h := string(pg.HTML)
	// 471px wide, 16px labels: scaled to 11px labels at 340px at the least.
	if !strings.Contains(h, `<figure class="figure figure-d2 fig-min-340"><div class="figure-cue" aria-hidden="true"></div><div class="figure-box"><svg `) || strings.Contains(h, "code-block") {
		t.Errorf("page is not a figure:\n%.300s", h)
	}
	if !strings.Contains(h, `</svg></div><figcaption>A takeover</figcaption></figure>`) {
		t.Error("no caption")
	}
	text := pg.Sections[0].Text
	if !strings.Contains(text, "403 stale epoch") || strings.Contains(text, "sequence_diagram") {
		t.Errorf("search text %q: want the labels, not the source", text)
	}
}

// TestFigureCacheAcrossBuilds checks that a second cache on the same
// folder (the next build) draws nothing, and that a changed source is
// drawn again.
func TestFigureCacheAcrossBuilds(t *testing.T) {
	dir := t.TempDir()
	first := &FigureCache{Dir: dir}
	fig, err := first.Draw(FigureD2, graphD2)
	if err != nil {
		t.Fatal(err)
	}
	if first.Drawn() != 1 {
		t.Fatalf("first build drew %d figures, want 1", first.Drawn())
	}
	second := &FigureCache{Dir: dir}
	again, err := second.Draw(FigureD2, graphD2)
	if err != nil {
		t.Fatal(err)
	}
	if second.Drawn() != 0 || !bytes.Equal(again.SVG, fig.SVG) || again.Text != fig.Text || again.Width != fig.Width {
		t.Errorf("second build drew %d figures (want 0) or read back another figure", second.Drawn())
	}
	if _, err := second.Draw(FigureD2, graphD2+"Owned -> Unowned: Release\n"); err != nil {
		t.Fatal(err)
	}
	if second.Drawn() != 1 {
		t.Errorf("a changed source was not drawn again")
	}
	// A failure is not cached.
	if _, err := second.Draw(FigureD2, "a -> "); err == nil {
		t.Fatal("a bad diagram was drawn")
	}
	if n, _ := filepath.Glob(filepath.Join(dir, "*", "*.json")); len(n) != 2 {
		t.Errorf("%d cache files, want 2 (failures are not cached)", len(n))
	}
}

func luminance(hex string) float64 {
	hex = strings.TrimPrefix(hex, "#")
	var c [3]float64
	for i := range c {
		v, _ := strconv.ParseUint(hex[2*i:2*i+2], 16, 8)
		s := float64(v) / 255
		if s <= 0.03928 {
			c[i] = s / 12.92
		} else {
			c[i] = math.Pow((s+0.055)/1.055, 2.4)
		}
	}
	return 0.2126*c[0] + 0.7152*c[1] + 0.0722*c[2]
}

func contrast(a, b string) float64 {
	x, y := luminance(a), luminance(b)
	return (math.Max(x, y) + 0.05) / (math.Min(x, y) + 0.05)
}

// TestFigureContrast checks WCAG AA contrast (4.5:1, WCAG 2.1 success
// criterion 1.4.3) in both themes for the colours d2 puts text in on the
// fills it puts text on: labels (N1) on shape fills (B3 to B6, N5 to N7)
// and edge labels (N2) on the background (N7) and on the fills of the
// containers they cross (B3 to B6, N5, N6); lines (B1, B2) reach 3:1
// on the background (criterion 1.4.11, non-text contrast).
func TestFigureContrast(t *testing.T) {
	p := palette()
	for theme := 0; theme < 2; theme++ {
		name := [2]string{"light", "dark"}[theme]
		for _, fill := range []string{"B3", "B4", "B5", "B6", "N5", "N6", "N7", "OR4", "GR4", "RD4", "YE4", "PU4"} {
			if r := contrast(p["N1"][theme], p[fill][theme]); r < 4.5 {
				t.Errorf("%s: N1 text on %s: %.2f:1", name, fill, r)
			}
		}
		// Edge labels (N2) sit on the background and, in a
		// container or a sequence diagram's span, on its fill (the
		// book's stream, service and zombie figures).
		for _, fill := range []string{"B3", "B4", "B5", "B6", "N5", "N6", "N7"} {
			if r := contrast(p["N2"][theme], p[fill][theme]); r < 4.5 {
				t.Errorf("%s: N2 edge label on %s: %.2f:1", name, fill, r)
			}
		}
		for _, line := range []string{"B1", "B2"} {
			if r := contrast(p[line][theme], p["N7"][theme]); r < 3 {
				t.Errorf("%s: %s lines on N7: %.2f:1", name, line, r)
			}
		}
	}
	if p["N7"][0] != "#ffffff" || p["N7"][1] != "#0d1117" {
		t.Errorf("figure backgrounds %v are not the page's (theme/book.css --bg)", p["N7"])
	}
}

// TestVendoredFontsMatchD2 checks that the fonts the site serves for d2
// labels are the ones d2 measured them with (d2fonts, Source Sans Pro):
// after an upgrade of d2 with other fonts this fails until the vendored
// folder is replaced (see its README).
func TestVendoredFontsMatchD2(t *testing.T) {
	dir := filepath.Join("..", "..", "theme", "vendor", FigureFonts)
	for _, f := range []struct {
		file  string
		style d2fonts.FontStyle
	}{{"SourceSansPro-Regular.ttf", d2fonts.FONT_STYLE_REGULAR}, {"SourceSansPro-Italic.ttf", d2fonts.FONT_STYLE_ITALIC}, {"SourceSansPro-Bold.ttf", d2fonts.FONT_STYLE_BOLD}} {
		data, err := os.ReadFile(filepath.Join(dir, f.file))
		if err != nil {
			t.Fatal(err)
		}
		want := d2fonts.FontFaces.Get(d2fonts.SourceSansPro.Font(0, f.style))
		if !bytes.Equal(data, want) {
			t.Errorf("%s differs from the font d2 measures with (%d bytes, d2 has %d)", f.file, len(data), len(want))
		}
		if !bytes.Contains(FigureCSS(), []byte(FigureFonts+"/"+f.file)) {
			t.Errorf("FigureCSS does not name %s", f.file)
		}
	}
}

func benchDraw(b *testing.B, lang, src string) {
	for b.Loop() {
		if _, err := DrawFigure(lang, src); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDrawD2Sequence lays out and draws a 7-message sequence diagram
// (d2's own layout, in Go).
func BenchmarkDrawD2Sequence(b *testing.B) { benchDraw(b, FigureD2, seqD2) }

// BenchmarkDrawD2Dagre lays out a 3-node, 5-edge graph with dagre, which d2
// runs as JavaScript in goja.
func BenchmarkDrawD2Dagre(b *testing.B) { benchDraw(b, FigureD2, graphD2) }

// BenchmarkDrawD2Elk lays the same graph out with elk (also JavaScript in
// goja).
func BenchmarkDrawD2Elk(b *testing.B) {
	benchDraw(b, FigureD2, "vars: {d2-config: {layout-engine: elk}}\n"+graphD2)
}

// BenchmarkDrawGoat draws a three-line ASCII figure.
func BenchmarkDrawGoat(b *testing.B) { benchDraw(b, FigureGoat, goatArt) }

// BenchmarkFigureCacheHit reads a drawn figure back from the disk cache
// (what a second build pays per figure).
func BenchmarkFigureCacheHit(b *testing.B) {
	dir := b.TempDir()
	if _, err := (&FigureCache{Dir: dir}).Draw(FigureD2, graphD2); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		c := &FigureCache{Dir: dir}
		if _, err := c.Draw(FigureD2, graphD2); err != nil || c.Drawn() != 0 {
			b.Fatal("miss", err)
		}
	}
}

// TestFigureRefusesWhatThePageCannotShow checks that an icon from another
// host (a request the site never makes) and a Markdown label (HTML inside
// the SVG) are refused with a message, not drawn half-working.
func TestFigureRefusesWhatThePageCannotShow(t *testing.T) {
	for _, c := range []struct{ src, msg string }{
		{"a: {icon: https://icons.example/a.svg}\na -> b\n", "from another site"},
		{"a: |md\n  # Title\n|\na -> b\n", "holds HTML"},
	} {
		_, err := DrawFigure(FigureD2, c.src)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%q: err = %v, want one containing %q", c.src, err, c.msg)
		}
	}
}

// slowD2 returns a d2 diagram that dagre lays out slowly: a chain of n
// nodes plus 2n labelled connections between pairs picked by a fixed
// linear congruential sequence (no randomness: the same text each time).
func slowD2(n int) string {
	var b strings.Builder
	for i := 0; i+1 < n; i++ {
		fmt.Fprintf(&b, "n%d -> n%d\n", i, i+1)
	}
	x := uint32(1)
	for i := 0; i < 2*n; i++ {
		x = x*1664525 + 1013904223
		a := int(x>>8) % n
		x = x*1664525 + 1013904223
		c := int(x>>8) % n
		fmt.Fprintf(&b, "n%d -> n%d: edge %d\n", a, c, i)
	}
	return b.String()
}

// TestFigureBudget checks that a d2 drawing that takes longer than its
// budget (a 20-node diagram dagre takes seconds to lay out, against a
// budget of 300ms) is abandoned with FigureErrors that name the budget,
// where it is set and what to do (a smaller diagram, or elk), and that
// the next figure still draws: the abandoned drawing gave up its turn.
func TestFigureBudget(t *testing.T) {
	_, err := DrawFigureWithin(t.Context(), 300*time.Millisecond, nil, FigureD2, slowD2(20))
	var fe FigureErrors
	if !errors.As(err, &fe) || len(fe) != 1 || fe[0].Line != 0 {
		t.Fatalf("err = %v, want one FigureError at the fence", err)
	}
	for _, want := range []string{"longer than its budget of 300ms", "[bookgen] figure-timeout in book.toml", "smaller ones", "layout-engine: elk"} {
		if !strings.Contains(fe[0].Msg, want) {
			t.Errorf("message %q lacks %q", fe[0].Msg, want)
		}
	}
	if _, err := DrawFigure(FigureD2, "a -> b\n"); err != nil {
		t.Errorf("the next figure: %v", err)
	}
}

// TestFigureCancelled checks that a drawing is abandoned when its context
// is done (Ctrl-C during a slow layout), returning the context's error,
// and that one waiting for its turn behind it is abandoned too.
func TestFigureCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := DrawFigureWithin(ctx, 0, nil, FigureD2, slowD2(20))
			errs <- err
		}()
	}
	time.Sleep(200 * time.Millisecond)
	cancel()
	for range 2 {
		if err := <-errs; !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	}
}

// TestFigureColoursFollowTheTheme checks that a d2 figure's literal
// colours are drawn as the nearest entries of the site's palette (so they
// change with the theme: Raft's Figure 8 kept its pastel fills in the dark
// theme), that a mask keeps its colours, and that a colour no entry is
// near, or a name bookgen does not know, is refused at its line, in both
// of d2's ways of writing a style.
func TestFigureColoursFollowTheTheme(t *testing.T) {
	fig, err := DrawFigure(FigureD2, "a: \"1\" {style.fill: \"#dbe7fb\"}\nb: \"2\" {style: {fill: \"#fbe3c2\"; stroke: black}}\na -> b\n")
	if err != nil {
		t.Fatal(err)
	}
	svg := string(fig.SVG)
	for _, want := range []string{`fill="#dbe7fb" class="fill-B3 `, `fill="#fbe3c2" stroke-width="2"  class="stroke-N1 fill-OR4"`} {
		if !strings.Contains(svg, want) {
			t.Errorf("drawing lacks %s:\n%s", want, svg)
		}
	}
	if strings.Contains(svg, `fill="white" class`) {
		t.Errorf("a mask's colour was mapped:\n%s", svg)
	}
	src := "a: {style.fill: \"#ff00ff\"}\n" + // 1
		"b.style.stroke: \"#00ff00\"\n" + // 2
		"c: {\n" + // 3
		"  style: {\n" + // 4
		"    font-color: chartreuse\n" + // 5
		"    fill: \"#e3e9fd\"\n" + // 6
		"  }\n" + // 7
		"}\n" + // 8
		"d: {style: {fill: transparent; stroke: \"#0d32b2\"}}\n" + // 9
		"e: \"fill: red is a label\"\n" // 10
	_, err = DrawFigure(FigureD2, src)
	var fe FigureErrors
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v, want FigureErrors", err)
	}
	var got []string
	for _, e := range fe {
		got = append(got, fmt.Sprintf("%d: %s", e.Line, e.Msg))
	}
	want := []string{
		`1: style.fill "#ff00ff" is far from every colour of the site's figure palette`,
		`2: style.stroke "#00ff00" is far from every colour`,
		`5: style.font-color "chartreuse": write the colour as #rrggbb`,
	}
	ok := len(got) == len(want)
	for i := range want {
		ok = ok && strings.HasPrefix(got[min(i, len(got)-1)], want[i])
	}
	if !ok {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestMinWidthClass: a figure is scaled down at most until its smallest
// label is FigureTextMin pixels, its width rounded up to the class step;
// a figure whose labels are smaller is not scaled; a small one gets no
// class; a huge one stops at the largest class.
func TestMinWidthClass(t *testing.T) {
	for _, c := range []struct {
		w    int
		font float64
		want string
	}{
		{1421, 16, "fig-min-980"}, // 1421 × 11/16 = 976.9
		{800, 16, "fig-min-560"},  // 550
		{471, 16, "fig-min-340"},  // 323.8
		{800, 22, "fig-min-400"},  // exactly 400
		{600, 10, "fig-min-600"},  // labels under 11px: never smaller
		{610, 10, "fig-min-600"},  // ... rounded down, not above its width
		{90, 16, ""},
		{9000, 16, "fig-min-2000"},
	} {
		if got := minWidthClass(c.w, c.font); got != c.want {
			t.Errorf("minWidthClass(%d, %v) = %q, want %q", c.w, c.font, got, c.want)
		}
	}
	if got := labelSize(FigureD2, []byte(`<text font-size="28">T</text><text font-size="16">l</text>`)); got != 16 {
		t.Errorf("labelSize = %v, want the smallest, 16", got)
	}
	if got := labelSize(FigureGoat, []byte(`<text>x</text>`)); got != goatTextSize {
		t.Errorf("goat labelSize = %v, want %v", got, goatTextSize)
	}
	css := string(FigureCSS())
	for _, want := range []string{
		".figure.fig-min-980 svg { min-width: 980px; }",
		"@container figure (width < 980px) { .fig-min-980 .figure-cue { display: block; } }",
	} {
		if !strings.Contains(css, want) {
			t.Errorf("FigureCSS lacks %s", want)
		}
	}
}
