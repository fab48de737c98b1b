package verify

// Claims that name their checks.
//
// A chapter backs a claim with a Markdown link to the Go test that checks
// it: the target is a _test.go file under examples/ (relative to the
// chapter, like any link) and the fragment is the function's name,
//
//	[TestAtMostOneUsing](../examples/raymond/raymond_test.go#TestAtMostOneUsing)
//
// The function must be a test (func TestXxx(*testing.T)), a fuzz target
// (func FuzzXxx(*testing.F), whose seed corpus go test runs as a test) or
// an example with an output comment (func ExampleXxx(), which go test runs
// and compares). verify resolves each such link with go/parser and fails
// at the link's file:line when the file or function does not exist or is
// not one go test runs. Its outcome comes from the package's own test
// check, which runs "go test -json ./examples/x" (without -run, go test
// runs every test with its subtests, every fuzz target's seed corpus and
// every example with output) and keeps each top-level function's final
// action, in its cache entry too: a claim fails at its link when the
// function failed, was skipped (a skipped test checks nothing), passed
// without running a check (every subtest skipped; a fuzz target without a
// seed corpus) or did not run, and costs no go process of its own. Report.Claims lists every claim
// in reading order; render marks each link as passing and builds the
// book's table of checks from the list.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/build"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/expand"
	"github.com/ownership-book/ownership/internal/markdown"
)

// Claim is one link in a chapter naming the check of a claim.
type Claim struct {
	// File and Line tell where the link is written (repository-relative;
	// an included Markdown file's own line).
	File string
	Line int
	// Chapter is the book-relative path of the chapter holding the link
	// ("ownership.md") and ChapterTitle its title in SUMMARY.md.
	Chapter      string
	ChapterTitle string
	// ID is the id the rendered link gets on its page: "check-" and the
	// function's name, with "-2", "-3" ... for later links to the same
	// function on the same page (see markdown.ClaimID).
	ID string
	// Text is the claim: the link's title when it has one
	// ([T](x_test.go#T "the claim")), else the sentence around the link
	// (for a link in a table, the text of the row's first cell).
	Text string
	// Target is the repository-relative test file
	// ("examples/ownership/fence_test.go"); Func the function's name.
	Target string
	Func   string
	// Kind is "test", "fuzz" or "example".
	Kind string
	// Package is the package directory as go test names it
	// ("./examples/ownership").
	Package string
	// StartLine and EndLine are the function's lines in Target, its doc
	// comment excluded.
	StartLine, EndLine int
	// Passed is set when the function passed in this verification (run
	// now or answered by the cache).
	Passed bool
	// Mutants are the mutants the claim names after its link (see
	// mutants.go), in the order written.
	Mutants []Mutant
}

// Command returns the go test command that checks c alone, as a reader
// would type it: go test -run '^TestX$' ./examples/x.
func (c Claim) Command() string {
	return fmt.Sprintf("go test -run '^%s$' %s", c.Func, c.Package)
}

// FindClaims returns the claim links of d in document order, resolved
// against the Go files they name (the root is the repository root), and
// an error at the link's line for each that does not name a test,
// fuzz target or example with output that go test runs.
func FindClaims(root string, d *expand.Doc) ([]Claim, diag.List) {
	return findClaimsIn(nil, root, d)
}

