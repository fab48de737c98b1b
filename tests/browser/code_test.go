package browser

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/expand"
	"github.com/ownership-book/ownership/internal/markdown"
	"github.com/ownership-book/ownership/internal/render"
	"github.com/ownership-book/ownership/internal/site"
	"github.com/ownership-book/ownership/internal/verify"
)

// writeUnverified writes the site of the book at root without running its
// checks, so that a test can look at the real book's pages in a second
// rather than after every example has run. Each fenced block is given the
// verdict a passing verification gives it (Ignored for a block marked
// ignore, Checked for the others): the renderer refuses a go or console
// block without a verdict, and the pages are otherwise the same.
func writeUnverified(t *testing.T, root string) string {
	t.Helper()
	b, err := book.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := expand.All(b)
	if err != nil {
		t.Fatal(err)
	}
	var verdicts []verify.BlockVerdict
	for _, d := range docs {
		for i, blk := range markdown.FindBlocks(d.Markdown) {
			v := verify.Checked
			if _, ok := blk.Attrs["ignore"]; ok {
				v = verify.Ignored
			}
			verdicts = append(verdicts, verify.BlockVerdict{Chapter: d.Chapter.Path, Index: i, Line: blk.Line, Info: blk.Info, Verdict: v})
		}
	}
	r := render.New(b)
	r.SetVerdicts(verdicts)
	pages := make([]*render.Page, len(docs))
	for i, d := range docs {
		if pages[i], err = r.Render(d); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "site")
	if _, err := site.Write(b, pages, out, site.Options{}); err != nil {
		t.Fatal(err)
	}
	return out
}

// clippedCode is a script that returns, for every code block of the page,
// a description of any content the reader cannot see: a block wider than
// its scroll box whose overflow is not scrollable, a line taller than the
// box (hidden lines), or a block that sticks out of the viewport or of
// the page's main column.
const clippedCode = `(function () {
  var out = [], vw = document.documentElement.clientWidth;
  var main = document.querySelector("main").getBoundingClientRect();
  document.querySelectorAll(".code-block pre").forEach(function (pre, i) {
    var cs = getComputedStyle(pre), r = pre.getBoundingClientRect();
    var first = (pre.textContent.split("\n")[0] || "").slice(0, 40);
    var name = "block " + i + " (" + JSON.stringify(first) + ")";
    if (pre.scrollWidth > pre.clientWidth + 1)
      out.push(name + ": content " + pre.scrollWidth + "px wide in a " + pre.clientWidth + "px box (overflow-x " + cs.overflowX + ", white-space " + cs.whiteSpace + ")");
    if (pre.scrollHeight > pre.clientHeight + 1)
      out.push(name + ": content " + pre.scrollHeight + "px tall in a " + pre.clientHeight + "px box");
    if (r.right > vw + 1 || r.left < -1)
      out.push(name + ": spans " + Math.round(r.left) + "-" + Math.round(r.right) + "px of a " + vw + "px viewport");
    if (r.right > main.right + 1 || r.left < main.left - 1)
      out.push(name + ": spans " + Math.round(r.left) + "-" + Math.round(r.right) + "px, outside the main column " + Math.round(main.left) + "-" + Math.round(main.right) + "px");
  });
  return out;
})()`

// TestCodeNotClipped loads every page of the real book at three window
// widths (desktop 1280 and 1024 px, a 390 px phone) and fails for any
// code block whose content is not all visible: every line wraps inside
// its box rather than hiding behind its edge.
func TestCodeNotClipped(t *testing.T) {
	bctx := newBrowser(t)
	out := writeUnverified(t, filepath.Join("..", ".."))
	srv := serveSite(t, out)
	pages, err := filepath.Glob(filepath.Join(out, "*.html"))
	if err != nil {
		t.Fatal(err)
	}
	tb := newTab(t, bctx)
	for _, w := range []struct {
		width, height int
		mobile        bool
	}{{1280, 900, false}, {1024, 768, false}, {390, 844, true}} {
		t.Run(fmt.Sprint(w.width), func(t *testing.T) {
			tb.t = t
			opts := []chromedp.EmulateViewportOption{}
			if w.mobile {
				opts = append(opts, chromedp.EmulateMobile)
			}
			tb.do(chromedp.EmulateViewport(int64(w.width), int64(w.height), opts...))
			blocks := 0
			for _, p := range pages {
				name := filepath.Base(p)
				if name == "404.html" {
					continue
				}
				tb.navigate(srv.URL + "/" + name)
				blocks += eval[int](tb, `document.querySelectorAll(".code-block pre").length`)
				for _, c := range eval[[]string](tb, clippedCode) {
					t.Errorf("%s at %dpx: %s", name, w.width, c)
				}
			}
			if blocks < 20 {
				t.Errorf("only %d code blocks in the book's pages; is the selector right?", blocks)
			}
		})
	}
}

