package tests

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"html"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ownership-book/ownership/internal/build"
	"github.com/ownership-book/ownership/internal/render"
	"github.com/ownership-book/ownership/internal/verify"
)

// wasmBudget is the most a program may weigh gzipped: 3 MiB, loaded only
// when the reader presses Run.
const wasmBudget = 3 << 20

// engineBudgets are the larger budgets of the programs that run a real
// engine in the page, each over 3 MiB before the program adds anything
// (measured with programs that only start the library, js/wasm, -s -w,
// net/http without HTTP/2): hashicorp/raft with streamd's HTTP server and
// its forwarding client 3.37 MB; memberlist's Create and Join 3.24 MB
// (its name resolution through miekg/dns brings a TLS client). Getting
// under 3 MiB would mean forking those libraries or leaving them out of
// the programs, which would then not be what the chapters run. fencemode
// runs a streamd voter as fence does. ownerd
// runs hashicorp/raft behind an HTTP server too, with mutual TLS on every
// connection (crypto/tls and x509 in both directions): 3.82 MB.
var engineBudgets = map[string]int{
	"./examples/stream/fence":           4 << 20,
	"./examples/stream/fencemode":       4 << 20,
	"./examples/ownership/hint/suspect": 4 << 20,
	"./examples/ownership/ownerd":       4 << 20,
}

var panelWasm = regexp.MustCompile(`<div class="run" data-wasm="([^"]+)" data-exec="([^"]+)"[^>]* data-pkg="([^"]+)"`)

// checkPrograms checks the programs of a built site against the build's
// report: each program that is not runnable is marked so on the page,
// with its command and the reason, and has no run panel; every runnable
// one was verified in a JavaScript engine (Program.Engine), has its
// binary in the site under a name holding the hash of its content, and a
// run panel pointing at it and at memfs.js with the toolchain's own wasm_exec.js. want
// names programs that must be runnable (true) or not (false).
func checkPrograms(t *testing.T, root string, res *build.Result, want map[string]bool) {
	t.Helper()
	out := res.Out
	var pagesHTML strings.Builder
	for _, ch := range res.Book.Chapters {
		data, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(htmlPath(ch.Path))))
		if err != nil {
			t.Fatal(err)
		}
		pagesHTML.Write(data)
	}
	pages := pagesHTML.String()
	panels := map[string]bool{}
	for _, m := range panelWasm.FindAllStringSubmatch(pages, -1) {
		panels[html.UnescapeString(m[3])] = true
	}
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	toolchainExec, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(goroot)), "lib", "wasm", "wasm_exec.js"))
	if err != nil {
		t.Fatal(err)
	}
	// The page loads bookgen's in-memory file system, then the toolchain's
	// own wasm_exec.js, from one file.
	wasmExec := verify.PageExec(toolchainExec)
	if len(res.Report.Programs) == 0 {
		t.Fatal("the report lists no programs")
	}
	seen := map[string]bool{}
	for _, p := range res.Report.Programs {
		seen[p.Package] = true
		if r, ok := want[p.Package]; ok && r != p.Runnable {
			t.Errorf("%s: runnable %v, want %v (%s)", p.Package, p.Runnable, r, p.Reason)
		}
		if !p.Runnable {
			note := `<p class="run-note">Runs on your machine only (<code>go run ` + p.Package
			if !strings.Contains(pages, note) || !strings.Contains(pages, html.EscapeString(p.Reason)) {
				t.Errorf("%s is not runnable (%s) but no page says so with the reason", p.Package, p.Reason)
			}
			if panels[p.Package] {
				t.Errorf("%s is not runnable but has a run panel", p.Package)
			}
			continue
		}
		if !strings.HasPrefix(p.Engine, "node v") {
			t.Errorf("%s is runnable but was not verified in a JavaScript engine (engine %q)", p.Package, p.Engine)
		}
		name := render.WasmName(p)
		data, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(name)))
		if err != nil {
			t.Errorf("%s: its binary is not in the site: %v", p.Package, err)
			continue
		}
		sum := sha256.Sum256(data)
		if h := hex.EncodeToString(sum[:]); h != p.Sum || !strings.Contains(name, "."+h[:8]+".wasm") || !strings.HasPrefix(name, "assets/") {
			t.Errorf("%s: %s is not named after its content (sha256 %s)", p.Package, name, h)
		}
		if !bytes.HasPrefix(data, []byte("\x00asm")) {
			t.Errorf("%s: %s is not WebAssembly", p.Package, name)
		}
		var gz bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
		zw.Write(data)
		zw.Close()
		budget := wasmBudget
		if b, ok := engineBudgets[p.Package]; ok {
			budget = b
		}
		if gz.Len() > budget {
			t.Errorf("%s: %d bytes gzipped, over the budget of %d", p.Package, gz.Len(), budget)
		}
		t.Logf("%s: %s, %d bytes, %d gzipped, flags %v", p.Package, name, len(data), gz.Len(), p.Flags)
		if !panels[p.Package] {
			t.Errorf("%s is runnable but no page has its run panel", p.Package)
		}
		if !strings.Contains(pages, `data-wasm="`+name+`" data-exec="`+render.WasmExecName(p)+`"`) {
			t.Errorf("%s: no run panel loads %s with %s", p.Package, name, render.WasmExecName(p))
		}
		got, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(render.WasmExecName(p))))
		if err != nil || !bytes.Equal(got, wasmExec) {
			t.Errorf("%s: the site's %s is not memfs.js followed by the toolchain's wasm_exec.js (%v)", p.Package, render.WasmExecName(p), err)
		}
	}
	for pkg := range want {
		if !seen[pkg] {
			t.Errorf("%s: not among the programs the report lists", pkg)
		}
	}
}

