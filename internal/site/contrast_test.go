package site

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ownership-book/ownership/internal/render"
)

// WCAG 2.2, success criterion 1.4.3 (Contrast, Minimum, level AA): text
// needs a contrast ratio of at least 4.5:1 with its background.
const minContrast = 4.5

// relLuminance is WCAG's relative luminance of an sRGB colour.
func relLuminance(c [3]float64) float64 {
	lin := func(v float64) float64 {
		v /= 255
		if v <= 0.04045 {
			return v / 12.92
		}
		return math.Pow((v+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(c[0]) + 0.7152*lin(c[1]) + 0.0722*lin(c[2])
}

// contrast is WCAG's contrast ratio of two colours, 1 to 21.
func contrast(a, b [3]float64) float64 {
	la, lb := relLuminance(a), relLuminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// parseHex reads #rgb or #rrggbb.
func parseHex(s string) ([3]float64, bool) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "#")
	if len(s) == 3 {
		s = string([]byte{s[0], s[0], s[1], s[1], s[2], s[2]})
	}
	if len(s) != 6 {
		return [3]float64{}, false
	}
	var c [3]float64
	for i := range 3 {
		v, err := strconv.ParseUint(s[2*i:2*i+2], 16, 8)
		if err != nil {
			return [3]float64{}, false
		}
		c[i] = float64(v)
	}
	return c, true
}

var customProp = regexp.MustCompile(`(--[a-z0-9-]+)\s*:\s*([^;]+);`)

// block returns the declarations of the first rule of css whose selector
// is exactly sel.
func block(t *testing.T, css, sel string) map[string]string {
	t.Helper()
	i := strings.Index(css, sel+" {")
	if i < 0 {
		t.Fatalf("theme/book.css has no %q rule", sel)
	}
	body := css[i+len(sel)+2:]
	body = body[:strings.Index(body, "}")]
	m := map[string]string{}
	for _, d := range customProp.FindAllStringSubmatch(body, -1) {
		m[d[1]] = strings.TrimSpace(d[2])
	}
	return m
}

// TestThemeContrast computes the contrast of the theme's text colours on
// their backgrounds, in the light and the dark palette of theme/book.css,
// and of every colour chroma gives a code token on the code background
// (plain and highlighted lines), and fails below WCAG AA (4.5:1).
func TestThemeContrast(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "theme", "book.css"))
	if err != nil {
		t.Fatal(err)
	}
	css := string(data)
	light := block(t, css, ":root")
	dark := block(t, css, "[data-theme=dark]")
	media := block(t, css, "  :root:not([data-theme=light])")
	for k, v := range dark {
		if media[k] != v {
			t.Errorf("dark palette: %s is %q under [data-theme=dark] but %q under prefers-color-scheme", k, v, media[k])
		}
	}
	for k, v := range media {
		if _, ok := dark[k]; !ok {
			t.Errorf("dark palette: %s is %q under prefers-color-scheme but missing under [data-theme=dark]", k, v)
		}
	}
	pairs := [][2]string{
		{"--fg", "--bg"}, {"--muted", "--bg"}, {"--link", "--bg"}, {"--link-visited", "--bg"},
		{"--fg", "--code-bg"}, {"--muted", "--code-bg"}, {"--link", "--code-bg"},
		{"--sidebar-fg", "--sidebar-bg"}, {"--muted", "--sidebar-bg"}, {"--link", "--sidebar-bg"},
		{"--link", "--current-bg"}, {"--muted", "--current-bg"}, {"--fg", "--current-bg"},
		{"--note-fg", "--note-bg"}, {"--mark-fg", "--mark-bg"}, {"--check-fg", "--check-bg"}, {"--fg", "--hl-line"},
	}
	checked := 0
	for _, pal := range []struct {
		name string
		vars map[string]string
	}{{"light", light}, {"dark", dark}} {
		for _, p := range pairs {
			fg, ok1 := parseHex(pal.vars[p[0]])
			bg, ok2 := parseHex(pal.vars[p[1]])
			if !ok1 || !ok2 {
				t.Errorf("%s: %s or %s is not a hex colour (%q, %q)", pal.name, p[0], p[1], pal.vars[p[0]], pal.vars[p[1]])
				continue
			}
			checked++
			if r := contrast(fg, bg); r < minContrast {
				t.Errorf("%s theme: %s %s on %s %s: contrast %.2f, want ≥ %.1f", pal.name, p[0], pal.vars[p[0]], p[1], pal.vars[p[1]], r, minContrast)
			}
		}
	}

	// Code tokens: chroma's light rules are unscoped (".chroma .k"), the
	// dark ones scoped with "[data-theme=dark] ".
	rule := regexp.MustCompile(`(?m)^(?:/\*[^*]*\*/ )?(\[data-theme=dark\] )?\.chroma \.([a-z0-9]+) \{([^}]*)\}`)
	colour := regexp.MustCompile(`(?:^|[^-])color:\s*(#[0-9a-fA-F]{3,6})`)
	background := regexp.MustCompile(`background-color:\s*(#[0-9a-fA-F]{3,6})`)
	tokens := 0
	for _, m := range rule.FindAllStringSubmatch(string(render.CSS()), -1) {
		pal := light
		name := "light"
		if m[1] != "" {
			pal, name = dark, "dark"
		}
		class := m[2]
		if class == "ln" || class == "lnt" || class == "hl" || class == "line" || class == "cl" {
			continue // the theme styles line numbers and lines itself
		}
		c := colour.FindStringSubmatch(m[3])
		if c == nil {
			continue
		}
		fg, _ := parseHex(c[1])
		bgs := []string{pal["--code-bg"], pal["--hl-line"]}
		if b := background.FindStringSubmatch(m[3]); b != nil {
			bgs = []string{b[1]}
		}
		for _, b := range bgs {
			bg, _ := parseHex(b)
			tokens++
			if r := contrast(fg, bg); r < minContrast {
				t.Errorf("%s theme: code token .%s %s on %s: contrast %.2f, want ≥ %.1f", name, class, c[1], b, r, minContrast)
			}
		}
	}
	if checked < 2*len(pairs) || tokens < 40 {
		t.Errorf("checked %d theme pairs and %d token colours; the parser found too little", checked, tokens)
	}
	t.Logf("%d theme colour pairs and %d code token colours checked", checked, tokens)
}

func TestContrastFormula(t *testing.T) {
	black, _ := parseHex("#000")
	white, _ := parseHex("#ffffff")
	grey, _ := parseHex("#767676") // the classic AA boundary grey on white
	for _, c := range []struct {
		a, b [3]float64
		want float64
	}{{black, white, 21}, {white, white, 1}, {grey, white, 4.54}} {
		if got := contrast(c.a, c.b); math.Abs(got-c.want) > 0.01 {
			t.Errorf("contrast = %.3f, want %.2f", got, c.want)
		}
	}
}
