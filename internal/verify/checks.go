package verify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/scanner"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/expand"
	"github.com/ownership-book/ownership/internal/markdown"
)

// packageJob runs "go vet" or "go test" (kind) on one examples package
// ("./examples/x"). The test runs as "go test -json", so that the outcome
// of each test function is known to the claims that name them (see
// claims.go); problems are reported from the output go test would print
// without -json.
func (v *verifier) packageJob(kind, pkg string) job {
	return func(ctx context.Context) jobResult {
		var r jobResult
		dir := strings.TrimPrefix(pkg, "./")
		fail := func(line int, file, format string, args ...any) jobResult {
			r.errs = append(r.errs, diag.Errorf(file, line, format, args...))
			return r
		}
		args, keyParts := []string{v.goCmd, kind, pkg}, []string{pkg}
		if kind == "test" {
			// "empty": the entry's Tests tell a function that ran no
			// check (readTestEvents), which entries before it did not.
			timeout := "-timeout=" + testBinaryTimeout.String()
			args, keyParts = []string{v.goCmd, kind, "-json", timeout, pkg}, []string{pkg, "-json", "empty", timeout}
			r.tests = &pkgTests{pkg: pkg}
		}
		key, err := v.staticKey(ctx, kind, keyParts...)
		if err != nil {
			return fail(0, dir, "go %s %s: %v", kind, pkg, err)
		}
		if e, ok := v.cache.lookup(key); ok {
			v.logf("verify: %s %s: cached", kind, pkg)
			r.checks = append(r.checks, Check{Kind: kind, Subject: pkg, Cached: true})
			if r.tests != nil {
				r.tests.status = e.Tests
			}
			return r
		}
		l, err := v.localDirs(ctx, nil, []string{pkg})
		if err != nil {
			return fail(0, dir, "%v", err)
		}
		m := newManifest(v.cache.h, l)
		res, err := v.exec(ctx, Run{Args: args, Dir: v.root, Timeout: PackageTimeout})
		r.checks = append(r.checks, Check{Kind: kind, Subject: pkg, Elapsed: res.Elapsed})
		if r.tests != nil {
			r.tests.status, r.tests.outputs, res.Output = readTestEvents(res.Output)
		}
		switch {
		case err != nil:
			return fail(0, dir, "go %s %s: %v", kind, pkg, err)
		case res.TimedOut:
			return fail(0, dir, "go %s %s: timeout after %s", kind, pkg, fmtDuration(PackageTimeout))
		case res.OutputLimited:
			r.errs = append(r.errs, &diag.Error{File: dir, Msg: fmt.Sprintf("go %s %s: printed more than %d MiB; its process group was killed", kind, pkg, MaxOutput>>20), Detail: clipOutput(string(res.Output))})
			return r
		case res.ExitCode != 0 && strings.Contains(string(res.Output), "build constraints exclude all Go files"):
			// A directory of files for other platforms or "//go:build
			// ignore" generators: no package to check here.
		case res.ExitCode != 0:
			file, line, msg := v.locate(dir, string(res.Output))
			if hung := hungTests(string(res.Output)); len(hung) > 0 {
				file, line = dir, 0
				msg = fmt.Sprintf("%s did not return within %s (the test binary's -timeout; every goroutine's stack is below)", strings.Join(hung, ", "), testBinaryTimeout)
			}
			e := diag.Errorf(file, line, "go %s %s failed: %s", kind, pkg, msg)
			e.Detail = clipOutput(string(res.Output))
			v.noteFailure(e, "go "+kind+" "+pkg, string(res.Output))
			r.errs = append(r.errs, e)
			v.logf("verify: %s %s: FAIL (%v)", kind, pkg, res.Elapsed.Round(time.Millisecond))
			return r
		}
		v.logf("verify: %s %s: ok (%v)", kind, pkg, res.Elapsed.Round(time.Millisecond))
		var tests map[string]string
		if r.tests != nil {
			tests = r.tests.status
		}
		if err := v.cache.store(&entry{Kind: kind, Subject: pkg, Key: key, Manifest: m, Tests: tests}); err != nil {
			v.logf("verify: cache: %v", err)
		}
		return r
	}
}