// TestRunFixturePrograms builds the browser tests' run fixture (a
// program with flags, one that fails, one that listens and dials on
// loopback, one that writes, renames, lists and reads files in the page's
// in-memory file system, one that starts a process, one whose js/wasm
// build fails) and checks its programs (checkPrograms), and that a
// rebuild starts no wasm build.
func TestRunFixturePrograms(t *testing.T) {
	root := filepath.Join(t.TempDir(), "run")
	copyTree(t, filepath.Join("browser", "testdata", "run"), root)
	cache := t.TempDir()
	res, err := buildBook(t, root, filepath.Join(t.TempDir(), "site"), cache)
	if err != nil {
		build.PrintError(testWriter{t}, err)
		t.Fatal("the run fixture does not build")
	}
	checkPrograms(t, root, res, map[string]bool{"./examples/count": true, "./examples/fail": true, "./examples/dial": true, "./examples/disk": true, "./examples/spawn": false, "./examples/rlimit": false})
	for _, p := range res.Report.Programs {
		if p.Package == "./examples/spawn" && !strings.Contains(p.Reason, "not implemented on js") {
			t.Errorf("spawn's reason %q does not say the page cannot start a process", p.Reason)
		}
		if p.Package == "./examples/rlimit" && !strings.Contains(p.Reason, "does not build for js/wasm: examples/rlimit/main.go:11:") {
			t.Errorf("rlimit's reason %q does not give the build error at its file:line", p.Reason)
		}
		if p.Package == "./examples/count" {
			var names []string
			for _, f := range p.Flags {
				names = append(names, f.Name+":"+f.Kind+"="+f.Default)
			}
			if got := strings.Join(names, " "); got != "n:int=3 word:string=epoch shout:bool=false" {
				t.Errorf("count declares %s, want n:int=3 word:string=epoch shout:bool=false", got)
			}
		}
	}
	again, err := buildBook(t, root, filepath.Join(t.TempDir(), "site"), cache)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range again.Report.Checks {
		if c.Kind == "wasm" && !c.Cached {
			t.Errorf("rebuild without changes built %s for wasm again", c.Subject)
		}
	}
	checkPrograms(t, root, again, nil)
}

// copyTree copies the folder src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// realBookPrograms are programs of the book that must run in a browser
// and that must not, each with why. Sockets alone do not keep a program
// off the page: the standard library's in-process network for js/wasm lets
// a program listen and dial on loopback inside the page, so the programs
// that serve HTTP or run hashicorp/raft on loopback (stream/fence,
// raft/failover, staleread, transfer) run there, and suspect runs
// memberlist over its in-memory transport. What keeps a program off is its
// run in Node failing or differing from its transcript. Files do not:
// takeover keeps each copy's database in files and ownerd its
// certificates and data directories, in the page's in-memory file system
// (memfs.js), ownerd's Raft logs in memory in place of bolt's raft.db.
// composed/check's model check takes close to the 60 s limit of a run in
// Node (about 50 s on an idle 2-core machine, more under load), so it is
// not pinned either way: where it does not finish, realBookTimeBound
// holds the reason to that. So is raft/modelcheck, whose exhaustive bound
// (a crash and a reordering) takes about 27 s of CPU in Node. raft/transfer
// is not pinned either way: on a loaded machine its run in Node now and
// then sees leadership move again before the last write (one in five runs
// on a busy 2-core machine), and the build then keeps it off the page with
// that line as the reason, which the page shows.
var realBookPrograms = map[string]bool{
	"./examples/ownership/fenced":           true,
	"./examples/ownership/handover":         true,
	"./examples/ownership/check/exhaustive": true,
	"./examples/ownership/hint/suspect":     true,
	"./examples/raft/figure8":               true,
	"./examples/raft/elections":             true,
	"./examples/raft/failover":              true,
	"./examples/raft/staleread":             true,
	"./examples/stream/fence":               true,
	"./examples/ownership/ownerd":           true,
	"./examples/stream/takeover":            true,
}

// realBookTimeBound are programs whose run in Node may or may not finish
// within the transcript's timeout, with the reason the build must give
// when it does not.
var realBookTimeBound = map[string]string{
	"./examples/composed/check":  "did not finish within",
	"./examples/raft/modelcheck": "did not finish within",
}

// checkReasons checks that each program of timeBound that is not runnable
// is so for the reason it names.
func checkReasons(t *testing.T, res *build.Result, timeBound map[string]string) {
	t.Helper()
	for _, p := range res.Report.Programs {
		if r, ok := timeBound[p.Package]; ok && !p.Runnable && !strings.Contains(p.Reason, r) {
			t.Errorf("%s: not runnable because %q; want runnable, or not runnable because %q", p.Package, p.Reason, r)
		}
	}
}
