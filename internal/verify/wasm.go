package verify

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"go/ast"
	"go/build"
	"go/constant"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/expand"
	"github.com/ownership-book/ownership/internal/markdown"
)

// The wasm check. Every package a transcript runs with "$ go run ./dir" is
// built for the browser (GOOS=js GOARCH=wasm, -trimpath, -ldflags=-s -w,
// and book.toml's [bookgen] wasm-tags), so that the page can offer to run
// it in a Web Worker with the Go toolchain's wasm_exec.js. The page's
// verdict comes from the build: each transcript command that runs the
// program is run again, with the same arguments, in a JavaScript engine
// (Node, through noderun.js, which runs the binary as the page's worker
// does: memfs.js's in-memory file system, the browser's wasm_exec.js, one
// output stream), and its output is compared with the transcript as "go run"'s
// is. The standard library's in-process network for js/wasm lets a
// program listen and dial on loopback inside the page, and memfs.js gives
// it files and folders that last for the run, so neither sockets nor a
// data directory keep a program off the page; what does is a build that fails,
// or a run whose output differs, that hangs or that fails: the program
// is then marked not runnable, with the reason and the first differing
// line. Neither is an error: the transcript itself is still verified on
// the host. Without a JavaScript engine on PATH a program is marked not
// runnable ("not verified in a JavaScript engine"), and under CI that is
// an error. The outcome is cached like every other check (kind "wasm",
// the package's files and those of its local dependencies, the tags, the
// Node version and the commands the page runs in the key; the outputs in
// the engine are stored and judged again on every hit), and the binary is
// kept under CacheDir/wasm/<sha256>.wasm.

//go:embed noderun.js
var nodeRunner []byte

// memFS is the in-memory file system a page's program runs with
// (memfs.js): it is put before the toolchain's wasm_exec.js in the file
// the page and noderun.js load, so that a program that keeps its state in
// files runs in the page as it does on a disk, for the life of the run.
//
//go:embed memfs.js
var memFS []byte

// Program is one program a chapter runs, as built for the browser.
type Program struct {
	// Package is the directory as the transcript names it
	// ("./examples/raft/figure8").
	Package string `json:"package"`
	// Runnable says the program was built for js/wasm and that every
	// transcript command running it printed, in a JavaScript engine, what
	// the transcript shows; Reason says why not otherwise ("does not build
	// for js/wasm: ...", "in a JavaScript engine, $ go run ./examples/x
	// (book/ch.md:12) differs from its transcript at line 3: ...").
	Runnable bool   `json:"runnable"`
	Reason   string `json:"reason,omitempty"`
	// Wasm is the absolute path of the binary, Sum the hex SHA-256 of its
	// content, Size its length and Gzip its length gzipped at level 9, in
	// bytes.
	Wasm string `json:"wasm,omitempty"`
	Sum  string `json:"sum,omitempty"`
	Size int64  `json:"size,omitempty"`
	Gzip int64  `json:"gzip,omitempty"`
	// WasmExec is the absolute path of the wasm_exec.js of the toolchain
	// that built the binary ($GOROOT/lib/wasm/wasm_exec.js).
	WasmExec    string `json:"wasm_exec,omitempty"`
	WasmExecSum string `json:"wasm_exec_sum,omitempty"`
	// Flags are the command-line flags the program declares with package
	// flag, in source order.
	Flags []Flag `json:"flags,omitempty"`
	// Engine is the JavaScript engine its page runs were verified in
	// ("node v20.20.2"), "" when none was.
	Engine string `json:"engine,omitempty"`
	// PageNote says what differs in the page, as the program declares it
	// in a file of its package built only for js/wasm, on a line
	// "//bookgen:page-note TEXT" ("the log is kept in memory"); "" when
	// none does. Several such lines are joined with "; ".
	PageNote string `json:"page_note,omitempty"`
}

// pageRun is one transcript command that runs a program the page may
// offer to run: where it is, what it passes the program, and what the
// transcript shows it printing.
type pageRun struct {
	At       string   // "book/ch.md:12", the "$ " line
	Text     string   // the command as written ("go run ./examples/x -n 2")
	Args     []string // the program's arguments (["-n", "2"])
	Expected []string // the transcript's output lines
	// Timeout is the block's timeout= (0: the book's timeout), the time
	// the run in the JavaScript engine may take, as the run of go run.
	Timeout time.Duration
}

