package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/ownership-book/ownership/internal/build"
)

// TestMain removes the real book's site (realBook) after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if realBookDir != "" {
		_ = os.RemoveAll(realBookDir)
	}
	os.Exit(code)
}

// The real book, built once for every test that reads it (realBook).
var (
	realBookOnce sync.Once
	realBookDir  string
	realBookRes  *build.Result
	realBookErr  error
)

// realBook builds this repository's book (with its cache, .bookgen-cache,
// as `bookgen build` does, and bookgen's manual into site/manual/) once
// per test binary and returns the result. It builds the whole book, so it
// skips unless BOOKGEN_BROWSER_BOOK=1 (.ci/run sets it).
func realBook(t *testing.T) *build.Result {
	t.Helper()
	if os.Getenv("BOOKGEN_BROWSER_BOOK") != "1" {
		t.Skip("set BOOKGEN_BROWSER_BOOK=1 to read the real book in Chromium (builds the whole book)")
	}
	realBookOnce.Do(func() {
		root, err := build.FindRoot(filepath.Join("..", ".."))
		if err != nil {
			realBookErr = err
			return
		}
		realBookDir, err = os.MkdirTemp("", "bookgen-realbook-")
		if err != nil {
			realBookErr = err
			return
		}
		opt := build.Options{Root: root, Out: filepath.Join(realBookDir, "site")}
		realBookRes, realBookErr = build.Build(context.Background(), opt)
	})
	if realBookErr != nil {
		build.PrintError(testWriter{t}, realBookErr)
		t.Fatal("the book does not build")
	}
	return realBookRes
}