// findClaimsIn is FindClaims with the claim links parsed through c.
func findClaimsIn(c *MarkdownCache, root string, d *expand.Doc) ([]Claim, diag.List) {
	links := c.claimLinks(d.Chapter.File(), d.Markdown)
	var out []Claim
	var errs diag.List
	count := map[string]int{}
	files := map[string]*testFile{}
	for _, l := range links {
		o := d.Origin(l.Line)
		fail := func(format string, args ...any) {
			errs = append(errs, diag.Errorf(o.File, o.Line, format, args...))
		}
		if l.Orphan != nil {
			fail("mutant %q follows no claim in its paragraph or table row; write it after the link to the check that must kill it", l.Dest)
			continue
		}
		if l.InHeading {
			fail("claim %q is in a heading; name the check in the section's text, where the claim is made", l.Dest)
			continue
		}
		file, fn := l.File, l.Func
		count[fn]++
		c := Claim{
			File: o.File, Line: o.Line,
			Chapter: d.Chapter.Path, ChapterTitle: d.Chapter.Title,
			ID: markdown.ClaimID(fn, count[fn]), Target: file, Func: fn,
			Package: "./" + path.Dir(file),
			Text:    l.Text,
		}
		tf, ok := files[file]
		if !ok {
			tf = parseTestFile(root, file)
			files[file] = tf
		}
		if tf.err != "" {
			fail("claim %q names %s: %s", l.Dest, file, tf.err)
			continue
		}
		f, ok := tf.funcs[fn]
		if !ok {
			fail("claim %q: %s has no function %s%s", l.Dest, file, fn, suggest(fn, tf.names))
			continue
		}
		if f.problem != "" {
			fail("claim %q: %s in %s %s", l.Dest, fn, file, f.problem)
			continue
		}
		c.Kind, c.StartLine, c.EndLine = f.kind, f.start, f.end
		var merrs diag.List
		c.Mutants, merrs = resolveMutants(root, d, c, l.Mutants)
		errs = append(errs, merrs...)
		out = append(out, c)
	}
	return out, errs
}

// testFile is what a claim needs to know about one _test.go file.
type testFile struct {
	err   string // why the file cannot hold checks, "" when it can
	funcs map[string]testFunc
	names []string // its Test, Fuzz and Example functions, for suggestions
}

type testFunc struct {
	kind       string // "test", "fuzz", "example"
	start, end int
	problem    string // why go test does not run it, "" when it does
}

// testFiles remembers parsed test files by path and stamp (see stampMemo):
// a rebuild parses only the test files that changed.
var testFiles = newStampMemo[*testFile]()

// parseTestFile reads the repository file rel with go/parser, or returns
// what it read last time if the file is unchanged. The testFile is shared:
// the caller does not modify it.
func parseTestFile(root, rel string) *testFile {
	return testFiles.get(filepath.Join(root, filepath.FromSlash(rel)), func(string) (*testFile, bool) {
		return readTestFile(root, rel), true
	})
}

func readTestFile(root, rel string) *testFile {
	tf := &testFile{funcs: map[string]testFunc{}}
	abs := filepath.Join(root, filepath.FromSlash(rel))
	src, err := os.ReadFile(abs)
	if err != nil {
		if os.IsNotExist(err) {
			tf.err = "the file does not exist"
		} else {
			tf.err = err.Error()
		}
		return tf
	}
	for _, seg := range strings.Split(path.Dir(rel), "/") {
		if seg == "testdata" || strings.HasPrefix(seg, ".") || strings.HasPrefix(seg, "_") {
			tf.err = "go test ignores files under " + seg + "/"
			return tf
		}
	}
	if ok, err := build.Default.MatchFile(filepath.Dir(abs), filepath.Base(abs)); err == nil && !ok {
		tf.err = "its build constraints exclude it, so go test never runs it"
		return tf
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, abs, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		tf.err = "does not parse: " + err.Error()
		return tf
	}
	testing := ""
	for _, im := range f.Imports {
		if im.Path.Value == `"testing"` {
			testing = "testing"
			if im.Name != nil {
				testing = im.Name.Name
			}
		}
	}
	examples := map[string]*doc.Example{}
	for _, ex := range doc.Examples(f) {
		examples["Example"+ex.Name] = ex
	}
	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok || fd.Recv != nil {
			continue
		}
		name := fd.Name.Name
		tfn := testFunc{start: fset.Position(fd.Pos()).Line, end: fset.Position(fd.End()).Line}
		switch {
		case hasTestPrefix(name, "Test"):
			tfn.kind = "test"
			if !oneParam(fd, testing, "T") {
				tfn.problem = "is not a test: a test is func " + name + "(t *testing.T)"
			}
		case hasTestPrefix(name, "Fuzz"):
			tfn.kind = "fuzz"
			if !oneParam(fd, testing, "F") {
				tfn.problem = "is not a fuzz target: a fuzz target is func " + name + "(f *testing.F)"
			}
		case hasTestPrefix(name, "Example"):
			tfn.kind = "example"
			ex := examples[name]
			switch {
			case fd.Type.Params.NumFields() != 0 || fd.Type.Results.NumFields() != 0 || fd.Type.TypeParams.NumFields() != 0:
				tfn.problem = "is not an example: an example is func " + name + "() with no parameters or results"
			case ex == nil || (ex.Output == "" && !ex.EmptyOutput):
				tfn.problem = "has no // Output: comment, so go test compiles it but never runs it"
			case strings.TrimSpace(ex.Output) == "":
				tfn.problem = "has an empty // Output: comment, so it shows nothing and checks only that nothing is printed; a claim's example has output"
			}
		default:
			tfn.problem = "is not a check: a claim names a Test, Fuzz or Example function"
			tf.funcs[name] = tfn
			continue
		}
		if fd.Type.TypeParams.NumFields() != 0 && tfn.problem == "" {
			tfn.problem = "has type parameters, so go test does not run it"
		}
		tf.funcs[name] = tfn
		tf.names = append(tf.names, name)
	}
	return tf
}