// pageTimeout is the time run may take in the JavaScript engine: the
// block's timeout=, else the book's.
func (v *verifier) pageTimeout(run pageRun) time.Duration {
	if run.Timeout > 0 {
		return run.Timeout
	}
	return v.timeout
}

// Flag is one flag a program declares: flag.Bool("d2", false, "usage")
// gives {Name: "d2", Kind: "bool", Default: "false", Usage: "usage"}.
type Flag struct {
	Name string `json:"name"`
	// Kind is the flag function's type: bool, int, int64, uint, uint64,
	// float64, string, duration, or func for flag.Func.
	Kind string `json:"kind"`
	// Default is the default value as the program would print it, or
	// the Go source of a default that is not a literal; DefaultExpr is
	// set in that case.
	Default     string `json:"default"`
	DefaultExpr bool   `json:"default_expr,omitempty"`
	Usage       string `json:"usage"`
}

// wasmBuildTimeout bounds one "go build" for js/wasm.
const wasmBuildTimeout = 5 * time.Minute

// wasmJob builds pkg for js/wasm, or finds why it cannot run in a browser.
func (v *verifier) wasmJob(pkg string, runs []pageRun) job {
	return func(ctx context.Context) jobResult {
		var r jobResult
		start := time.Now()
		engine, err := v.jsEngine(ctx)
		if err != nil {
			r.errs = append(r.errs, wasmErr(pkg, "%v", err))
			return r
		}
		memSum := sha256.Sum256(memFS)
		parts := []string{pkg, "tags=" + strings.Join(v.b.Config.WasmTags, ","), "engine=" + engine.version, "memfs=" + hex.EncodeToString(memSum[:8])}
		for _, run := range runs {
			// Neither run.At (a prose edit above a transcript moves it)
			// nor run.Expected (judged on every hit): only what the
			// page runs.
			parts = append(parts, run.Text, strings.Join(run.Args, "\x01"), v.pageTimeout(run).String())
		}
		key, err := v.staticKey(ctx, "wasm", parts...)
		if err != nil {
			r.errs = append(r.errs, wasmErr(pkg, "%v", err))
			return r
		}
		if e, ok := v.cache.lookup(key); ok && e.Program != nil && programFilesExist(e.Program) && (!e.Program.Runnable || len(e.PageOutputs) == len(runs)) {
			// The binary and its outputs in the engine are cached; the
			// outputs are judged again against the transcripts, whose
			// wildcard lines may have changed (as a cached transcript's
			// output is).
			prog := *e.Program
			judgePageRuns(&prog, engine, runs, e.PageOutputs)
			r.checks = append(r.checks, Check{Kind: "wasm", Subject: pkg, Cached: true, Elapsed: time.Since(start)})
			r.program = &prog
			return r
		}
		built, err := v.buildWasm(ctx, pkg)
		var outs []pageOutput
		if err == nil && built.Runnable {
			outs, err = v.runInEngine(ctx, engine, built, runs)
		}
		if err != nil {
			r.errs = append(r.errs, wasmErr(pkg, "%v", err))
			return r
		}
		prog := *built
		judgePageRuns(&prog, engine, runs, outs)
		elapsed := time.Since(start)
		v.logf("wasm %s: %s (%s)", pkg, describeProgram(&prog), fmtDuration(elapsed))
		r.checks = append(r.checks, Check{Kind: "wasm", Subject: pkg, Elapsed: elapsed})
		r.program = &prog
		{
			// A program that cannot run in a browser is an outcome,
			// not a failed check: it is stored like a binary, and
			// found again until the files it was decided from change.
			l, err := v.localDirs(ctx, nil, []string{pkg})
			if err == nil {
				_ = v.cache.store(&entry{Kind: "wasm", Subject: pkg, Key: key, Manifest: newManifest(v.cache.h, l), Program: built, PageOutputs: outs})
			}
		}
		return r
	}
}

func describeProgram(p *Program) string {
	if !p.Runnable {
		return "not runnable in a browser: " + p.Reason
	}
	return fmt.Sprintf("%d bytes, %d gzipped", p.Size, p.Gzip)
}

func wasmErr(pkg, format string, args ...any) *diag.Error {
	return diag.Errorf(strings.TrimPrefix(pkg, "./"), 0, "wasm build: %s", fmt.Sprintf(format, args...))
}