// hungTests returns the tests a test binary names after "panic: test timed
// out after D" (its -timeout), in the order it lists them: the lines of
// the "running tests:" list that follows, "\t\tTestX (7m0s)".
func hungTests(out string) []string {
	_, rest, ok := strings.Cut(out, "panic: test timed out after ")
	if !ok {
		return nil
	}
	_, rest, ok = strings.Cut(rest, "running tests:\n")
	if !ok {
		return nil
	}
	var names []string
	for _, l := range strings.Split(rest, "\n") {
		name, _, ok := strings.Cut(strings.TrimSpace(l), " (")
		if !ok || !strings.HasPrefix(name, "Test") && !strings.HasPrefix(name, "Fuzz") && !strings.HasPrefix(name, "Example") {
			break
		}
		names = append(names, name)
	}
	return names
}

var posRE = regexp.MustCompile(`([^\s:]+\.go):(\d+)(?::\d+)?: ?(.*)`)

// locate finds the first "file.go:line: message" in go's output and returns
// the file relative to the repository (resolving names relative to the
// package directory dir), the line and the message. Without one, it returns
// dir, 0 and the first non-blank output line.
func (v *verifier) locate(dir, out string) (string, int, string) {
	for _, m := range posRE.FindAllStringSubmatch(out, -1) {
		line, _ := strconv.Atoi(m[2])
		for _, cand := range []string{m[1], path.Join(dir, m[1])} {
			p := cand
			if filepath.IsAbs(cand) {
				rel, err := filepath.Rel(v.root, cand)
				if err != nil || strings.HasPrefix(rel, "..") {
					continue
				}
				p = filepath.ToSlash(rel)
			}
			p = path.Clean(strings.TrimPrefix(p, "./"))
			if fi, err := os.Stat(filepath.Join(v.root, filepath.FromSlash(p))); err == nil && fi.Mode().IsRegular() {
				return p, line, strings.TrimSpace(m[3])
			}
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return dir, 0, l
		}
	}
	return dir, 0, "no output"
}

// clipOutput keeps the first 80 lines of a command's output for a Detail,
// without terminal escape sequences (markdown.StripANSI).
func clipOutput(s string) string {
	s = markdown.StripANSI(s)
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 80 {
		lines = append(lines[:80], fmt.Sprintf("... (%d more lines)", len(lines)-80))
	}
	return strings.Join(lines, "\n")
}

// transcriptJob checks the commands of one console block in order. It
// returns the job and its name for Options.Progress: the block's first
// command, "book/ch.md:12: $ go run ./examples/x".
func (v *verifier) transcriptJob(d *expand.Doc, blk markdown.Block) (job, string, *diag.Error) {
	cmds, err := markdown.ParseTranscript(blk.Lines)
	if err != nil {
		var te *markdown.TranscriptError
		if errors.As(err, &te) {
			return nil, "", errAt(d, blk.LineNos[te.Line], "console block: %s", te.Msg)
		}
		return nil, "", errAt(d, blk.Line, "console block: %v", err)
	}
	timeout := v.timeout
	if t, ok := blk.Attrs["timeout"]; ok {
		dur, err := time.ParseDuration(t)
		if err != nil || dur <= 0 {
			return nil, "", errAt(d, blk.Line, "console block: timeout=%q is not a positive Go duration such as 120s", t)
		}
		timeout = dur
	}
	words := make([][]string, len(cmds))
	for i, c := range cmds {
		w, err := markdown.SplitCommand(c.Text)
		if err != nil {
			return nil, "", errAt(d, blk.LineNos[c.Line], "$ %s: %v", c.Text, err)
		}
		if len(w) < 2 || w[0] != "go" || (w[1] != "run" && w[1] != "test") {
			return nil, "", errAt(d, blk.LineNos[c.Line], "$ %s: only \"go run ...\" and \"go test ...\" commands can be verified; show other commands in a ```sh block or mark the block \"console ignore\"", c.Text)
		}
		words[i] = w
	}
	if len(cmds) > 0 {
		if err := v.needModule(d, blk.LineNos[cmds[0].Line], fmt.Sprintf("$ %s: a transcript's commands run", cmds[0].Text)); err != nil {
			return nil, "", err
		}
	}
	name := at(d, blk.Line)
	if len(cmds) > 0 {
		name = at(d, blk.LineNos[cmds[0].Line]) + ": $ " + cmds[0].Text
	}
	return func(ctx context.Context) jobResult {
		var r jobResult
		for i, c := range cmds {
			v.runCommand(ctx, d, blk, c, words[i], timeout, &r)
		}
		return r
	}, name, nil
}