// hasTestPrefix is go test's rule for a test name: the prefix, then
// nothing or a character that is not a lower-case letter.
func hasTestPrefix(name, prefix string) bool {
	if !strings.HasPrefix(name, prefix) {
		return false
	}
	if len(name) == len(prefix) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(name[len(prefix):])
	return !unicode.IsLower(r)
}

// oneParam reports whether fd is func(x *testing.<typ>) with no results.
func oneParam(fd *ast.FuncDecl, testing, typ string) bool {
	if testing == "" || fd.Type.Results.NumFields() != 0 || fd.Type.Params.NumFields() != 1 {
		return false
	}
	star, ok := fd.Type.Params.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == testing && sel.Sel.Name == typ
}

// suggest names the file's checks closest to fn, for an error message.
func suggest(fn string, names []string) string {
	if len(names) == 0 {
		return " (it has no Test, Fuzz or Example functions)"
	}
	best, bestD := "", 1<<30
	for _, n := range names {
		if d := editDistance(strings.ToLower(fn), strings.ToLower(n)); d < bestD {
			best, bestD = n, d
		}
	}
	if bestD <= len(fn)/3+1 {
		return "; did you mean " + best + "?"
	}
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	if len(sorted) > 8 {
		sorted = append(sorted[:8], "...")
	}
	return " (its checks: " + strings.Join(sorted, ", ") + ")"
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// findClaims finds the claims of docs, in reading order, and the errors of
// the links that name no check go test runs.
func (v *verifier) findClaims(docs []*expand.Doc) ([]Claim, diag.List) {
	var all []Claim
	var errs diag.List
	for _, d := range docs {
		c, e := findClaimsIn(v.md, v.root, d)
		all = append(all, c...)
		errs = append(errs, e...)
	}
	return all, errs
}

// pkgTests is what a package's go test -json run (or its cache entry)
// says about each top-level function.
type pkgTests struct {
	pkg     string
	status  map[string]string // "pass", "fail", "skip"; nil when nothing ran
	outputs map[string]string // a function's output with its subtests'
}

// settleClaims sets Passed on each claim whose function passed in its
// package's go test run, and returns an error at the link of every other:
// the function failed, was skipped, or did not run (the package failed to
// build, or timed out). The package's full run decides, so a claim costs no
// run of its own: go test without -run runs every test, fuzz target (its
// seed corpus) and example with output, and FindClaims has made sure the
// named function is one of those.
func settleClaims(claims []Claim, results []jobResult) diag.List {
	byPkg := map[string]*pkgTests{}
	for _, r := range results {
		if r.tests != nil {
			byPkg[r.tests.pkg] = r.tests
		}
	}
	var errs diag.List
	for i := range claims {
		c := &claims[i]
		fail := func(detail, format string, a ...any) {
			e := diag.Errorf(c.File, c.Line, format, a...)
			e.Detail = detail
			errs = append(errs, e)
		}
		t := byPkg[c.Package]
		if t == nil {
			fail("", "claim %s: go test %s was not run", c.Func, c.Package)
			continue
		}
		switch t.status[c.Func] {
		case "pass":
			c.Passed = true
		case "fail":
			fail(clipOutput(t.outputs[c.Func]), "claim %s failed in go test %s (alone: %s)", c.Func, c.Package, c.Command())
		case "skip":
			fail(clipOutput(t.outputs[c.Func]), "claim %s was skipped in go test %s; a skipped test checks nothing", c.Func, c.Package)
		case "empty":
			if c.Kind == "fuzz" {
				fail(clipOutput(t.outputs[c.Func]), "claim %s ran no input in go test %s: its seed corpus is empty (no f.Add, no file under testdata/fuzz/%s), and a fuzz target without seeds checks nothing", c.Func, c.Package, c.Func)
			} else {
				fail(clipOutput(t.outputs[c.Func]), "claim %s checked nothing in go test %s: every one of its subtests was skipped", c.Func, c.Package)
			}
		default:
			fail("", "claim %s did not run: go test %s failed before it (see that error)", c.Func, c.Package)
		}
	}
	return errs
}

// testEvent is one line of go test -json (cmd/test2json).
type testEvent struct {
	Action string
	Test   string
	Output string
}

// readTestEvents reads go test -json output. It returns the final action
// of each top-level function ("pass", "fail", "skip", or "empty" for one
// that passed without running a check: every subtest skipped, or a fuzz
// target with no seed corpus), the output of each
// with its subtests', and the text go test would have printed without
// -json: the output of the functions that failed and of the package (build
// errors, panics outside a test, the final FAIL line), with lines that are
// not JSON kept where they were.
func readTestEvents(out []byte) (status, outputs map[string]string, text []byte) {
	status, outputs = map[string]string{}, map[string]string{}
	type piece struct{ top, text string }
	var pieces []piece
	parent := map[string]bool{}  // tests that have subtests
	final := map[string]string{} // every test's and subtest's final action
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), MaxOutput+1)
	for sc.Scan() {
		line := sc.Bytes()
		var ev testEvent
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			pieces = append(pieces, piece{text: string(line) + "\n"})
			continue
		}
		top, _, _ := strings.Cut(ev.Test, "/")
		if i := strings.LastIndexByte(ev.Test, '/'); i >= 0 {
			parent[ev.Test[:i]] = true
		}
		if ev.Test != "" && (ev.Action == "pass" || ev.Action == "fail" || ev.Action == "skip") {
			final[ev.Test] = ev.Action
		}
		if ev.Output != "" {
			pieces = append(pieces, piece{top: top, text: ev.Output})
			if top != "" {
				outputs[top] += ev.Output
			}
		}
		if top != "" && ev.Test == top {
			switch ev.Action {
			case "pass", "fail", "skip":
				status[top] = ev.Action
			}
		}
	}
	// A function that passed ran a check only if some test of its tree
	// without subtests passed: a test whose every subtest skipped passes
	// without checking anything, and so does a fuzz target without seeds
	// (it has no subtest at all).
	ran := map[string]bool{}
	for name, act := range final {
		top, _, sub := strings.Cut(name, "/")
		if act == "pass" && !parent[name] && (sub || !hasTestPrefix(top, "Fuzz")) {
			ran[top] = true
		}
	}
	for top, act := range status {
		if act == "pass" && !ran[top] {
			status[top] = "empty"
		}
	}
	var b strings.Builder
	for _, p := range pieces {
		if p.top == "" || status[p.top] == "fail" || status[p.top] == "" {
			b.WriteString(p.text)
		}
	}
	return status, outputs, []byte(b.String())
}