func programFilesExist(p *Program) bool {
	if !p.Runnable {
		return true
	}
	for _, f := range []string{p.Wasm, p.WasmExec} {
		if fi, err := os.Stat(f); err != nil || !fi.Mode().IsRegular() {
			return false
		}
	}
	return true
}

var wasmEnv = []string{"GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0"}

// buildWasm decides whether pkg can run in a browser and builds it.
func (v *verifier) buildWasm(ctx context.Context, pkg string) (*Program, error) {
	prog := &Program{Package: pkg}
	dir := filepath.Join(filepath.Dir(v.cache.dir), "wasm")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(dir, ".build-*.wasm")
	if err != nil {
		return nil, err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	args := []string{v.goCmd, "build", "-trimpath", "-ldflags=-s -w"}
	if tags := v.b.Config.WasmTags; len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	res, err := v.exec(ctx, Run{Args: append(args, "-o", tmp.Name(), pkg), Dir: v.root, Timeout: wasmBuildTimeout, Env: wasmEnv})
	if err != nil {
		return nil, err
	}
	if res.TimedOut || res.OutputLimited {
		return nil, fmt.Errorf("go build for js/wasm: timed out after %s or printed too much", fmtDuration(wasmBuildTimeout))
	}
	if res.ExitCode != 0 {
		// The compiler's first error, at its file:line.
		prog.Reason = "does not build for js/wasm: " + firstLine(string(res.Output))
		return prog, nil
	}
	data, err := os.ReadFile(tmp.Name())
	if err != nil {
		return nil, err
	}
	h := sha256.Sum256(data)
	prog.Sum = hex.EncodeToString(h[:])
	prog.Wasm = filepath.Join(dir, prog.Sum+".wasm")
	if err := writeAtomic(prog.Wasm, data, 0o644); err != nil {
		return nil, err
	}
	prog.Size = int64(len(data))
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(data)
	zw.Close()
	prog.Gzip = int64(gz.Len())

	res, err = v.exec(ctx, Run{Args: []string{v.goCmd, "env", "GOROOT"}, Dir: v.root, Timeout: listTimeout, Machine: true})
	if err != nil {
		return nil, err
	}
	goroot := strings.TrimSpace(string(res.Output))
	for _, rel := range []string{"lib/wasm/wasm_exec.js", "misc/wasm/wasm_exec.js"} {
		if p := filepath.Join(goroot, filepath.FromSlash(rel)); fileExists(p) {
			prog.WasmExec = p
			break
		}
	}
	if prog.WasmExec == "" {
		return nil, fmt.Errorf("no wasm_exec.js in the Go toolchain at %s (looked in lib/wasm and misc/wasm)", goroot)
	}
	if prog.WasmExec, prog.WasmExecSum, err = v.execWithMemFS(prog.WasmExec); err != nil {
		return nil, err
	}
	prog.Flags, err = declaredFlags(filepath.Join(v.root, filepath.FromSlash(pkg)))
	if err != nil {
		return nil, err
	}
	prog.PageNote, err = pageNote(filepath.Join(v.root, filepath.FromSlash(pkg)), v.b.Config.WasmTags)
	if err != nil {
		return nil, err
	}
	prog.Runnable = true
	return prog, nil
}

// PageExec is the script a page's run panel loads before a program (and
// noderun.js, to run it as the page does): memfs.js, a line break, then
// toolchainExec, the Go toolchain's wasm_exec.js.
func PageExec(toolchainExec []byte) []byte {
	return append(append(append([]byte(nil), memFS...), '\n'), toolchainExec...)
}

// execWithMemFS writes PageExec of the toolchain's wasm_exec.js (at
// toolchainExec) under the cache's wasm folder, named after the content,
// and returns its path and the hex SHA-256 of its content. The toolchain
// is the same for every program of a verification, so this is done once.
func (v *verifier) execWithMemFS(toolchainExec string) (string, string, error) {
	v.execOnce.Do(func() {
		data, err := os.ReadFile(toolchainExec)
		if err != nil {
			v.execErr = err
			return
		}
		v.execPath, v.execSum, v.execErr = v.cacheScript("wasm_exec", PageExec(data))
	})
	return v.execPath, v.execSum, v.execErr
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "# ") {
			return l
		}
	}
	return strings.TrimSpace(s)
}