// sitePages returns the URL paths of every HTML page under the site
// folder dir (the book's chapters, print.html, 404.html, and the pages
// of the books built beside it, such as manual/), sorted.
func sitePages(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "assets" {
			return fs.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".html") {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, "/"+filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// overflowJS measures the page's sideways scroll: the scrolling element's
// scrollWidth against the viewport's width, and, when it is wider, the
// elements that reach past the viewport's right edge, widest
// overshoot first, each named by tag, class, its box's width and how far
// its right edge reaches. An element inside a box that scrolls or clips
// sideways does not widen the page and is not named.
const overflowJS = `(function () {
	var se = document.scrollingElement, vw = se.clientWidth;
	var r = {Scroll: se.scrollWidth, Viewport: vw, Culprits: []};
	if (se.scrollWidth <= vw) { return JSON.stringify(r); }
	// clipped: a box that scrolls or clips sideways holds e (one whose
	// containing block is inside it: an absolutely positioned element
	// escapes the boxes between it and its positioned ancestor); fixed:
	// e is in a fixed layer, which does not scroll with the page.
	function clipped(e) {
		var p = e.parentElement;
		if (getComputedStyle(e).position === "absolute" && e.offsetParent !== undefined) { p = e.offsetParent; }
		for (; p && p !== document.body && p !== document.documentElement; p = p.parentElement) {
			var st = getComputedStyle(p);
			if (st.overflowX !== "visible") { return true; }
			if (st.position === "absolute" && p.offsetParent !== undefined) { p = { parentElement: p.offsetParent }; }
		}
		return false;
	}
	function fixed(e) {
		for (var p = e; p && p !== document.documentElement; p = p.parentElement) {
			if (getComputedStyle(p).position === "fixed") { return true; }
		}
		return false;
	}
	var all = document.body.getElementsByTagName("*"), found = [];
	for (var i = 0; i < all.length; i++) {
		var e = all[i], b = e.getBoundingClientRect();
		if (b.width === 0 && b.height === 0) { continue; }
		var over = b.right + scrollX - vw;
		if (over <= 0.5 || clipped(e) || fixed(e)) { continue; }
		var cls = typeof e.className === "string" ? e.className : (e.getAttribute("class") || "");
		var text = (e.textContent || "").replace(/\s+/g, " ").trim().slice(0, 60);
		found.push({Idx: i, Tag: e.tagName.toLowerCase(), Class: cls, Width: Math.round(b.width), Right: Math.round(b.right + scrollX), Over: over, Text: text});
	}
	// Widest overshoot first; among equals the innermost (last in
	// document order), which is the one to fix.
	found.sort(function (a, b) { return b.Over - a.Over || b.Idx - a.Idx; });
	r.Culprits = found.slice(0, 5);
	return JSON.stringify(r);
})()`

type overflow struct {
	Scroll, Viewport float64
	Culprits         []struct {
		Tag, Class, Text   string
		Width, Right, Over float64
	}
}

func (o overflow) String() string {
	var s []string
	for _, c := range o.Culprits {
		s = append(s, fmt.Sprintf("<%s class=%q> %.0fpx wide, right edge at %.0fpx (%q)", c.Tag, c.Class, c.Width, c.Right, c.Text))
	}
	return strings.Join(s, "; ")
}

// measureOverflow reads overflowJS on the tab's page.
func measureOverflow(tb *tab) overflow {
	tb.t.Helper()
	var o overflow
	s := eval[string](tb, overflowJS)
	if err := json.Unmarshal([]byte(s), &o); err != nil {
		tb.t.Fatalf("%v (%s)", err, s)
	}
	return o
}

// layoutWidths are the windows every page of the book must fit: a laptop
// (1280 × 900, the sidebar and the page's contents beside the text) and a
// phone (390 × 844, an iPhone 12 to 15, at device scale 3) and a small
// one (360 × 780, many Android phones).
var layoutWidths = []struct {
	name          string
	width, height int64
	mobile        bool
}{
	{"desktop", 1280, 900, false},
	{"phone", 390, 844, true},
	{"small phone", 360, 780, true},
}

// TestNoSidewaysScrollRealBook opens every page of the real book's built
// site (chapters, print.html, 404.html and bookgen's manual) at a 1280px
// window and on 390px and 360px phones, in the light and the dark theme, and
// fails for each page whose document scrolls sideways
// (document.scrollingElement.scrollWidth above its clientWidth), naming
// the page and the elements that reach past the viewport. It then prints
// the pages (print media, an A4 page's 718px column) and checks the same.
func TestNoSidewaysScrollRealBook(t *testing.T) {
	res := realBook(t)
	bctx := newBrowser(t)
	srv := serveSite(t, res.Out)
	pages := sitePages(t, res.Out)
	if len(pages) < 10 {
		t.Fatalf("the site has %d pages: %v", len(pages), pages)
	}
	tb := newTab(t, bctx)
	for _, w := range layoutWidths {
		for _, dark := range []bool{false, true} {
			theme := map[bool]string{false: "light", true: "dark"}[dark]
			opts := []chromedp.EmulateViewportOption{}
			if w.mobile {
				opts = append(opts, chromedp.EmulateMobile, chromedp.EmulateScale(3))
			}
			tb.do(chromedp.EmulateViewport(w.width, w.height, opts...))
			prefersDark(tb, dark)
			for _, p := range pages {
				tb.navigate(srv.URL + p)
				if o := measureOverflow(tb); o.Scroll > o.Viewport {
					t.Errorf("%s at %dpx (%s, %s theme): the page scrolls sideways, %.0fpx in a %.0fpx viewport; widest: %s",
						p, w.width, w.name, theme, o.Scroll, o.Viewport, o)
				}
			}
		}
	}
	// Words hidden for the eye at the end of a row of a table that
	// scrolls sideways (a passing check's "(check passed in this
	// build)") do not widen the page.
	tb.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateScale(3)))
	tb.navigate(srv.URL + "/index.html")
	tb.do(chromedp.Evaluate[chromedp.Void](`(function () {
		var t = document.createElement("table"), td = document.createElement("td"), tr = document.createElement("tr");
		var code = document.createElement("code"), hid = document.createElement("span");
		code.textContent = "x".repeat(200); td.style.whiteSpace = "nowrap";
		hid.className = "visually-hidden"; hid.textContent = " (check passed in this build)";
		td.append(code, hid); tr.append(td); t.append(tr);
		document.querySelector(".chapter").append(t);
	})()`))
	if o := measureOverflow(tb); o.Scroll > o.Viewport {
		t.Errorf("a table scrolling sideways with hidden words at its end widens the page to %.0fpx at 390px: %s", o.Scroll, o)
	} else if w := eval[float64](tb, `document.querySelector(".chapter table:last-child").scrollWidth`); w < 800 {
		t.Errorf("the test's table is %.0fpx wide, not wider than the screen: it tests nothing", w)
	}

	// Print: an A4 page at 96 dpi is 794px wide; Chromium's default
	// margins (1cm) leave 718px.
	tb.do(chromedp.EmulateViewport(718, 1000))
	call(tb, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: "print"})
	defer call(tb, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: ""})
	for _, p := range pages {
		tb.navigate(srv.URL + p)
		if o := measureOverflow(tb); o.Scroll > o.Viewport {
			t.Errorf("%s printed (718px column): the page is %.0fpx wide; widest: %s", p, o.Scroll, o)
		}
		// Paper does not scroll: a box that would scroll sideways on
		// screen cuts its content off in print.
		cut := eval[[]string](tb, `Array.prototype.filter.call(document.body.getElementsByTagName("*"), function (e) {
			var o = getComputedStyle(e).overflowX;
			return o !== "visible" && o !== "clip" && e.scrollWidth > e.clientWidth + 1 && e.getClientRects().length > 0 && !e.closest(".visually-hidden");
		}).slice(0, 5).map(function (e) {
			return "<" + e.tagName.toLowerCase() + " class=\"" + (e.getAttribute("class") || "") + "\"> " + e.scrollWidth + "px in " + e.clientWidth + "px (" + e.textContent.replace(/\s+/g, " ").trim().slice(0, 50) + ")";
		})`)
		for _, c := range cut {
			t.Errorf("%s printed (718px column): a box cuts its content off: %s", p, c)
		}
	}
	tb.do(chromedp.EmulateViewport(1280, 900))
}

