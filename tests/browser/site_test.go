package browser

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// chapters of testdata/book in reading order, as site paths.
var chapters = []string{"intro.html", "epochs.html", "fencing/tokens.html", "streams.html"}

// darkBG and lightBG are the page backgrounds of the two themes
// (theme/book.css --bg).
const (
	darkBG  = "rgb(13, 17, 23)"
	lightBG = "rgb(255, 255, 255)"
)

// prefersDark emulates the reader's system setting.
func prefersDark(tb *tab, dark bool) {
	v := "light"
	if dark {
		v = "dark"
	}
	call(tb, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: v}},
	})
}

// TestSite reads the built fixture book in Chromium, served with
// netlify.toml's headers: the index, navigation by the sidebar and by ←/→,
// search with the keyboard to a highlighted anchor, the theme switch and
// its memory, the shortcuts dialog, code blocks, print.html, the 404 page,
// the mobile drawer, the sidebar's scroll position, the skip link, and the
// pages without JavaScript. No page may log a console error (CSP
// violations included) or request anything from another host.
func TestSite(t *testing.T) {
	start := time.Now()
	bctx := newBrowser(t)
	site := buildSite(t, fixture(t))
	srv := serveSite(t, site)
	base := srv.URL + "/"
	tb := newTab(t, bctx)
	prefersDark(tb, false)
	// Record the theme at the moment <body> appears: theme.js in <head>
	// must have set it before anything is painted.
	call(tb, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `
		new MutationObserver(function (m, o) {
			if (document.body) {
				window.__themeAtBody = document.documentElement.getAttribute("data-theme") || "";
				o.disconnect();
			}
		}).observe(document, {childList: true, subtree: true});`})

	t.Run("index", func(t *testing.T) {
		tb.t = t
		tb.navigate(base)
		if got := eval[string](tb, `document.title`); got != "Browser fixture" {
			t.Errorf("index title %q", got)
		}
		if got := eval[string](tb, `document.querySelector(".chapter h1").textContent`); !strings.HasPrefix(got, "Introduction") {
			t.Errorf("index shows %q, want the first chapter", got)
		}
		for _, landmark := range []string{"header", "nav.sidebar", "main#content", "footer", "aside.page-toc, details.toc-inline, main"} {
			if !eval[bool](tb, `!!document.querySelector(`+jsString(landmark)+`)`) {
				t.Errorf("no %s landmark", landmark)
			}
		}
		tb.noConsoleErrors("index")
	})

	t.Run("sidebar and arrow keys", func(t *testing.T) {
		tb.t = t
		tb.do(chromedp.Click(chromedp.CSS(`nav.sidebar a[href="epochs.html"]`)))
		tb.waitPage("/epochs.html")
		if !eval[bool](tb, `document.querySelector('nav.sidebar a[aria-current=page]').getAttribute("href") === "epochs.html"`) {
			t.Error("sidebar does not mark epochs.html as the current page")
		}
		tb.key(kb.ArrowRight)
		tb.waitPage("/fencing/tokens.html")
		tb.key(kb.ArrowRight)
		tb.waitPage("/streams.html")
		tb.key(kb.ArrowLeft)
		tb.waitPage("/fencing/tokens.html")
		tb.key(kb.ArrowLeft)
		tb.waitPage("/epochs.html")
		tb.noConsoleErrors("navigation")
	})

	t.Run("table column alignment under the CSP", func(t *testing.T) {
		tb.t = t
		tb.navigate(base + "streams.html")
		got := eval[string](tb, `Array.prototype.map.call(document.querySelectorAll(".chapter table tr:first-child th"), function (c) { return getComputedStyle(c).textAlign; }).join(" ")`)
		if got != "left center right" {
			t.Errorf("header cells aligned %q, want \"left center right\" (from :--, :-: and --:)", got)
		}
		tb.noConsoleErrors("aligned table")
	})

	t.Run("search", func(t *testing.T) {
		tb.t = t
		// Start on a page of its own, loaded now (not whatever the last
		// subtest left, which may be the page search will open).
		tb.navigate(base + "epochs.html")
		loaded := `performance.getEntriesByType("resource").some(function (e) { return /assets\/search\.[0-9a-f]+\.json$/.test(e.name); })`
		if eval[bool](tb, loaded) {
			t.Error("the search index loaded before search was opened")
		}
		tb.key("/")
		tb.waitTrue("search dialog open", `document.getElementById("search-dialog").open && document.activeElement.id === "search-input"`, 15*time.Second)
		tb.key("epoch")
		if got := eval[string](tb, `document.getElementById("search-input").value`); got != "epoch" {
			t.Errorf("search field holds %q after / and epoch, want epoch (the shortcut must not be typed)", got)
		}
		tb.waitTrue("results for epoch", `document.querySelectorAll("#search-results [role=option]").length >= 2`, 20*time.Second)
		if !eval[bool](tb, loaded) {
			t.Error("search works but the index was not fetched")
		}
		selected := `Array.prototype.findIndex.call(document.querySelectorAll("#search-results [role=option]"), function (li) { return li.getAttribute("aria-selected") === "true"; })`
		if got := eval[int](tb, selected); got != 0 {
			t.Errorf("selected result %d, want 0", got)
		}
		tb.key(kb.ArrowDown)
		if got := eval[int](tb, selected); got != 1 {
			t.Errorf("after ↓: selected result %d, want 1", got)
		}
		tb.key(kb.ArrowUp)
		if got := eval[int](tb, selected); got != 0 {
			t.Errorf("after ↑: selected result %d, want 0", got)
		}
		crumbs := eval[string](tb, `document.querySelector("#search-results .search-crumbs").textContent`)
		if !strings.Contains(crumbs, "Basics") && !strings.Contains(crumbs, "Introduction") {
			t.Errorf("first result's breadcrumbs %q name no part or chapter", crumbs)
		}
		tb.key(kb.Escape)
		tb.waitTrue("Esc closes search", `!document.getElementById("search-dialog").open`, 15*time.Second)

		// A term found in one section only: Enter goes to its anchor and
		// the page marks the term.
		tb.key("s")
		tb.waitTrue("search dialog open with s", `document.getElementById("search-dialog").open`, 15*time.Second)
		if got := eval[string](tb, `(function(){var i=document.getElementById("search-input"); return i.value.slice(i.selectionStart, i.selectionEnd);})()`); got != "epoch" {
			t.Errorf("reopened search: selected text %q, want the last query (epoch) selected to be typed over", got)
		}
		tb.key("sequencer")
		tb.waitTrue("results for sequencer", `document.querySelector("#search-results [aria-selected=true] a") !== null && document.querySelector("#search-results [aria-selected=true] a").href.indexOf("streams.html") >= 0`, 20*time.Second)
		tb.screenshot("search-open.png")
		tb.markPage()
		tb.key(kb.Enter)
		tb.waitNewPage("/streams.html")
		if got := eval[string](tb, `location.hash`); got != "#the-sequencer" {
			t.Errorf("result opened at %q, want #the-sequencer", got)
		}
		marks := eval[[]string](tb, `Array.prototype.map.call(document.querySelectorAll("mark.search-hit"), function (m) { return m.textContent.toLowerCase(); })`)
		if len(marks) == 0 || !strings.HasPrefix(marks[0], "sequencer") {
			t.Errorf("marked terms %q, want sequencer", marks)
		}
		if !eval[bool](tb, `(function(){var r=document.getElementById("the-sequencer").getBoundingClientRect(); return r.top >= 0 && r.top < innerHeight;})()`) {
			t.Error("the result's heading is not in view")
		}
		tb.noConsoleErrors("search")
	})

	t.Run("search from a chapter in a folder", func(t *testing.T) {
		tb.t = t
		tb.navigate(base + "fencing/tokens.html")
		tb.key("/")
		tb.waitTrue("search dialog open", `document.getElementById("search-dialog").open && document.activeElement.id === "search-input"`, 15*time.Second)
		tb.do(chromedp.Evaluate[chromedp.Void](`(function(){var i=document.getElementById("search-input"); i.value=""; })()`))
		tb.key("sequencer")
		tb.waitTrue("results for sequencer", `document.querySelector("#search-results [aria-selected=true] a") !== null`, 20*time.Second)
		if got := eval[string](tb, `(function(){var a=document.querySelector("#search-results [aria-selected=true] a"); return a.origin + a.pathname + a.hash;})()`); got != base+"streams.html#the-sequencer" {
			t.Errorf("from fencing/tokens.html the result links to %q, want %q", got, base+"streams.html#the-sequencer")
		}
		tb.key(kb.Escape)
		tb.waitTrue("Esc closes search", `!document.getElementById("search-dialog").open`, 15*time.Second)
		tb.noConsoleErrors("search from a folder")
	})

	t.Run("shortcuts", func(t *testing.T) {
		tb.t = t
		tb.navigate(base + "epochs.html")
		tb.key("?")
		tb.waitTrue("shortcuts dialog", `document.getElementById("help-dialog").open`, 15*time.Second)
		if got := eval[string](tb, `document.getElementById("help-dialog").textContent`); !strings.Contains(got, "Previous and next chapter") {
			t.Errorf("shortcuts dialog says %q", got)
		}
		tb.key(kb.Escape)
		tb.waitTrue("Esc closes the shortcuts", `!document.getElementById("help-dialog").open`, 15*time.Second)
		tb.noConsoleErrors("shortcuts")
	})

	t.Run("theme", func(t *testing.T) {
		tb.t = t
		tb.navigate(base + "epochs.html")
		bg := `getComputedStyle(document.body).backgroundColor`
		if got := eval[string](tb, bg); got != lightBG {
			t.Errorf("light system, no choice: background %s, want %s", got, lightBG)
		}
		tb.screenshot("chapter-light.png")
		tb.do(chromedp.Click(chromedp.CSS(".theme-toggle")))
		if got := eval[string](tb, `document.documentElement.getAttribute("data-theme")`); got != "dark" {
			t.Fatalf("after the switch: data-theme %q, want dark", got)
		}
		tb.do(chromedp.Reload())
		if got := eval[string](tb, bg); got != darkBG {
			t.Errorf("after a reload the dark choice did not stick: background %s", got)
		}
		if got := eval[string](tb, `window.__themeAtBody`); got != "dark" {
			t.Errorf("data-theme was %q when <body> appeared, want dark (the page would flash light)", got)
		}
		if got := eval[string](tb, `document.querySelector(".theme-toggle").getAttribute("aria-pressed")`); got != "true" {
			t.Errorf("theme switch aria-pressed=%s in dark", got)
		}
		tb.screenshot("chapter-dark.png")
		// Another page remembers it too.
		tb.navigate(base + "streams.html")
		if got := eval[string](tb, bg); got != darkBG {
			t.Errorf("another page: background %s, want dark", got)
		}
		// Back to light, then no choice at all: the system's dark applies.
		tb.do(chromedp.Click(chromedp.CSS(".theme-toggle")))
		tb.do(chromedp.Reload())
		if got := eval[string](tb, bg); got != lightBG {
			t.Errorf("light chosen and reloaded: background %s", got)
		}
		eval[bool](tb, `(localStorage.removeItem("bookgen-theme"), true)`)
		prefersDark(tb, true)
		tb.navigate(base + "epochs.html")
		if got := eval[string](tb, bg); got != darkBG {
			t.Errorf("dark system, no choice: background %s, want dark", got)
		}
		if got := eval[string](tb, `getComputedStyle(document.querySelector(".chroma .kd, .chroma .kt, .chroma .k")).color`); got == "" || got == "rgb(0, 0, 0)" {
			t.Errorf("dark code keyword color %q", got)
		}
		prefersDark(tb, false)
		tb.do(chromedp.Reload())
		tb.noConsoleErrors("theme")
	})

	t.Run("code blocks", func(t *testing.T) {
		tb.t = t
		tb.navigate(base + "epochs.html")
		blocks := eval[int](tb, `document.querySelectorAll(".chapter .code-block").length`)
		copies := eval[int](tb, `document.querySelectorAll(".chapter .code-block > .copy-button").length`)
		if blocks < 4 || copies != blocks {
			t.Errorf("%d code blocks, %d copy buttons", blocks, copies)
		}
		if n := eval[int](tb, `document.querySelectorAll(".chapter .chroma .hl").length`); n != 1 {
			t.Errorf("%d highlighted lines, want 1 (hl_lines=2)", n)
		}
		if n := eval[int](tb, `document.querySelectorAll(".chapter .chroma .lnt, .chapter .chroma .ln").length`); n != 3 {
			t.Errorf("%d line numbers, want 3 (linenos)", n)
		}
		tries := eval[[]string](tb, `Array.prototype.map.call(document.querySelectorAll(".code-try code"), function (c) { return c.textContent; })`)
		if strings.Join(tries, "|") != "go test ./examples/epoch|go run ./examples/epoch/demo" {
			t.Errorf("try-it lines %q", tries)
		}
		views := eval[[]string](tb, `Array.prototype.map.call(document.querySelectorAll("a.code-view"), function (a) { return a.href; })`)
		if len(views) != 2 || !strings.HasPrefix(views[0], "https://github.com/example/browserbook/blob/main/examples/epoch/epoch.go#L") {
			t.Errorf("view-source links %q", views)
		}
		if got := eval[string](tb, `document.querySelector(".topbar-edit").href`); got != "https://github.com/example/browserbook/edit/main/book/epochs.md" {
			t.Errorf("edit link %q", got)
		}
		// The in-page table of contents of a long chapter.
		if n := eval[int](tb, `document.querySelectorAll(".page-toc a").length`); n < 4 {
			t.Errorf("on-this-page column lists %d headings", n)
		}
		tb.noConsoleErrors("code blocks")
	})

	t.Run("print", func(t *testing.T) {
		tb.t = t
		tb.navigate(base + "print.html")
		ids := eval[[]string](tb, `Array.prototype.map.call(document.querySelectorAll("section.print-chapter"), function (s) { return s.id; })`)
		if strings.Join(ids, " ") != "intro epochs fencing-tokens streams" {
			t.Errorf("print.html chapters %q, want every chapter in order", ids)
		}
		broken := eval[[]string](tb, `Array.prototype.filter.call(document.querySelectorAll(".chapter a[href^='#']"), function (a) {
			return !document.getElementById(decodeURIComponent(a.getAttribute("href").slice(1)));
		}).map(function (a) { return a.getAttribute("href"); })`)
		if len(broken) > 0 {
			t.Errorf("print.html links to missing anchors: %q", broken)
		}
		outside := eval[[]string](tb, `Array.prototype.filter.call(document.querySelectorAll(".chapter a[href$='.html'], .chapter a[href*='.html#']"), function (a) { return a.host === location.host; }).map(function (a) { return a.getAttribute("href"); })`)
		if len(outside) > 0 {
			t.Errorf("print.html still links to chapter pages: %q", outside)
		}
		if n := eval[int](tb, `document.querySelectorAll(".chapter a:not(.anchor)[href='#streams--the-sequencer']").length`); n != 1 {
			t.Errorf("%d links to #streams--the-sequencer, want 1 (intro's link, rewritten)", n)
		}
		checkImages(t, tb, "print.html", 2)
		tb.noConsoleErrors("print")
	})

	t.Run("images of a chapter in a folder", func(t *testing.T) {
		tb.t = t
		tb.navigate(base + "fencing/tokens.html")
		checkImages(t, tb, "fencing/tokens.html", 2)
		tb.noConsoleErrors("nested chapter images")
	})

	t.Run("404", func(t *testing.T) {
		tb.t = t
		ctxResp, err := chromedp.Run(tb.ctx, chromedp.NavigateResponse(base+"no/such/page.html"))
		if err != nil {
			t.Fatal(err)
		}
		if ctxResp.Status != http.StatusNotFound {
			t.Errorf("missing page: status %d", ctxResp.Status)
		}
		if got := eval[string](tb, `document.querySelector(".chapter h1").textContent`); !strings.HasPrefix(got, "Page not found") {
			t.Errorf("missing page shows %q", got)
		}
		if got := eval[string](tb, `getComputedStyle(document.querySelector(".sidebar")).position`); got != "sticky" {
			t.Errorf("404 page unstyled (sidebar position %q): its asset links must work from any folder", got)
		}
		tb.noConsoleErrors("404", "status of 404")
	})

	t.Run("sidebar keeps its scroll position", func(t *testing.T) {
		tb.t = t
		tb.do(chromedp.EmulateViewport(1100, 300))
		tb.navigate(base + "intro.html")
		if !eval[bool](tb, `(function(){var s=document.getElementById("sidebar"); return s.scrollHeight > s.clientHeight + 40;})()`) {
			t.Fatal("the sidebar does not scroll at this height; the test cannot tell")
		}
		eval[bool](tb, `(document.getElementById("sidebar").scrollTop = 37, true)`)
		tb.do(chromedp.Evaluate[chromedp.Void](`document.querySelector('nav.sidebar a[href="streams.html"]').click()`, chromedp.EvalIgnoreExceptions))
		tb.waitPage("/streams.html")
		if got := eval[int](tb, `Math.round(document.getElementById("sidebar").scrollTop)`); got != 37 {
			t.Errorf("sidebar scrollTop %d on the next page, want 37", got)
		}
		tb.noConsoleErrors("sidebar scroll")
	})

	t.Run("mobile drawer", func(t *testing.T) {
		tb.t = t
		tb.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateScale(2)))
		tb.navigate(base + "epochs.html")
		right := `document.getElementById("sidebar").getBoundingClientRect().right`
		if got := eval[float64](tb, right); got > 1 {
			t.Errorf("narrow screen: sidebar visible (right edge %v)", got)
		}
		if !eval[bool](tb, `getComputedStyle(document.querySelector("details.toc-inline")).display !== "none"`) {
			t.Error("narrow screen: no in-page table of contents for a long chapter")
		}
		tb.do(chromedp.Click(chromedp.CSS(".menu-toggle")))
		tb.waitTrue("drawer opens", right+` > 200 && document.querySelector(".menu-toggle").getAttribute("aria-expanded") === "true"`, 15*time.Second)
		time.Sleep(300 * time.Millisecond) // the slide-in transition
		tb.screenshot("mobile-drawer.png")
		tb.key(kb.Escape)
		tb.waitTrue("Esc closes the drawer", right+` <= 1`, 15*time.Second)
		tb.screenshot("mobile-chapter.png")
		tb.do(chromedp.EmulateViewport(1280, 900))
		tb.noConsoleErrors("mobile")
	})

	t.Run("skip link and focus", func(t *testing.T) {
		tb.t = t
		tb.navigate(base + "epochs.html")
		tb.key(kb.Tab)
		if got := eval[string](tb, `document.activeElement.className`); got != "skip-link" {
			t.Fatalf("first Tab focuses %q, want the skip link", got)
		}
		if !eval[bool](tb, `document.activeElement.getBoundingClientRect().top >= 0`) {
			t.Error("focused skip link is not visible")
		}
		if got := eval[string](tb, `getComputedStyle(document.activeElement).outlineStyle`); got == "none" {
			t.Error("focused skip link has no outline")
		}
		tb.key(kb.Enter)
		tb.waitTrue("skip link moves focus to main", `document.activeElement.id === "content"`, 15*time.Second)
		tb.noConsoleErrors("focus")
	})

	t.Run("without JavaScript", func(t *testing.T) {
		nj := newTab(t, bctx)
		call(nj, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		prefersDark(nj, true)
		nj.navigate(base + "epochs.html")
		if got := eval[string](nj, `getComputedStyle(document.body).backgroundColor`); got != darkBG {
			t.Errorf("no script, dark system: background %s, want dark", got)
		}
		if eval[bool](nj, `!!document.querySelector(".copy-button")`) {
			t.Error("copy buttons without script?")
		}
		if !eval[bool](nj, `getComputedStyle(document.querySelector(".search-toggle")).display === "none"`) {
			t.Error("the search button shows although search cannot work without script")
		}
		if n := eval[int](nj, `document.querySelectorAll("nav.sidebar .toc a").length`); n != len(chapters) {
			t.Errorf("sidebar has %d links, want %d", n, len(chapters))
		}
		// The drawer opens through #sidebar (:target).
		nj.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
		nj.navigate(base + "epochs.html")
		nj.do(chromedp.Click(chromedp.CSS(".menu-toggle")))
		nj.waitTrue("drawer opens without script", `location.hash === "#sidebar" && document.getElementById("sidebar").getBoundingClientRect().right > 200`, 15*time.Second)
		nj.noConsoleErrors("no script")
		checkRequests(t, nj, srv.URL)
	})

	checkRequests(t, tb, srv.URL)
	t.Logf("browser checks took %s", time.Since(start).Round(time.Millisecond))
}