// flagKinds maps the functions of package flag that declare a flag to the
// kind of value they take and the index of their name argument.
var flagKinds = map[string]struct {
	kind string
	name int
}{
	"Bool": {"bool", 0}, "BoolVar": {"bool", 1},
	"Int": {"int", 0}, "IntVar": {"int", 1},
	"Int64": {"int64", 0}, "Int64Var": {"int64", 1},
	"Uint": {"uint", 0}, "UintVar": {"uint", 1},
	"Uint64": {"uint64", 0}, "Uint64Var": {"uint64", 1},
	"Float64": {"float64", 0}, "Float64Var": {"float64", 1},
	"String": {"string", 0}, "StringVar": {"string", 1},
	"Duration": {"duration", 0}, "DurationVar": {"duration", 1},
	"Func": {"func", 0},
}

// declaredFlags reads the flags the main package in dir declares with
// package flag's functions (flag.Bool("d2", false, "..."), flag.IntVar(&n,
// "n", 3, "...")), in source order. A call whose name is not a string
// literal is skipped.
func declaredFlags(dir string) ([]Flag, error) {
	fset := token.NewFileSet()
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var flags []Flag
	for _, e := range ents {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		src, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(fset, n, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		local := ""
		for _, im := range f.Imports {
			if im.Path.Value == `"flag"` {
				local = "flag"
				if im.Name != nil {
					local = im.Name.Name
				}
			}
		}
		if local == "" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); !ok || id.Name != local {
				return true
			}
			k, ok := flagKinds[sel.Sel.Name]
			if !ok || len(call.Args) < k.name+2 {
				return true
			}
			name, ok := stringLit(call.Args[k.name])
			if !ok {
				return true
			}
			fl := Flag{Name: name, Kind: k.kind}
			usageArg := call.Args[len(call.Args)-1]
			if k.kind != "func" {
				def := call.Args[k.name+1]
				if s, ok := literalValue(def); ok {
					fl.Default = s
				} else if s, ok := foldDefault(def, k.kind); ok {
					fl.Default = s
				} else {
					fl.Default = string(src[fset.Position(def.Pos()).Offset:fset.Position(def.End()).Offset])
					fl.DefaultExpr = true
				}
			} else {
				usageArg = call.Args[1]
			}
			fl.Usage, _ = stringLit(usageArg)
			flags = append(flags, fl)
			return true
		})
	}
	return flags, nil
}

func stringLit(e ast.Expr) (string, bool) {
	bl, ok := e.(*ast.BasicLit)
	if !ok || bl.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(bl.Value)
	return s, err == nil
}

// literalValue returns the value of a literal default: a string, a number
// (possibly negated), true or false.
func literalValue(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind == token.STRING {
			return stringLit(e)
		}
		return e.Value, true
	case *ast.Ident:
		if e.Name == "true" || e.Name == "false" {
			return e.Name, true
		}
	case *ast.UnaryExpr:
		if bl, ok := e.X.(*ast.BasicLit); ok && e.Op == token.SUB && bl.Kind != token.STRING {
			return "-" + bl.Value, true
		}
	}
	return "", false
}

// timeUnits are package time's duration constants, in nanoseconds.
var timeUnits = map[string]int64{"Nanosecond": 1, "Microsecond": 1e3, "Millisecond": 1e6, "Second": 1e9, "Minute": 60e9, "Hour": 3600e9}

// foldDefault evaluates a flag's default that is a constant expression of
// literals (1 << 20, 3 * 1000) or, for a duration, of literals and
// time's units (2 * time.Second), and returns it as the flag would print
// it ("2s"). Anything else (a variable, a call) is not folded.
func foldDefault(e ast.Expr, kind string) (string, bool) {
	v := fold(e)
	if v == nil || v.Kind() == constant.Unknown {
		return "", false
	}
	switch kind {
	case "duration":
		if n, exact := constant.Int64Val(constant.ToInt(v)); exact {
			return time.Duration(n).String(), true
		}
	case "int", "int64", "uint", "uint64":
		if i := constant.ToInt(v); i.Kind() == constant.Int {
			return i.ExactString(), true
		}
	case "float64":
		if f, _ := constant.Float64Val(constant.ToFloat(v)); constant.ToFloat(v).Kind() == constant.Float {
			return strconv.FormatFloat(f, 'g', -1, 64), true
		}
	}
	return "", false
}