// runCommand checks one transcript command, adding to r.
func (v *verifier) runCommand(ctx context.Context, d *expand.Doc, blk markdown.Block, c markdown.Command, words []string, timeout time.Duration, r *jobResult) {
	cmdLine := blk.LineNos[c.Line]
	subject := at(d, cmdLine)
	fail := func(n int, detail, format string, args ...any) *diag.Error {
		e := errAt(d, n, format, args...)
		e.Detail = detail
		r.errs = append(r.errs, e)
		return e
	}
	key, err := v.staticKey(ctx, "transcript", words...)
	if err != nil {
		fail(cmdLine, "", "$ %s: %v", c.Text, err)
		return
	}
	if e, ok := v.cache.lookup(key); ok {
		if markdown.Matches(c.Expected, outputLines(e.Output)) && markdown.ExitAccepted(e.ExitCode, c.Expected) {
			v.logf("verify: transcript %s: cached", subject)
			r.checks = append(r.checks, Check{Kind: "transcript", Subject: subject, Cached: true})
			return
		}
	}
	pkgArgs := markdown.PackageArgs(words)
	l, err := v.localDirs(ctx, nil, pkgArgs)
	if err != nil {
		fail(cmdLine, "", "$ %s: %v", c.Text, err)
		return
	}
	m := newManifest(v.cache.h, l)
	m.addPatternTrees(v.cache.h, pkgArgs)
	m.addArgPaths(v.cache.h, words)
	res, err := v.exec(ctx, Run{Args: append([]string{v.goCmd}, words[1:]...), Dir: v.root, Timeout: timeout})
	r.checks = append(r.checks, Check{Kind: "transcript", Subject: subject, Elapsed: res.Elapsed})
	switch {
	case err != nil:
		fail(cmdLine, "", "$ %s: %v", c.Text, err)
		return
	case res.OutputLimited:
		fail(cmdLine, clipOutput(string(res.Output)), "$ %s: printed more than %d MiB; its process group was killed (a loop that never ends?)", c.Text, MaxOutput>>20)
		v.logf("verify: transcript %s: output limit", subject)
		return
	case res.TimedOut:
		fail(cmdLine, clipOutput(string(res.Output)), "$ %s: timeout after %s (its process group was killed; set a longer one with ```console timeout=2m)", c.Text, fmtDuration(timeout))
		v.logf("verify: transcript %s: timeout", subject)
		return
	}
	actual := outputLines(string(res.Output))
	same, diff := markdown.Compare(c.Expected, actual)
	exitOK := markdown.ExitAccepted(res.ExitCode, c.Expected)
	store := func() {
		err := v.cache.store(&entry{Kind: "transcript", Subject: subject, Key: key, Manifest: m, Output: string(res.Output), ExitCode: res.ExitCode})
		if err != nil {
			v.logf("verify: cache: %v", err)
		}
	}
	if same && exitOK {
		v.logf("verify: transcript %s: ok (%v)", subject, res.Elapsed.Round(time.Millisecond))
		store()
		return
	}
	if v.opt.Bless {
		if !markdown.ExitAccepted(res.ExitCode, actual) {
			fail(cmdLine, clipOutput(string(res.Output)), "$ %s: exited with status %d and printed no \"exit status N\" line; not blessed", c.Text, res.ExitCode)
			return
		}
		edit, err := blessFor(d, blk, c, actual)
		if err != nil {
			fail(cmdLine, "", "$ %s: %v", c.Text, err)
			return
		}
		v.logf("verify: transcript %s: blessed", subject)
		r.edits = append(r.edits, edit)
		store()
		return
	}
	if !same {
		idx := markdown.FirstDifference(diff, len(c.Expected))
		line := cmdLine
		switch {
		case idx >= 0 && idx < len(c.Expected):
			line = blk.LineNos[c.Line+1+idx]
		case len(c.Expected) > 0:
			line = blk.LineNos[c.Line+len(c.Expected)]
		}
		detail := markdown.FormatDiff(diff, 3)
		if hint := markdown.WhitespaceHint(diff); hint != "" {
			detail += hint + "\n"
		}
		e := fail(line, detail, "output of \"%s\" differs from the %s (run bookgen test --bless to take the real output)", c.Text, blockNoun(blk))
		v.noteFailure(e, subject+": $ "+c.Text, string(res.Output))
		v.logf("verify: transcript %s: FAIL", subject)
		return
	}
	e := fail(cmdLine, clipOutput(string(res.Output)), "$ %s: exited with status %d; a transcript of a failing program shows the \"exit status N\" line go run prints", c.Text, res.ExitCode)
	v.noteFailure(e, subject+": $ "+c.Text, string(res.Output))
}