// checkRequests fails for every request of the tab that left the site.
func checkRequests(t *testing.T, tb *tab, base string) {
	t.Helper()
	reqs := tb.requested()
	for _, u := range reqs {
		if !strings.HasPrefix(u, base+"/") && !strings.HasPrefix(u, "data:") && u != "about:blank" {
			t.Errorf("request left the site: %s", u)
		}
	}
	if len(reqs) == 0 {
		t.Error("no requests recorded; the check would be empty")
	}
}

// TestConsoleCheckSeesCSPViolations makes sure the console check is not
// empty: a page with an inline script under netlify.toml's policy must
// produce a recorded problem.
func TestConsoleCheckSeesCSPViolations(t *testing.T) {
	bctx := newBrowser(t)
	dir := t.TempDir()
	writeFile(t, dir+"/index.html", `<!DOCTYPE html><html><head><title>x</title></head><body><script>document.title = "ran"</script><p>x</p></body></html>`)
	writeFile(t, dir+"/404.html", "missing")
	srv := serveSite(t, dir)
	tb := newTab(t, bctx)
	tb.navigate(srv.URL + "/")
	if eval[string](tb, `document.title`) == "ran" {
		t.Error("the inline script ran: netlify.toml's Content-Security-Policy did not apply")
	}
	deadline := time.Now().Add(5 * time.Second)
	var msgs []string
	for len(msgs) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		msgs = tb.messages()
	}
	if len(msgs) == 0 || !strings.Contains(strings.Join(msgs, "\n"), "Content Security Policy") {
		t.Errorf("console problems %q, want a Content Security Policy violation", msgs)
	}
}

// checkImages waits for the images in the open page's chapter text to load
// and fails for any that did not (a relative path broken by the page's
// folder, or by print.html's rewriting), or when there are fewer than want.
func checkImages(t *testing.T, tb *tab, page string, want int) {
	t.Helper()
	tb.waitTrue(page+" images settled", `Array.prototype.every.call(document.querySelectorAll(".chapter img"), function (i) { return i.complete; })`, 15*time.Second)
	broken := eval[[]string](tb, `Array.prototype.filter.call(document.querySelectorAll(".chapter img"), function (i) { return i.naturalWidth === 0; }).map(function (i) { return i.getAttribute("src"); })`)
	if len(broken) > 0 {
		t.Errorf("%s: images that did not load: %q", page, broken)
	}
	if n := eval[int](tb, `document.querySelectorAll(".chapter img").length`); n < want {
		t.Errorf("%s: %d images, want %d", page, n, want)
	}
}

func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