// fold returns the constant value of e, or nil when e is not constant.
func fold(e ast.Expr) constant.Value {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind == token.INT || e.Kind == token.FLOAT {
			return constant.MakeFromLiteral(e.Value, e.Kind, 0)
		}
	case *ast.ParenExpr:
		return fold(e.X)
	case *ast.UnaryExpr:
		if x := fold(e.X); x != nil && (e.Op == token.SUB || e.Op == token.ADD) {
			return constant.UnaryOp(e.Op, x, 0)
		}
	case *ast.SelectorExpr:
		if id, ok := e.X.(*ast.Ident); ok && id.Name == "time" {
			if n, ok := timeUnits[e.Sel.Name]; ok {
				return constant.MakeInt64(n)
			}
		}
	case *ast.BinaryExpr:
		x, y := fold(e.X), fold(e.Y)
		if x == nil || y == nil {
			return nil
		}
		switch e.Op {
		case token.SHL, token.SHR:
			if n, ok := constant.Uint64Val(y); ok && n < 64 {
				return constant.Shift(x, e.Op, uint(n))
			}
			return nil
		case token.ADD, token.SUB, token.MUL:
			return constant.BinaryOp(x, e.Op, y)
		case token.QUO:
			if constant.Sign(y) == 0 {
				return nil
			}
			if x.Kind() == constant.Int && y.Kind() == constant.Int {
				return constant.BinaryOp(x, token.QUO_ASSIGN, y) // integer division
			}
			return constant.BinaryOp(x, e.Op, y)
		}
	}
	return nil
}

// programRuns returns the packages of every "$ go run ./examples/..." of
// docs' console blocks, each once, in reading order, with the transcript
// commands that run each.
func programRuns(mc *MarkdownCache, docs []*expand.Doc) ([]string, map[string][]pageRun) {
	runs := map[string][]pageRun{}
	var out []string
	for _, d := range docs {
		for _, blk := range mc.findBlocks(d.Markdown) {
			if blk.Lang != "console" {
				continue
			}
			if _, ok := blk.Attrs["ignore"]; ok {
				continue
			}
			cmds, err := markdown.ParseTranscript(blk.Lines)
			if err != nil {
				continue
			}
			for _, c := range cmds {
				w, err := markdown.SplitCommand(c.Text)
				if err != nil || len(w) < 3 || w[0] != "go" || w[1] != "run" {
					continue
				}
				pk := markdown.PackageArgs(w)
				if len(pk) != 1 || !strings.HasPrefix(pk[0], "./examples/") || strings.HasSuffix(pk[0], ".go") || strings.Contains(pk[0], "...") {
					continue
				}
				_, args, ok := markdown.RunArgs(c.Text)
				if !ok {
					continue
				}
				p := "./" + strings.TrimPrefix(path.Clean(pk[0]), "./")
				if _, seen := runs[p]; !seen {
					out = append(out, p)
				}
				var timeout time.Duration
				if t, ok := blk.Attrs["timeout"]; ok {
					// A bad value is the transcript check's error.
					if dur, err := time.ParseDuration(t); err == nil && dur > 0 {
						timeout = dur
					}
				}
				runs[p] = append(runs[p], pageRun{At: at(d, blk.LineNos[c.Line]), Text: c.Text, Args: args, Expected: c.Expected, Timeout: timeout})
			}
		}
	}
	return out, runs
}

// pageNoteDirective starts a line of a program's js/wasm-only file that
// says what differs when the program runs in the page.
const pageNoteDirective = "//bookgen:page-note "

// pageNote returns the page notes of the package in dir: the text of
// every pageNoteDirective line in its .go files (tests aside) that a
// js/wasm build with tags compiles and a host build does not, in file
// order, joined with "; ".
func pageNote(dir string, tags []string) (string, error) {
	page := build.Default
	page.GOOS, page.GOARCH, page.CgoEnabled, page.BuildTags = "js", "wasm", false, tags
	host := build.Default
	host.BuildTags = tags
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var notes []string
	for _, e := range ents {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		inPage, err := page.MatchFile(dir, n)
		if err != nil || !inPage {
			continue
		}
		if onHost, err := host.MatchFile(dir, n); err != nil || onHost {
			continue
		}
		src, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return "", err
		}
		for _, l := range strings.Split(string(src), "\n") {
			if t, ok := strings.CutPrefix(strings.TrimSpace(l), pageNoteDirective); ok && strings.TrimSpace(t) != "" {
				notes = append(notes, strings.TrimSpace(t))
			}
		}
	}
	return strings.Join(notes, "; "), nil
}