// fmtDuration writes whole seconds as "60s" (time.Duration would say
// "1m0s").
func fmtDuration(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return d.String()
}

// outputLines is markdown.OutputLines.
func outputLines(out string) []string { return markdown.OutputLines(out) }

// isWholeFile reports whether the first line that is neither blank nor a
// comment starts with "package".
func isWholeFile(lines []string) bool {
	inComment := false
	for _, l := range lines {
		l = strings.TrimSpace(l)
		for l != "" {
			if inComment {
				end := strings.Index(l, "*/")
				if end < 0 {
					l = ""
					break
				}
				l, inComment = strings.TrimSpace(l[end+2:]), false
				continue
			}
			if strings.HasPrefix(l, "//") {
				l = ""
				break
			}
			if strings.HasPrefix(l, "/*") {
				l, inComment = l[2:], true
				continue
			}
			return l == "package" || strings.HasPrefix(l, "package ") || strings.HasPrefix(l, "package\t")
		}
	}
	return false
}

// checkFragment parses a go block that is not a whole file: as top-level
// declarations, as statements of a function body, or as an expression.
// The error reported is the one that got furthest into the block.
func checkFragment(d *expand.Doc, blk markdown.Block) *diag.Error {
	src := strings.Join(blk.Lines, "\n")
	type attempt struct {
		wrapped string
		offset  int // lines added before the block
	}
	var best scanner.Error
	bestLine := -1
	for _, a := range []attempt{
		{"package p\n" + src + "\n", 1},
		{"package p\nfunc _() {\n" + src + "\n}\n", 2},
	} {
		_, err := parser.ParseFile(token.NewFileSet(), "fragment.go", a.wrapped, parser.SkipObjectResolution)
		if err == nil {
			return nil
		}
		var list scanner.ErrorList
		if errors.As(err, &list) && len(list) > 0 {
			line := list[0].Pos.Line - a.offset
			if line > bestLine {
				best, bestLine = *list[0], line
			}
		}
	}
	if _, err := parser.ParseExpr(src); err == nil {
		return nil
	}
	n := blk.Line
	if len(blk.LineNos) > 0 {
		// An error past the block (a missing closing brace) is reported
		// at its last line.
		n = blk.LineNos[max(0, min(bestLine, len(blk.LineNos))-1)]
	}
	return errAt(d, n, "go block does not parse as declarations or statements: %s (mark it ```go ignore if it is not Go)", best.Msg)
}