// TestCopyButtonCopiesExactly clicks the copy button of each code block of
// testdata/unusual (Go, text, no language, console) and compares what it
// hands the clipboard with the block's source in the chapter, byte for
// byte: no blank line between lines, indentation and blank lines kept; a
// console block's commands without their prompts.
func TestCopyButtonCopiesExactly(t *testing.T) {
	bctx := newBrowser(t)
	root := filepath.Join(t.TempDir(), "unusual")
	copyDir(t, filepath.Join("testdata", "unusual"), root)
	srv := serveSite(t, buildSite(t, root))
	src, err := os.ReadFile(filepath.Join(root, "book", "code.md"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, part := range strings.Split(string(src), "```")[1:] {
		if body, ok := strings.CutPrefix(part, "go\n"); ok {
			want = append(want, body)
		} else if body, ok := strings.CutPrefix(part, "text\n"); ok {
			want = append(want, body)
		} else if body, ok := strings.CutPrefix(part, "console ignore\n"); ok {
			// A console block copies its commands, without "$ ".
			var cmds []string
			for _, l := range strings.Split(body, "\n") {
				if c, ok := strings.CutPrefix(l, "$ "); ok {
					cmds = append(cmds, c)
				}
			}
			want = append(want, strings.Join(cmds, "\n"))
		} else if body, ok := strings.CutPrefix(part, "\n"); ok && strings.TrimSpace(body) != "" && !strings.HasPrefix(body, "\n") {
			want = append(want, body)
		}
	}
	if len(want) != 4 {
		t.Fatalf("found %d blocks in code.md, want 4", len(want))
	}
	tb := newTab(t, bctx)
	tb.navigate(srv.URL + "/code.html")
	// Record what the page writes to the clipboard: headless Chromium has
	// no system clipboard to paste from.
	tb.do(chromedp.Evaluate[chromedp.Void](`window.__copied = []; navigator.clipboard.writeText = function (s) { window.__copied.push(s); return Promise.resolve(); };`))
	n := eval[int](tb, `document.querySelectorAll(".code-block .copy-button").length`)
	if n != len(want) {
		t.Fatalf("%d copy buttons, want %d", n, len(want))
	}
	for i := range want {
		tb.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelectorAll(".code-block .copy-button")[%d].click()`, i)))
	}
	tb.waitTrue("a copy per block", fmt.Sprintf(`window.__copied.length === %d`, len(want)), 10*time.Second)
	got := eval[[]string](tb, `window.__copied`)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("block %d copied as\n%q\nwant the source\n%q", i, got[i], want[i])
		}
	}
	tb.noConsoleErrors("copy")
}

// TestCJKSearch searches testdata/unusual's Chinese and Japanese chapter
// for two-character words that occur in it (and a longer phrase), and
// checks that each finds its section.
func TestCJKSearch(t *testing.T) {
	bctx := newBrowser(t)
	root := filepath.Join(t.TempDir(), "unusual")
	copyDir(t, filepath.Join("testdata", "unusual"), root)
	srv := serveSite(t, buildSite(t, root))
	tb := newTab(t, bctx)
	tb.navigate(srv.URL + "/code.html")
	for _, tc := range []struct{ query, section string }{
		{"写入", "cjk.html#分布式系统"},
		{"令牌", "cjk.html#分布式系统"},
		{"分布式系统", "cjk.html#分布式系统"},
		{"拒否", "cjk.html#日本語"},
		{"トークン", "cjk.html#日本語"},
		{"fencing", "cjk.html#english"},
	} {
		tb.do(chromedp.Evaluate[chromedp.Void](`document.querySelector(".search-toggle").click()`))
		tb.waitTrue("search dialog open", `document.getElementById("search-dialog").open`, 15*time.Second)
		tb.do(chromedp.Evaluate[chromedp.Void](`(function(){var i=document.getElementById("search-input"); i.value=` + jsString(tc.query) + `; i.dispatchEvent(new Event("input", {bubbles: true}));})()`))
		want := srv.URL + "/" + tc.section
		tb.waitTrue("results for "+tc.query, `document.querySelector("#search-results a") !== null`, 20*time.Second)
		got := eval[[]string](tb, `Array.prototype.map.call(document.querySelectorAll("#search-results a"), function (a) { return decodeURIComponent(a.origin + a.pathname + a.hash); })`)
		if len(got) == 0 || got[0] != want {
			t.Errorf("search %q: results %q, want %s first", tc.query, got, want)
		}
		tb.key(kb.Escape)
		tb.waitTrue("search closed", `!document.getElementById("search-dialog").open`, 15*time.Second)
	}
	tb.noConsoleErrors("CJK search")
}
