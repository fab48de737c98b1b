package browser

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/ownership-book/ownership/internal/build"
	"github.com/ownership-book/ownership/internal/markdown"
	"github.com/ownership-book/ownership/internal/serve"
)

// runTimeout bounds one program's run in the page, loading included. The
// book's model checks run for seconds natively and several times longer as
// WebAssembly on a loaded machine.
const runTimeout = 4 * time.Minute

// panelResult is what a run panel holds once its program exited.
type panelResult struct {
	Pkg      string   `json:"pkg"`
	Args     []string `json:"args"`
	State    string   `json:"state"`
	Status   string   `json:"status"`
	Output   string   `json:"output"`
	Expected []string `json:"expected"`
	LoadMs   string   `json:"loadMs"`
	Ms       string   `json:"ms"`
	Title    string   `json:"title"`
}

// clickRun clicks the Run button of the i-th run panel of the page and
// waits until the program has exited (or failed to start).
func clickRun(tb *tab, i int) panelResult {
	tb.t.Helper()
	sel := fmt.Sprintf(`document.querySelectorAll(".run[data-wasm]")[%d]`, i)
	eval[bool](tb, sel+`.querySelector(".run-button").click(), true`)
	tb.waitTrue(fmt.Sprintf("run panel %d finishes", i), `["match","differs","error","changed","stopped"].includes(`+sel+`.dataset.state)`, runTimeout)
	return eval[panelResult](tb, `(function(p){return {pkg: p.dataset.pkg, args: JSON.parse(p.dataset.args), state: p.dataset.state,
		status: p.querySelector(".run-status").textContent, output: p.dataset.output || "", expected: JSON.parse(p.dataset.expected),
		loadMs: p.dataset.loadMs || "", ms: p.dataset.ms || "", title: p.querySelector(".run-button").title};})(`+sel+`)`)
}

// checkMatches compares a panel's streamed output with its transcript as
// verify does (independently of the page's own verdict, which must agree).
func checkMatches(t *testing.T, where string, r panelResult) {
	t.Helper()
	got := strings.Split(strings.TrimRight(markdown.StripANSI(r.Output), "\n"), "\n")
	for i, l := range got {
		got[i] = strings.TrimRight(l, " \t\r")
	}
	ok, diff := markdown.Compare(r.Expected, got)
	if !ok {
		var b strings.Builder
		for _, e := range diff {
			fmt.Fprintf(&b, "%c%s\n", e.Op, e.Text)
		}
		t.Errorf("%s: go run %s: the output streamed into the page differs from the transcript:\n%s", where, r.Pkg, b.String())
	}
	if r.State != "match" {
		t.Errorf("%s: go run %s: the page says %q (%s), want a match", where, r.Pkg, r.State, r.Status)
	}
}

