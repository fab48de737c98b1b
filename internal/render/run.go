package render

import (
	"encoding/json"
	"fmt"
	"hash"
	"html"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/yuin/goldmark/ast"

	"github.com/ownership-book/ownership/internal/markdown"
	"github.com/ownership-book/ownership/internal/verify"
)

// File is a file a page needs in the site besides its HTML: a program's
// WebAssembly binary or the wasm_exec.js that runs it.
type File struct {
	Name   string // site path: "assets/figure8.1a2b3c4d.wasm"
	Source string // absolute path of its content
}

// attrRun is the node attribute holding the HTML of a console block's run
// panels, set by markRun and written by the fenced block renderer.
const attrRun = "bookgen-run"

// programIndex is what the renderer knows about the programs transcripts
// run (see SetPrograms).
type programIndex struct {
	byPkg map[string]verify.Program
	set   bool
}

// SetPrograms gives the renderer the programs of the verification that
// precedes it (verify.Report.Programs). A console block whose "$ go run
// ./examples/x" runs a program built for the browser gets a run panel
// after it (hidden until theme/run.js shows it, so a page without
// JavaScript shows the verified transcript only); one whose program cannot
// run in a browser gets a note saying why.
func (r *Renderer) SetPrograms(progs []verify.Program) {
	r.programs = programIndex{byPkg: map[string]verify.Program{}, set: true}
	for _, p := range progs {
		r.programs.byPkg[p.Package] = p
	}
}

// programsKey adds the programs to a page's cache key.
func (r *Renderer) programsKey(h hash.Hash) {
	fmt.Fprintf(h, "\x00programs:%v\x00", r.programs.set)
	// Map order is random: hash in package order.
	pkgs := make([]string, 0, len(r.programs.byPkg))
	for k := range r.programs.byPkg {
		pkgs = append(pkgs, k)
	}
	sort.Strings(pkgs)
	for _, k := range pkgs {
		data, _ := json.Marshal(r.programs.byPkg[k])
		h.Write(data)
		h.Write([]byte{0})
	}
}

// WasmName is the site path of a program's binary: the package's last
// element and 8 hex digits of its SHA-256 ("assets/figure8.1a2b3c4d.wasm").
func WasmName(p verify.Program) string {
	return "assets/" + path.Base(p.Package) + "." + p.Sum[:8] + ".wasm"
}

// WasmExecName is the site path of the wasm_exec.js that runs p.
func WasmExecName(p verify.Program) string {
	return "assets/wasm_exec." + p.WasmExecSum[:8] + ".js"
}

// markRun gives a console block the HTML of its run panels and records the
// files they need in pg.Files.
func (r *Renderer) markRun(n *ast.FencedCodeBlock, src []byte, pg *Page) {
	if !r.programs.set || n.Info == nil || parseInfo(string(n.Info.Segment.Value(src))).Lang != "console" {
		return
	}
	var lines []string
	for i := 0; i < n.Lines().Len(); i++ {
		seg := n.Lines().At(i)
		lines = append(lines, strings.TrimRight(string(seg.Value(src)), "\r\n"))
	}
	cmds, err := markdown.ParseTranscript(lines)
	if err != nil {
		return
	}
	var b strings.Builder
	for _, c := range cmds {
		pkg, args, ok := markdown.RunArgs(c.Text)
		if !ok {
			continue
		}
		p, ok := r.programs.byPkg[pkg]
		if !ok {
			continue
		}
		if !p.Runnable {
			b.WriteString(`<p class="run-note">Runs on your machine only (<code>` + html.EscapeString(c.Text) + `</code>): ` + html.EscapeString(p.Reason) + `</p>`)
			continue
		}
		writeRunPanel(&b, c, p, args, len(cmds) > 1)
		pg.addFile(File{Name: WasmName(p), Source: p.Wasm})
		pg.addFile(File{Name: WasmExecName(p), Source: p.WasmExec})
	}
	if b.Len() > 0 {
		n.SetAttributeString(attrRun, []byte(b.String()))
	}
}

func (pg *Page) addFile(f File) {
	for _, g := range pg.Files {
		if g.Name == f.Name {
			return
		}
	}
	pg.Files = append(pg.Files, f)
}

