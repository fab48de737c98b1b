package verify

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/ownership-book/ownership/internal/diag"
)

// A compile error in one package fails every check that builds it: the
// package's vet and test, those of every package that imports it, the
// transcripts that run them and the go blocks that import them. Reported
// one by one, the first of them is often a transcript diff suggesting
// --bless, which would write the compiler's message into the chapter.
// groupBuildErrors reports each such error once, first, at the line go
// names, and lists the checks it broke in the detail instead of reporting
// them.

// failedRun is the go output behind a failed check, kept to recognise
// failures that come from one build error.
type failedRun struct {
	what   string // "go vet ./examples/x", "book/ch.md:6: $ go run ./examples/x", "book/ch.md:13: go block"
	output string
}

// buildError is one "file.go:line:col: message" go printed under a
// "# package" header, for a file of the repository.
type buildError struct {
	file      string // repository-relative
	line      int
	col       string
	msg       string
	vetReport bool // a go vet finding, not a compile error
}

func (b buildError) key() string { return fmt.Sprintf("%s:%d:%s: %s", b.file, b.line, b.col, b.msg) }

// buildLineRE matches an error line of go build, go vet or go test's build
// step: "examples/x/a.go:12:5: undefined: y", "vet: examples/x/a.go:...".
var buildLineRE = regexp.MustCompile(`^(vet: )?(\S+\.go):(\d+):(\d+): (.*)$`)

// buildErrors returns the errors of out that go printed under a "# pkg"
// header (its way of starting a package's build or vet output) about files
// of the repository, in order. Test failures ("    a_test.go:12: ...",
// indented and without a column) are not build errors.
func (v *verifier) buildErrors(out string) []buildError {
	var errs []buildError
	inHeader, vetSection := false, false
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "# ") {
			inHeader, vetSection = true, strings.HasPrefix(l, "# [")
			continue
		}
		if !inHeader {
			continue
		}
		m := buildLineRE.FindStringSubmatch(strings.TrimRight(l, "\r"))
		if m == nil {
			continue
		}
		file, ok := v.repoFile(m[2])
		if !ok {
			continue
		}
		var line int
		fmt.Sscan(m[3], &line)
		errs = append(errs, buildError{file: file, line: line, col: m[4], msg: m[5], vetReport: vetSection && m[1] == ""})
	}
	return errs
}

// repoFile resolves a file name go printed (relative to the repository
// root, "./"-prefixed or absolute) to a repository-relative path of an
// existing regular file.
func (v *verifier) repoFile(name string) (string, bool) {
	p := name
	if filepath.IsAbs(p) {
		rel, err := filepath.Rel(v.root, p)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "", false
		}
		p = rel
	}
	p = path.Clean(filepath.ToSlash(p))
	if p == "." || strings.HasPrefix(p, "../") {
		return "", false
	}
	if fi, err := os.Stat(filepath.Join(v.root, filepath.FromSlash(p))); err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	return p, true
}

// noteFailure records the go output behind e.
func (v *verifier) noteFailure(e *diag.Error, what, output string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.failed == nil {
		v.failed = map[*diag.Error]failedRun{}
	}
	v.failed[e] = failedRun{what: what, output: output}
}

// noteClaimFailures ties the error of a claim that did not run because its
// package's go test failed to that failure's output, so that a claim
// broken by a compile error is grouped with it (errs: settleClaims's).
func (v *verifier) noteClaimFailures(claims []Claim, errs diag.List) {
	v.mu.Lock()
	byWhat := map[string]failedRun{}
	for _, f := range v.failed {
		byWhat[f.what] = f
	}
	v.mu.Unlock()
	at := map[string]Claim{}
	for _, c := range claims {
		if !c.Passed {
			at[fmt.Sprintf("%s:%d", c.File, c.Line)] = c
		}
	}
	for _, e := range errs {
		c, ok := at[fmt.Sprintf("%s:%d", e.File, e.Line)]
		if !ok || !strings.Contains(e.Msg, "did not run") {
			continue
		}
		if f, ok := byWhat["go test "+c.Package]; ok {
			v.noteFailure(e, fmt.Sprintf("%s:%d: claim %s", c.File, c.Line, c.Func), f.output)
		}
	}
}

// groupBuildErrors replaces the errors that follow from one build error
// (the first build error their output names) with a single report at that
// error's line. The build errors come first, in the order of their
// positions; the other errors follow, sorted by file and line.
func (v *verifier) groupBuildErrors(errs diag.List) diag.List {
	type group struct {
		first    buildError
		lines    []string
		seenLine map[string]bool
		broke    []string
		compile  bool
	}
	groups := map[string]*group{}
	var rest diag.List
	for _, e := range errs {
		f, ok := v.failed[e]
		var be []buildError
		if ok {
			be = v.buildErrors(f.output)
		}
		if len(be) == 0 {
			rest = append(rest, e)
			continue
		}
		k := be[0].key()
		g := groups[k]
		if g == nil {
			g = &group{first: be[0], seenLine: map[string]bool{}}
			groups[k] = g
		}
		for _, b := range be {
			if !b.vetReport {
				g.compile = true
			}
			if l := b.key(); !g.seenLine[l] {
				g.seenLine[l] = true
				g.lines = append(g.lines, l)
			}
		}
		g.broke = append(g.broke, f.what)
	}
	var out diag.List
	for _, g := range groups {
		kind := "go vet reports"
		if g.compile {
			kind = "does not compile"
		}
		detail := strings.Join(g.lines, "\n") + "\n\nChecks that fail because of it (not reported again):\n  " + strings.Join(g.broke, "\n  ")
		out = append(out, &diag.Error{File: g.first.file, Line: g.first.line, Msg: kind + ": " + g.first.msg, Detail: detail})
	}
	sortErrors(out)
	sortErrors(rest)
	return append(out, rest...)
}