// runEveryPanel opens page in each theme and at phone width and runs every
// program of it; it returns the last results.
func runEveryPanel(t *testing.T, tb *tab, url string) []panelResult {
	t.Helper()
	var last []panelResult
	for _, v := range []struct {
		name         string
		dark, mobile bool
	}{{"light", false, false}, {"dark", true, false}, {"phone, dark", true, true}} {
		prefersDark(tb, v.dark)
		if v.mobile {
			tb.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
		} else {
			tb.do(chromedp.EmulateViewport(1280, 900))
		}
		before := len(tb.requested())
		tb.navigate(url)
		n := eval[int](tb, `document.querySelectorAll(".run[data-wasm]").length`)
		if n == 0 {
			t.Fatalf("%s: no run panels", url)
		}
		if got := eval[int](tb, `document.querySelectorAll(".run[data-wasm][hidden]").length`); got != 0 {
			t.Errorf("%s (%s): %d run panels still hidden with JavaScript on", url, v.name, got)
		}
		// Nothing is loaded before the first click.
		for _, u := range tb.requested()[before:] {
			if strings.HasSuffix(u, ".wasm") || strings.Contains(u, "wasm_exec.") {
				t.Errorf("%s (%s): %s requested before any click", url, v.name, u)
			}
		}
		last = last[:0]
		for i := 0; i < n; i++ {
			r := clickRun(tb, i)
			checkMatches(t, url+" ("+v.name+")", r)
			t.Logf("%s: go run %s %s: %s (loaded in %s ms, ran in %s ms; %s)", v.name, r.Pkg, strings.Join(r.Args, " "), r.State, r.LoadMs, r.Ms, r.Title)
			last = append(last, r)
		}
		// The panel fits the page, and its button and output are visible
		// in this theme.
		if eval[bool](tb, `document.documentElement.scrollWidth > document.documentElement.clientWidth + 1`) {
			t.Errorf("%s (%s): the page scrolls sideways with the run panels open", url, v.name)
		}
		// The output wraps as the transcripts do: no line is hidden
		// behind the box's edge.
		if hidden := eval[string](tb, `Array.from(document.querySelectorAll(".run-output:not([hidden])"), function (o) {
			return o.scrollWidth > o.clientWidth + 1 ? o.closest(".run").dataset.pkg + ": " + o.scrollWidth + "px of output in a " + o.clientWidth + "px box" : "";
		}).filter(Boolean).join("; ")`); hidden != "" {
			t.Errorf("%s (%s): run output does not wrap: %s", url, v.name, hidden)
		}
		// WCAG 2 contrast of the button's label, the output and the
		// verdict against what is behind them: at least 4.5:1.
		low := eval[string](tb, `(function(){
			function lum(c){var m=c.match(/[\d.]+/g).slice(0,3).map(Number).map(function(v){v/=255;return v<=0.04045?v/12.92:Math.pow((v+0.055)/1.055,2.4);});return 0.2126*m[0]+0.7152*m[1]+0.0722*m[2];}
			function ratio(a,b){var x=lum(a),y=lum(b);return (Math.max(x,y)+0.05)/(Math.min(x,y)+0.05);}
			var p=document.querySelector(".run[data-wasm]"), pbg=getComputedStyle(p).backgroundColor;
			var b=getComputedStyle(p.querySelector(".run-button")), o=getComputedStyle(p.querySelector(".run-output")), s=getComputedStyle(p.querySelector(".run-status"));
			var out=[];
			[["button",b.color,b.backgroundColor],["output",o.color,o.backgroundColor],["verdict",s.color,pbg]].forEach(function(c){var r=ratio(c[1],c[2]);if(!(r>=4.5))out.push(c[0]+" "+c[1]+" on "+c[2]+": "+r.toFixed(2));});
			if (p.querySelector(".run-button").getBoundingClientRect().width === 0) out.push("button not shown");
			return out.join("; ");})()`)
		if low != "" {
			t.Errorf("%s (%s): %s", url, v.name, low)
		}
		eval[bool](tb, `(document.querySelector(".run[data-wasm]").scrollIntoView({block: "start"}), true)`)
		tb.screenshot("run-" + strings.NewReplacer(", ", "-", " ", "-").Replace(v.name) + ".png")
		tb.noConsoleErrors(url + " (" + v.name + ")")
	}
	return last
}