// checksTableJS measures the Reference's table of checks: its rows, how
// far it and its cells overflow (a cell's content wider than the cell, the
// table wider than its box or than the text column), and where its
// header is after the page is scrolled to the table's middle.
const checksTableJS = `(function () {
	var t = document.querySelector("table.checks-table");
	if (!t) { return JSON.stringify({Rows: -1}); }
	var col = t.parentElement.getBoundingClientRect(), tr = t.getBoundingClientRect();
	var r = {Rows: t.querySelectorAll("tbody tr").length, TableScroll: t.scrollWidth, TableClient: t.clientWidth,
		TableRight: tr.right, ColumnRight: col.right, Cells: []};
	t.querySelectorAll("th, td").forEach(function (c) {
		var b = c.getBoundingClientRect();
		if (c.scrollWidth > c.clientWidth + 1 || b.right > col.right + 1) {
			r.Cells.push({Text: c.textContent.replace(/\s+/g, " ").trim().slice(0, 60), Width: b.width, Scroll: c.scrollWidth, Right: b.right});
		}
	});
	var mid = t.querySelectorAll("tbody tr")[Math.floor(r.Rows / 2)];
	mid.scrollIntoView({block: "center"});
	var th = t.querySelector("thead th"), bar = document.querySelector(".topbar");
	r.HeaderTop = th.getBoundingClientRect().top;
	r.HeaderShown = th.getClientRects().length > 0 && getComputedStyle(t.querySelector("thead")).clip !== "rect(0px, 0px, 0px, 0px)";
	r.BarBottom = bar && getComputedStyle(bar).display !== "none" ? bar.getBoundingClientRect().bottom : 0;
	return JSON.stringify(r);
})()`

// TestChecksTableRealBook reads the Reference's table of every check on
// the real book's site at a 1280px window, on a 390px phone and printed
// (718px): it holds every claim (over 100 rows), neither it nor any of its
// cells is wider than its box or than the text column (so nothing scrolls
// sideways and no column is cut on paper), and on a desktop its header
// stays under the top bar when the page is scrolled to the middle of the
// table. Screenshots: checks-desktop.png, checks-phone.png.
func TestChecksTableRealBook(t *testing.T) {
	res := realBook(t)
	bctx := newBrowser(t)
	srv := serveSite(t, res.Out)
	tb := newTab(t, bctx)
	type cell struct {
		Text                 string
		Width, Scroll, Right float64
	}
	type measure struct {
		Rows                                              int
		TableScroll, TableClient, TableRight, ColumnRight float64
		HeaderTop, BarBottom                              float64
		HeaderShown                                       bool
		Cells                                             []cell
	}
	for _, w := range []struct {
		name          string
		width, height int64
		mobile, print bool
	}{
		{"desktop", 1280, 900, false, false},
		{"phone", 390, 844, true, false},
		{"print", 718, 1000, false, true},
	} {
		opts := []chromedp.EmulateViewportOption{}
		if w.mobile {
			opts = append(opts, chromedp.EmulateMobile, chromedp.EmulateScale(3))
		}
		tb.do(chromedp.EmulateViewport(w.width, w.height, opts...))
		media := ""
		if w.print {
			media = "print"
		}
		call(tb, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: media})
		tb.navigate(srv.URL + "/reference.html")
		var m measure
		s := eval[string](tb, checksTableJS)
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatalf("%v (%s)", err, s)
		}
		where := fmt.Sprintf("reference.html at %dpx (%s)", w.width, w.name)
		if m.Rows < 100 {
			t.Fatalf("%s: the table of checks has %d rows, want every claim (over 100)", where, m.Rows)
		}
		if m.TableScroll > m.TableClient+1 || m.TableRight > m.ColumnRight+1 {
			t.Errorf("%s: the table of checks is %.0fpx wide in a %.0fpx box, its right edge at %.0fpx past the column's %.0fpx",
				where, m.TableScroll, m.TableClient, m.TableRight, m.ColumnRight)
		}
		for i, c := range m.Cells {
			if i == 5 {
				t.Errorf("%s: and %d more cells", where, len(m.Cells)-5)
				break
			}
			t.Errorf("%s: a cell holds %.0fpx in %.0fpx (right edge %.0fpx, column's %.0fpx): %q", where, c.Scroll, c.Width, c.Right, m.ColumnRight, c.Text)
		}
		if w.name == "desktop" {
			if !m.HeaderShown || m.HeaderTop < m.BarBottom-1 || m.HeaderTop > m.BarBottom+1 {
				t.Errorf("%s: scrolled to the table's middle, its header's top is at %.0fpx (shown %v), want it under the top bar at %.0fpx",
					where, m.HeaderTop, m.HeaderShown, m.BarBottom)
			}
		}
		if !w.print {
			tb.screenshot("checks-" + w.name + ".png")
		}
	}
	call(tb, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: ""})
	tb.do(chromedp.EmulateViewport(1280, 900))
}
