package render

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ownership-book/ownership/internal/verify"
)

var runPrograms = []verify.Program{
	{Package: "./examples/count", Runnable: true, Wasm: "/cache/wasm/ab.wasm", Sum: "0123456789abcdef", Size: 2771920, Gzip: 801593,
		WasmExec: "/go/lib/wasm/wasm_exec.js", WasmExecSum: "fedcba9876543210", PageNote: "the log is kept <in memory>",
		Flags: []verify.Flag{{Name: "n", Kind: "int", Default: "3", Usage: "how many"}, {Name: "shout", Kind: "bool", Default: "false", Usage: "capitals"},
			{Name: "seed", Kind: "uint64", Default: "e.Seed", DefaultExpr: true, Usage: "seed"}}},
	{Package: "./examples/dial", Reason: "imports net (sockets): ./examples/dial → net"},
}

const runChapter = "# Programs\n\n```console\n$ go run ./examples/count -n 2 -shout extra\nEPOCH 1\n$ go run ./examples/dial\nlistened\n```\n\n```console\n$ go test ./examples/count\nok\n```\n"

func TestRunPanels(t *testing.T) {
	b := testBook(t)
	r := New(b)
	r.SetPrograms(runPrograms)
	r.SetVerdicts(checkedAs(doc(b, 1, runChapter)))
	pg, err := r.Render(doc(b, 1, runChapter))
	if err != nil {
		t.Fatal(err)
	}
	h := string(pg.HTML)
	for _, want := range []string{
		`<div class="run" data-wasm="assets/count.01234567.wasm" data-exec="assets/wasm_exec.fedcba98.js" data-args="[&#34;-n&#34;,&#34;2&#34;,&#34;-shout&#34;,&#34;extra&#34;]" data-expected="[&#34;EPOCH 1&#34;]" data-rest="[&#34;extra&#34;]" data-name="count" data-pkg="./examples/count" hidden>`,
		`title="Run count in this page (WebAssembly, 2.8 MB; 802 KB compressed)">Run</button>`,
		`<code class="run-cmd">go run ./examples/count -n 2 -shout extra</code>`,
		`<p class="run-page-note">In this page: the log is kept &lt;in memory&gt;</p>`,
		`data-flag="n" data-kind="int" data-default="3" value="2"`,
		`<input type="checkbox" data-flag="shout" data-kind="bool" data-default="false" checked>`,
		// a default that is Go source is not shown, and never passed
		`data-flag="seed" data-kind="uint64" data-default="" value="" placeholder="" spellcheck="false">`,
		`<p class="run-note">Runs on your machine only (<code>go run ./examples/dial</code>): imports net (sockets): ./examples/dial → net</p>`,
	} {
		if !strings.Contains(h, want) {
			t.Errorf("page lacks %s\n%s", want, h)
		}
	}
	if n := strings.Count(h, `class="run" `); n != 1 {
		t.Errorf("%d run panels, want 1 (go test and the socket program get none)", n)
	}
	want := []File{{Name: "assets/count.01234567.wasm", Source: "/cache/wasm/ab.wasm"}, {Name: "assets/wasm_exec.fedcba98.js", Source: "/go/lib/wasm/wasm_exec.js"}}
	if !reflect.DeepEqual(pg.Files, want) {
		t.Errorf("Files = %+v, want %+v", pg.Files, want)
	}

	// Without SetPrograms (bookgen test, or a theme without run.js): the
	// transcript alone.
	plain, err := renderChecked(b, doc(b, 1, runChapter))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(plain.HTML), `class="run`) || len(plain.Files) != 0 {
		t.Errorf("without programs the page has run panels:\n%s", plain.HTML)
	}
}

// A cached page is not reused once the programs change (a rebuilt binary
// has a new name).
func TestRunPanelsInCacheKey(t *testing.T) {
	b := testBook(t)
	c := &Cache{}
	r := New(b)
	r.Cache = c
	r.SetPrograms(runPrograms)
	d := doc(b, 1, runChapter)
	r.SetVerdicts(checkedAs(d))
	if _, err := r.Render(d); err != nil {
		t.Fatal(err)
	}
	changed := append([]verify.Program{}, runPrograms...)
	changed[0].Sum = "99999999" + changed[0].Sum[8:]
	r2 := New(b)
	r2.Cache = c
	r2.SetPrograms(changed)
	r2.SetVerdicts(checkedAs(d))
	pg, err := r2.Render(d)
	if err != nil {
		t.Fatal(err)
	}
	if r2.Reused != 0 || !strings.Contains(string(pg.HTML), "assets/count.99999999.wasm") {
		t.Errorf("a page with an old binary's name was reused (reused %d)", r2.Reused)
	}
}

func TestFlagValues(t *testing.T) {
	flags := []verify.Flag{{Name: "n", Kind: "int"}, {Name: "v", Kind: "bool"}, {Name: "name", Kind: "string"}}
	for _, c := range []struct {
		args []string
		vals map[string]string
		rest []string
	}{
		{nil, map[string]string{}, nil},
		{[]string{"-n", "4", "-v", "a", "-n=5"}, map[string]string{"n": "4", "v": "true"}, []string{"a", "-n=5"}},
		{[]string{"--name=x y", "-v=false", "--", "-n"}, map[string]string{"name": "x y", "v": "false"}, []string{"-n"}},
		{[]string{"-unknown", "-n", "1"}, map[string]string{}, []string{"-unknown", "-n", "1"}},
	} {
		vals, rest := flagValues(flags, c.args)
		if !reflect.DeepEqual(vals, c.vals) || !reflect.DeepEqual(rest, c.rest) {
			t.Errorf("flagValues(%q) = %v %q, want %v %q", c.args, vals, rest, c.vals, c.rest)
		}
	}
}