// TestRunPanels builds testdata/run (a program with flags, one that exits
// with status 3 and writes to stderr, one that opens a socket, one that
// does not build for js/wasm), serves it
// with netlify.toml's headers and runs every program in Chromium: the
// output streamed into the page must match the transcript, in both themes
// and at phone width; changed flags must change the output as the program
// says; a loopback socket program runs on the page's in-process network, a
// program that keeps a file runs on the page's in-memory file system; a
// program that starts a process is marked not runnable with the reason; without
// JavaScript the panels stay hidden and the transcripts are all there is.
func TestRunPanels(t *testing.T) {
	bctx := newBrowser(t)
	root := filepath.Join(t.TempDir(), "run")
	copyDir(t, filepath.Join("testdata", "run"), root)
	site := buildSite(t, root)
	srv := serveSite(t, site)
	url := srv.URL + "/programs.html"
	tb := newTab(t, bctx)

	results := runEveryPanel(t, tb, url)
	if len(results) != 5 {
		t.Fatalf("%d runnable transcripts, want 5 (count twice, fail, dial, disk)", len(results))
	}

	notes := eval[string](tb, `Array.from(document.querySelectorAll(".run-note"), function(n){return n.textContent;}).join("\n")`)
	if !strings.Contains(notes, "go run ./examples/spawn): in node ") || !strings.Contains(notes, "not implemented on js") {
		t.Errorf("the notes %q do not say why spawn cannot run in the page (its output in a JavaScript engine)", notes)
	}
	if !strings.Contains(notes, "go run ./examples/rlimit): does not build for js/wasm: examples/rlimit/main.go:11:") {
		t.Errorf("the notes %q do not say why rlimit cannot run, at file:line", notes)
	}
	if eval[bool](tb, `!!document.querySelector('.run[data-pkg="./examples/spawn"]')`) {
		t.Error("the spawn program got a run panel")
	}
	if !eval[bool](tb, `!!document.querySelector('.run[data-pkg="./examples/disk"]')`) {
		t.Error("the file program has no run panel")
	}
	if !eval[bool](tb, `!!document.querySelector('.run[data-pkg="./examples/dial"]')`) {
		t.Error("the loopback program has no run panel")
	}

	// Change the flags of the first panel (-n 2 extra): -n 4 -shout.
	tb.do(chromedp.EmulateViewport(1280, 900))
	tb.navigate(url)
	eval[bool](tb, `(function(p){p.querySelector(".run-flags").open = true;
		var n = p.querySelector('input[data-flag="n"]'); n.value = "4";
		p.querySelector('input[data-flag="shout"]').checked = true; return true;})(document.querySelector(".run[data-wasm]"))`)
	r := clickRun(tb, 0)
	want := "EPOCH 1\nEPOCH 2\nEPOCH 3\nEPOCH 4\ncounted 4, args [\"extra\"]\n"
	if r.Output != want {
		t.Errorf("with -n=4 -shout the page shows\n%s\nwant\n%s", r.Output, want)
	}
	if r.State != "changed" || !strings.Contains(r.Status, "-n=4 -shout=true extra") {
		t.Errorf("with changed flags the status is %q (%s), want it to name the command and say it is not compared", r.Status, r.State)
	}
	// Back to the transcript's values: compared again.
	eval[bool](tb, `(function(p){p.querySelector('input[data-flag="n"]').value = "2"; p.querySelector('input[data-flag="shout"]').checked = false; return true;})(document.querySelector(".run[data-wasm]"))`)
	checkMatches(t, "flags restored", clickRun(tb, 0))
	tb.noConsoleErrors("flags")

	// A run that prints without end is stopped at the panel's bound (1
	// MiB), with the output so far, and the page stays responsive.
	eval[bool](tb, `(function(p){p.querySelector('input[data-flag="n"]').value = "5000000"; return true;})(document.querySelector(".run[data-wasm]"))`)
	if r := clickRun(tb, 0); r.State != "stopped" || !strings.Contains(r.Status, "printed more than 1 MiB") || len(r.Output) != 1<<20 {
		t.Errorf("-n=5000000: state %q, status %q, %d characters of output; want it stopped at 1 MiB, saying so", r.State, r.Status, len(r.Output))
	}
	if got := eval[int](tb, `1 + 1`); got != 2 {
		t.Errorf("the page does not answer after a bounded run")
	}
	checkRequests(t, tb, srv.URL)

	// Without JavaScript: no panel, every transcript, the note.
	nj := newTab(t, bctx)
	call(nj, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
	nj.navigate(url)
	if got := eval[int](nj, `Array.from(document.querySelectorAll(".run")).filter(function(p){return p.getClientRects().length > 0;}).length`); got != 0 {
		t.Errorf("without JavaScript %d run panels are shown", got)
	}
	if got := eval[int](nj, `document.querySelectorAll('.code-block[data-lang="console"]').length`); got != 7 {
		t.Errorf("without JavaScript %d transcripts, want 7", got)
	}
	if !eval[bool](nj, `document.querySelector(".run-note").getClientRects().length > 0`) {
		t.Error("without JavaScript the not-runnable note is hidden")
	}
}

// TestRunRealBook builds this repository's book (with its cache,
// .bookgen-cache, as `bookgen build` does) and runs every runnable program
// of every chapter in Chromium, comparing the output with the chapter's
// transcript. It builds the whole book, so it runs only when
// BOOKGEN_BROWSER_BOOK=1.
func TestRunRealBook(t *testing.T) {
	res := realBook(t) // skips unless BOOKGEN_BROWSER_BOOK=1
	bctx := newBrowser(t)
	root := res.Book.Root
	srv := serveSite(t, res.Out)
	tb := newTab(t, bctx)
	pages := map[string]bool{}
	for _, p := range res.Report.Programs {
		status := "not runnable: " + p.Reason
		if p.Runnable {
			status = fmt.Sprintf("%d bytes, %d gzipped", p.Size, p.Gzip)
		}
		t.Logf("%s: %s", p.Package, status)
	}
	for _, ch := range res.Book.Chapters {
		name := strings.TrimSuffix(ch.Path, ".md") + ".html"
		data, err := os.ReadFile(filepath.Join(res.Out, filepath.FromSlash(name)))
		if err == nil && strings.Contains(string(data), `class="run" data-wasm=`) {
			pages[name] = true
		}
	}
	ran := 0
	for name := range pages {
		ran += len(runEveryPanel(t, tb, srv.URL+"/"+name))
	}
	want := 0
	for _, p := range res.Report.Programs {
		if p.Runnable {
			want++
		}
	}
	if ran < want {
		t.Errorf("ran %d transcripts, fewer than the %d runnable programs", ran, want)
	}

	// A flag changes the output as the program says: figure8 -d2 prints
	// the figure as D2 source, in the page as on the host.
	tb.do(chromedp.EmulateViewport(1280, 900))
	tb.navigate(srv.URL + "/raft.html")
	i := eval[int](tb, `Array.from(document.querySelectorAll(".run[data-wasm]")).findIndex(function(p){return p.dataset.pkg === "./examples/raft/figure8";})`)
	if i < 0 {
		t.Fatal("raft.html has no run panel for ./examples/raft/figure8")
	}
	eval[bool](tb, fmt.Sprintf(`(document.querySelectorAll(".run[data-wasm]")[%d].querySelector('input[data-flag="d2"]').checked = true)`, i))
	r := clickRun(tb, i)
	cmd := exec.Command("go", "run", "./examples/raft/figure8", "-d2")
	cmd.Dir = root
	native, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run ./examples/raft/figure8 -d2: %v\n%s", err, native)
	}
	if r.Output != string(native) || r.State != "changed" {
		t.Errorf("figure8 with -d2 in the page (%s: %s):\n%s\nwant what go run prints:\n%s", r.State, r.Status, r.Output, native)
	}
	checkRequests(t, tb, srv.URL)
}

