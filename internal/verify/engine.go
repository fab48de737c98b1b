package verify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ownership-book/ownership/internal/markdown"
)

// jsEngine is the JavaScript engine the page's programs are verified in:
// Node, found on PATH. version is "node v20.20.2", or "none" (path "")
// when there is no node on PATH.
type jsEngine struct {
	path, version string
}

// nodeCmd names the engine's command; tests point it elsewhere.
var nodeCmd = "node"

// jsEngine finds Node once per verification. Without it, outside CI, the
// page's programs are marked not verified; with CI set that is an error,
// as a missing tool is in every other check. Its version is read once
// per binary ("node --version") and kept in the cache beside go's, keyed
// by the binary's path, size and modification time, so that a warm
// build starts no process.
func (v *verifier) jsEngine(ctx context.Context) (jsEngine, error) {
	v.engineOnce.Do(func() {
		p, err := exec.LookPath(nodeCmd)
		if err != nil {
			v.engine = jsEngine{version: "none"}
			if os.Getenv("CI") != "" {
				v.engineErr = fmt.Errorf("no JavaScript engine (%s) on PATH: the programs the page runs are verified in one (CI is set, so this is an error; install Node)", nodeCmd)
			} else {
				v.logf("verify: no JavaScript engine (%s) on PATH: the page's programs are not verified in one, so no Run button is shown", nodeCmd)
			}
			return
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		fi, err := os.Stat(p)
		if err != nil {
			v.engineErr = err
			return
		}
		want := goVersion{Path: p, Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}
		file := filepath.Join(v.cache.dir, "nodeversion.json")
		if data, err := os.ReadFile(file); err == nil {
			var got goVersion
			if json.Unmarshal(data, &got) == nil && got.Path == want.Path && got.Size == want.Size && got.ModTime == want.ModTime && got.Version != "" {
				v.engine = jsEngine{path: p, version: got.Version}
				return
			}
		}
		res, err := v.exec(ctx, Run{Args: []string{p, "--version"}, Dir: v.root, Timeout: listTimeout, Machine: true})
		if err != nil || res.ExitCode != 0 || len(res.Output) == 0 {
			v.engineErr = fmt.Errorf("%s --version: %v (exit status %d) %s", p, err, res.ExitCode, strings.TrimSpace(string(res.Stderr)))
			return
		}
		want.Version = "node " + strings.TrimSpace(string(res.Output))
		v.engine = jsEngine{path: p, version: want.Version}
		if data, err := json.Marshal(want); err == nil && os.MkdirAll(v.cache.dir, 0o755) == nil {
			_ = writeAtomic(file, data, 0o644)
		}
	})
	return v.engine, v.engineErr
}

// runnerPath writes noderun.js under the cache's wasm folder, named after
// its content, and returns its path.
func (v *verifier) runnerPath() (string, error) {
	p, _, err := v.cacheScript("noderun", nodeRunner)
	return p, err
}

// cacheScript writes data under the cache's wasm folder as
// NAME-<16 hex digits of its SHA-256>.js, unless a file of that name is
// there already, and returns its path and the whole hex SHA-256.
func (v *verifier) cacheScript(name string, data []byte) (string, string, error) {
	h := sha256.Sum256(data)
	sum := hex.EncodeToString(h[:])
	p := filepath.Join(filepath.Dir(v.cache.dir), "wasm", name+"-"+sum[:16]+".js")
	if fileExists(p) {
		return p, sum, nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", "", err
	}
	return p, sum, writeAtomic(p, data, 0o644)
}

// pageOutput is what one transcript command printed when its program ran
// in the JavaScript engine: Output as the page shows it (stdout and stderr
// in order, then "exit status N" for N > 0), or Failure when the run did
// not end normally ("did not finish within 60s", "could not run: ...").
type pageOutput struct {
	Output  string `json:"output,omitempty"`
	Failure string `json:"failure,omitempty"`
}

// runInEngine runs each transcript command of prog in the engine as the
// page would run it (noderun.js), each with the transcript's timeout and
// MaxOutput, and returns what each printed (none when there is no
// engine); judgePageRuns then compares them with the transcripts. An error
// is returned only when the engine could not be started at all.
func (v *verifier) runInEngine(ctx context.Context, engine jsEngine, prog *Program, runs []pageRun) ([]pageOutput, error) {
	if engine.path == "" {
		return nil, nil
	}
	runner, err := v.runnerPath()
	if err != nil {
		return nil, err
	}
	name := filepath.Base(prog.Package)
	var outs []pageOutput
	for _, run := range runs {
		args := append([]string{engine.path, runner, prog.WasmExec, prog.Wasm, name}, run.Args...)
		timeout := v.pageTimeout(run)
		res, err := v.exec(ctx, Run{Args: args, Dir: v.root, Timeout: timeout, Machine: true})
		if err != nil {
			if errors.Is(err, ErrStart) {
				return nil, err
			}
			return nil, fmt.Errorf("%s: %v", run.At, err)
		}
		var o pageOutput
		switch {
		case res.OutputLimited:
			o.Failure = fmt.Sprintf("printed more than %d MiB", MaxOutput>>20)
		case res.TimedOut:
			o.Failure = "did not finish within " + fmtDuration(timeout)
		case res.ExitCode == 125 || res.ExitCode < 0:
			o.Failure = "could not run: " + firstLine(string(res.Stderr))
		default:
			o.Output = string(res.Output)
			if res.ExitCode != 0 {
				if o.Output != "" && !strings.HasSuffix(o.Output, "\n") {
					o.Output += "\n"
				}
				o.Output += fmt.Sprintf("exit status %d\n", res.ExitCode)
			}
		}
		outs = append(outs, o)
	}
	return outs, nil
}

// judgePageRuns decides whether the built program prog may be offered on
// the page: every transcript command that runs it printed, in the engine,
// what its transcript shows (markdown.Compare, as for "go run"). The
// first that did not makes prog not runnable, with the reason; with no
// engine, prog is not runnable, "not verified".
func judgePageRuns(prog *Program, engine jsEngine, runs []pageRun, outs []pageOutput) {
	if !prog.Runnable {
		return
	}
	prog.Runnable = false
	if engine.path == "" || len(outs) != len(runs) {
		prog.Reason = "not verified in a JavaScript engine (no " + nodeCmd + " on PATH when the book was built)"
		return
	}
	for i, run := range runs {
		where := "$ " + run.Text
		if f := outs[i].Failure; f != "" {
			prog.Reason = fmt.Sprintf("in %s, %s %s", engine.version, where, f)
			return
		}
		if same, diff := markdown.Compare(run.Expected, outputLines(outs[i].Output)); !same {
			prog.Reason = fmt.Sprintf("in %s, %s prints what its transcript does not show: %s", engine.version, where, firstDiff(diff))
			return
		}
	}
	prog.Runnable = true
	prog.Engine = engine.version
}

// firstDiff describes the first place where an alignment of Compare
// departs from the transcript: the transcript's line there (with its
// number) and what the program printed instead, from the same hunk.
func firstDiff(diff []markdown.Edit) string {
	i := 0
	for i < len(diff) && diff[i].Op == ' ' {
		i++
	}
	var want, got *markdown.Edit
	for ; i < len(diff) && diff[i].Op != ' '; i++ {
		switch e := &diff[i]; {
		case e.Op == '-' && want == nil:
			want = e
		case e.Op == '+' && got == nil:
			got = e
		}
	}
	switch {
	case want != nil && got != nil:
		return fmt.Sprintf("the transcript's line %d is %q, the program printed %q", want.Expected+1, want.Text, got.Text)
	case want != nil:
		return fmt.Sprintf("the transcript's line %d, %q, is not printed", want.Expected+1, want.Text)
	case got != nil:
		return fmt.Sprintf("the program printed %q where the transcript shows nothing", got.Text)
	}
	return "the output differs"
}