// compileJob builds and vets a go block that is a whole file.
func (v *verifier) compileJob(d *expand.Doc, blk markdown.Block) job {
	return func(ctx context.Context) jobResult {
		var r jobResult
		subject := at(d, blk.Line)
		src := strings.Join(blk.Lines, "\n") + "\n"
		fail := func(n int, detail, format string, args ...any) jobResult {
			e := errAt(d, n, format, args...)
			e.Detail = detail
			r.errs = append(r.errs, e)
			return r
		}
		key, err := v.staticKey(ctx, "compile", src)
		if err != nil {
			return fail(blk.Line, "", "go block: %v", err)
		}
		if _, ok := v.cache.lookup(key); ok {
			v.logf("verify: compile %s: cached", subject)
			r.checks = append(r.checks, Check{Kind: "compile", Subject: subject, Cached: true})
			return r
		}
		var l listed
		if local := v.localImports(src); len(local) > 0 {
			if l, err = v.localDirs(ctx, nil, local); err != nil {
				return fail(blk.Line, "", "go block: %v", err)
			}
		}
		m := newManifest(v.cache.h, l)
		tmp, err := os.MkdirTemp("", "bookgen-snippet-")
		if err != nil {
			return fail(blk.Line, "", "go block: %v", err)
		}
		defer os.RemoveAll(tmp)
		snippet := filepath.Join(tmp, "snippet.go")
		rel := v.b.RepoPath("zz_bookgen_snippet.go")
		virtual := filepath.Join(v.root, filepath.FromSlash(rel))
		overlay := filepath.Join(tmp, "overlay.json")
		ov, _ := json.Marshal(map[string]map[string]string{"Replace": {virtual: snippet}})
		if err := errors.Join(os.WriteFile(snippet, []byte(src), 0o644), os.WriteFile(overlay, ov, 0o644)); err != nil {
			return fail(blk.Line, "", "go block: %v", err)
		}
		start := time.Now()
		for _, args := range [][]string{
			// The file is named on the command line, as in "go run
			// gen.go": it builds alone, and a "//go:build ignore"
			// line (a generator's habit) does not exclude it.
			{v.goCmd, "build", "-overlay", overlay, "-o", filepath.Join(tmp, "out"), "./" + rel},
			{v.goCmd, "vet", "-overlay", overlay, "./" + rel},
		} {
			res, err := v.exec(ctx, Run{Args: args, Dir: v.root, Timeout: PackageTimeout})
			if err != nil {
				r.checks = append(r.checks, Check{Kind: "compile", Subject: subject, Elapsed: time.Since(start)})
				return fail(blk.Line, "", "go block: %v", err)
			}
			if res.ExitCode != 0 || res.TimedOut {
				r.checks = append(r.checks, Check{Kind: "compile", Subject: subject, Elapsed: time.Since(start)})
				line, msg, detail := mapSnippetErrors(d, blk, string(res.Output), snippet, virtual)
				v.logf("verify: compile %s: FAIL", subject)
				r = fail(line, detail, "go block does not %s: %s", map[string]string{"build": "compile", "vet": "pass go vet"}[args[1]], msg)
				v.noteFailure(r.errs[len(r.errs)-1], subject+": go block", string(res.Output))
				return r
			}
		}
		r.checks = append(r.checks, Check{Kind: "compile", Subject: subject, Elapsed: time.Since(start)})
		v.logf("verify: compile %s: ok (%v)", subject, time.Since(start).Round(time.Millisecond))
		if err := v.cache.store(&entry{Kind: "compile", Subject: subject, Key: key, Manifest: m}); err != nil {
			v.logf("verify: cache: %v", err)
		}
		return r
	}
}

// mapSnippetErrors rewrites positions in the snippet (named by its real or
// virtual path) to the block's origins. It returns the Markdown line of the
// first error, its message, and the rewritten output.
func mapSnippetErrors(d *expand.Doc, blk markdown.Block, out string, names ...string) (int, string, string) {
	line, msg := blk.Line, ""
	var quoted []string
	for _, n := range names {
		quoted = append(quoted, regexp.QuoteMeta(n), regexp.QuoteMeta(filepath.Base(n)))
	}
	re := regexp.MustCompile(`(?:\S*/)?(?:` + strings.Join(quoted, "|") + `):(\d+)(?::(\d+))?:?`)
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if strings.HasPrefix(l, "# ") {
			continue // "# github.com/.../book": the virtual package's name
		}
		l = re.ReplaceAllStringFunc(l, func(m string) string {
			sm := re.FindStringSubmatch(m)
			n, _ := strconv.Atoi(sm[1])
			if n < 1 || n > len(blk.LineNos) {
				return m
			}
			if msg == "" {
				line = blk.LineNos[n-1]
			}
			return at(d, blk.LineNos[n-1]) + ":"
		})
		if msg == "" && strings.TrimSpace(l) != "" {
			msg = strings.TrimSpace(l)
			if i := strings.Index(msg, ": "); i >= 0 && strings.Contains(msg[:i], ".md:") {
				msg = msg[i+2:]
			}
		}
		lines = append(lines, l)
	}
	if msg == "" {
		msg = "go printed no message"
	}
	return line, msg, clipOutput(strings.Join(lines, "\n"))
}

// localImports returns the import paths of src that belong to the main
// module.
func (v *verifier) localImports(src string) []string {
	mod := modulePath(v.root)
	if mod == "" {
		return nil
	}
	f, err := parser.ParseFile(token.NewFileSet(), "snippet.go", src, parser.ImportsOnly)
	if err != nil {
		return nil
	}
	var out []string
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err == nil && (p == mod || strings.HasPrefix(p, mod+"/")) {
			out = append(out, p)
		}
	}
	return out
}

// modulePath reads the module line of root/go.mod.
func modulePath(root string) string {
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "module"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}