// writeRunPanel writes the panel of one runnable command:
//
//	<div class="run" data-wasm="assets/x.hash.wasm" data-exec="assets/wasm_exec.hash.js"
//	     data-args='["-d2"]' data-expected='["line", ...]' hidden>
//	  <div class="run-bar"><button class="run-button" title="…">Run</button>
//	  <span class="run-status" role="status"></span></div>
//	  <details class="run-flags"><summary>Flags</summary><label>…</label></details>
//	  <pre class="run-output" hidden></pre>
//	</div>
//
// data-args are the transcript's arguments; data-expected its verified
// output lines ("..." and "[..]" as in the chapter). The flag inputs carry
// the value the transcript gives (or the default) and data-default.
func writeRunPanel(b *strings.Builder, c markdown.Command, p verify.Program, args []string, many bool) {
	argsJSON, _ := json.Marshal(args)
	if args == nil {
		argsJSON = []byte("[]")
	}
	exp := c.Expected
	if exp == nil {
		exp = []string{}
	}
	expJSON, _ := json.Marshal(exp)
	values, rest := flagValues(p.Flags, args)
	restJSON, _ := json.Marshal(rest)
	if rest == nil {
		restJSON = []byte("[]")
	}
	name := path.Base(p.Package)
	title := fmt.Sprintf("Run %s in this page (WebAssembly, %s; %s compressed)", name, humanBytes(p.Size), humanBytes(p.Gzip))
	fmt.Fprintf(b, `<div class="run" data-wasm="%s" data-exec="%s" data-args="%s" data-expected="%s" data-rest="%s" data-name="%s" data-pkg="%s" hidden>`,
		html.EscapeString(WasmName(p)), html.EscapeString(WasmExecName(p)), html.EscapeString(string(argsJSON)), html.EscapeString(string(expJSON)), html.EscapeString(string(restJSON)), html.EscapeString(name), html.EscapeString(p.Package))
	b.WriteString(`<div class="run-bar"><button type="button" class="run-button" title="` + html.EscapeString(title) + `">Run</button>`)
	if many {
		b.WriteString(` <code class="run-cmd">` + html.EscapeString(c.Text) + `</code>`)
	}
	b.WriteString(`<span class="run-status" role="status" aria-live="polite"></span></div>`)
	if p.PageNote != "" {
		b.WriteString(`<p class="run-page-note">In this page: ` + html.EscapeString(p.PageNote) + `</p>`)
	}
	if len(p.Flags) > 0 {
		b.WriteString(`<details class="run-flags"><summary>Flags</summary>`)
		for _, f := range p.Flags {
			id := "-" + f.Name
			usage := `<span class="run-usage">` + html.EscapeString(f.Usage) + `</span>`
			v, given := values[f.Name]
			if f.Kind == "bool" {
				checked := ""
				if given && v == "true" || !given && f.Default == "true" {
					checked = " checked"
				}
				fmt.Fprintf(b, `<label class="run-flag"><input type="checkbox" data-flag="%s" data-kind="bool" data-default="%s"%s> <code>%s</code> %s</label>`,
					html.EscapeString(f.Name), html.EscapeString(f.Default), checked, html.EscapeString(id), usage)
				continue
			}
			// A default that is Go source (a variable, a call) is the
			// program's own: the input is left empty and never passed,
			// rather than showing source where a value belongs.
			def := f.Default
			if f.DefaultExpr {
				def = ""
			}
			if !given {
				v = def
			}
			fmt.Fprintf(b, `<label class="run-flag"><code>%s</code> <input type="text" data-flag="%s" data-kind="%s" data-default="%s" value="%s" placeholder="%s" spellcheck="false"> %s</label>`,
				html.EscapeString(id), html.EscapeString(f.Name), html.EscapeString(f.Kind), html.EscapeString(def), html.EscapeString(v), html.EscapeString(def), usage)
		}
		b.WriteString(`</details>`)
	}
	b.WriteString(`<pre class="run-output" hidden></pre></div>`)
}