// TestRunPanelsUnderServe runs the run fixture's programs from bookgen
// serve, which sends netlify.toml's headers (the fixture gets the
// repository's netlify.toml), before and after a prose edit: the rebuild
// keeps the binaries without rebuilding or rereading them.
func TestRunPanelsUnderServe(t *testing.T) {
	bctx := newBrowser(t)
	root := filepath.Join(t.TempDir(), "run")
	copyDir(t, filepath.Join("testdata", "run"), root)
	netlify, err := os.ReadFile(filepath.Join("..", "..", "netlify.toml"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "netlify.toml"), string(netlify))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	log := &syncLog{}
	opt := serve.Options{
		Build:    build.Options{Root: root, Out: filepath.Join(t.TempDir(), "site")},
		Log:      log,
		Debounce: 100 * time.Millisecond,
	}
	opt.Build.Verify.CacheDir = t.TempDir()
	done := make(chan error, 1)
	go func() { done <- serve.Run(ctx, ln, opt) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("serve did not stop")
		}
	})
	builds := func() int { return strings.Count(log.String(), "bookgen: build ") }
	waitBuilds := func(n int) {
		t.Helper()
		deadline := time.Now().Add(3 * time.Minute)
		for builds() < n {
			if time.Now().After(deadline) {
				t.Fatalf("no build %d:\n%s", n, log.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitBuilds(1)
	url := "http://" + ln.Addr().String() + "/programs.html"
	tb := newTab(t, bctx)
	tb.navigate(url)
	if csp := eval[string](tb, `fetch(location.href).then(function(r){return r.headers.get("Content-Security-Policy") || "";})`); !strings.Contains(csp, "'wasm-unsafe-eval'") {
		t.Fatalf("serve sends Content-Security-Policy %q, without netlify.toml's 'wasm-unsafe-eval'", csp)
	}
	checkMatches(t, "serve", clickRun(tb, 0))

	edit(t, filepath.Join(root, "book", "programs.md"), "A program with flags:", "A program with flags, edited:")
	waitBuilds(2)
	if !strings.Contains(log.String(), "0 checks run") {
		t.Errorf("the prose edit ran checks again:\n%s", log.String())
	}
	tb.waitTrue("page reloaded with the edit", `document.body.textContent.indexOf("A program with flags, edited:") >= 0 && document.readyState === "complete"`, 30*time.Second)
	for i := 0; i < 3; i++ {
		checkMatches(t, "serve, after a rebuild", clickRun(tb, i))
	}
	tb.noConsoleErrors("serve")
}