// flagValues reads the transcript's arguments as package flag would for
// the declared flags: "-n=3", "-n 3", "--n=3", "-d2" for a bool. It
// returns the values given and the arguments after the flags.
func flagValues(flags []verify.Flag, args []string) (map[string]string, []string) {
	kinds := map[string]string{}
	for _, f := range flags {
		kinds[f.Name] = f.Kind
	}
	vals := map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return vals, args[i+1:]
		}
		if len(a) < 2 || a[0] != '-' {
			return vals, args[i:]
		}
		name := strings.TrimLeft(a, "-")
		val, hasVal := "", false
		if j := strings.IndexByte(name, '='); j >= 0 {
			name, val, hasVal = name[:j], name[j+1:], true
		}
		k, ok := kinds[name]
		if !ok {
			return vals, args[i:]
		}
		if !hasVal {
			if k == "bool" {
				val = "true"
			} else if i+1 < len(args) {
				i++
				val = args[i]
			}
		}
		if k == "bool" {
			if bv, err := strconv.ParseBool(val); err == nil {
				val = strconv.FormatBool(bv)
			}
		}
		vals[name] = val
	}
	return vals, nil
}

// humanBytes formats n bytes as "812 KB" or "2.4 MB" (powers of 1000).
func humanBytes(n int64) string {
	switch {
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%d KB", (n+500)/1000)
	}
	return fmt.Sprintf("%d bytes", n)
}

// RunCSS returns the style of the run panels and notes, in the theme's
// colours (both themes: it uses book.css's variables).
func RunCSS() []byte { return []byte(runCSS) }

const runCSS = `
.code-block:has(+ .run:not([hidden])), .code-block:has(+ .run-note) { margin-bottom: 0; }
.code-block:has(+ .run:not([hidden])) pre.chroma, .code-block:has(+ .run-note) pre.chroma { border-bottom-left-radius: 0; border-bottom-right-radius: 0; }
.run { margin: 0 0 1rem; padding: 0.5rem 0.75rem; border: 1px solid var(--border); border-top: 0; border-radius: 0 0 6px 6px; background: var(--bg); font-size: 0.9rem; }
.run-bar { display: flex; flex-wrap: wrap; align-items: center; gap: 0.5rem 0.75rem; }
.run-button { font: inherit; padding: 0.2rem 0.9rem; border: 1px solid var(--accent); border-radius: 6px; background: var(--accent); color: var(--bg); cursor: pointer; }
.run-button:hover, .run-button:focus-visible { filter: brightness(1.1); }
.run-button:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
.run-status { color: var(--muted); overflow-wrap: anywhere; }
.run-status[data-state="match"] { color: var(--check-fg); }
.run-status[data-state="differs"], .run-status[data-state="error"] { color: var(--note-fg); background: var(--note-bg); padding: 0 0.25rem; border-radius: 3px; }
.run-cmd { font-size: 0.9em; overflow-wrap: anywhere; }
.run-page-note { margin: 0.4rem 0 0; color: var(--muted); font-size: 0.85rem; overflow-wrap: anywhere; }
.run-flags { margin-top: 0.5rem; }
.run-flags summary { cursor: pointer; color: var(--muted); }
.run-flag { display: flex; flex-wrap: wrap; align-items: baseline; gap: 0.25rem 0.5rem; margin: 0.35rem 0 0 0.5rem; }
.run-flag input[type="text"] { font: 0.9em var(--font-mono); width: 10rem; max-width: 100%; padding: 0.1rem 0.3rem; border: 1px solid var(--border); border-radius: 4px; background: var(--code-bg); color: var(--fg); }
.run-usage { color: var(--muted); }
.run-output { margin: 0.5rem 0 0; padding: 0.6rem 0.75rem; max-height: 32rem; overflow: auto; background: var(--code-bg); color: var(--fg); border-radius: 6px; font: 0.85rem/1.45 var(--font-mono); white-space: pre-wrap; overflow-wrap: anywhere; }
.run-note { margin: 0 0 1rem; padding: 0.35rem 0.75rem; border: 1px solid var(--border); border-top: 0; border-radius: 0 0 6px 6px; color: var(--muted); font-size: 0.85rem; overflow-wrap: anywhere; }
@media (min-width: 900px) { .chapter .run, .chapter .run-note { margin-right: -2rem; } }
@media print { .run { display: none; } }
`
