// Package verify checks that what a book shows is true: every Go package under
// examples/ passes go vet and go test, every console transcript's commands
// print what the chapter says they print, and every go block compiles or
// parses. Results are cached under a key of everything that can change them.
//
// The checks (DESIGN.md, "The chapter format"):
//
//   - vet, test: "go vet ./examples/x" and "go test ./examples/x" for every
//     package directory under examples/ (directories holding .go files; not
//     testdata, not names starting with "." or "_"), each bounded by
//     PackageTimeout. Go's own test cache is left on.
//   - transcript: each "$ go run ..." or "$ go test ..." line of a ```console
//     block is run from the repository root, without a shell (see
//     markdown.SplitCommand), and its combined stdout and stderr compared with the
//     lines after it (see markdown.Compare and markdown.ExitAccepted). Any other command is an
//     error. The timeout of one command is the block's timeout= attribute,
//     else Options.Timeout, else the book's [bookgen] timeout, else 60s; on
//     expiry the command's whole process group is killed.
//   - compile: a ```go block whose first line that is neither blank nor a
//     comment starts with "package" is built and vetted as a file of the
//     module (placed virtually, with go build -overlay, in the book/
//     directory, so it can import the module's packages; nothing is written
//     into the repository). The file is named on the command line, so it
//     builds alone and its build constraints do not exclude it, as with
//     "go run file.go".
//   - parse: any other ```go block must parse as a Go file, as top-level
//     declarations, or as statements in a function body. This runs in
//     process.
//   - wasm: each package a transcript runs with "$ go run ./examples/..."
//     is built for the browser (GOOS=js GOARCH=wasm), or marked not
//     runnable there with the reason (its import graph reaches package
//     net, or the build fails at file:line); see wasm.go and
//     Report.Programs. Neither outcome is a failure.
//
// A block whose info string has the "ignore" attribute is skipped and counted
// in Report.Ignored.
//
// Every failure is reported as a *diag.Error at the file and line it is
// about: a transcript mismatch at the first expected line that differs
// (mapped through expand.Doc.Origins, so a transcript included from another
// file is reported there), with a -expected +actual diff in Detail; a
// compile error at the snippet's line; a vet or test failure at the first
// file:line the go command printed.
//
// With Options.Bless, a transcript command whose output differs has its
// expected lines replaced by the real output in the file they come from
// (written atomically), unless it timed out, failed to start, printed more
// than MaxOutput bytes, or exited with a status its new output would not
// accept.
package verify

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ownership-book/ownership/internal/bless"
	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/expand"
	"github.com/ownership-book/ownership/internal/markdown"
)

// DefaultTimeout is the timeout of one transcript command when neither the
// block, the Options nor book.toml set one.
const DefaultTimeout = 60 * time.Second

// PackageTimeout bounds one "go vet" or "go test" of an examples package.
const PackageTimeout = 10 * time.Minute

// testBinaryTimeout is the -timeout every "go test" of an examples package
// (and of a mutant) is given: shorter than PackageTimeout by what compiling
// the package may take, so that a test that hangs is ended by the test
// binary itself, which then prints the name of every running test and
// every goroutine's stack; killed at PackageTimeout instead, a hang says
// only which package it was in. A variable so that the test of this rule
// can shorten it.
var testBinaryTimeout = PackageTimeout - 3*time.Minute

// listTimeout bounds "go list" and "go version".
const listTimeout = 2 * time.Minute

// Workers is how many checks run at once.
const Workers = 2

// Options tune a verification.
type Options struct {
	// Bless rewrites the expected output of every transcript from a real run
	// instead of failing on a difference.
	Bless bool
	// CacheDir holds cached results; "" means Root/.bookgen-cache.
	CacheDir string
	// Timeout is the default timeout of one command; 0 means the book's
	// configured timeout, or 60s. A block's timeout= attribute wins over it.
	Timeout time.Duration
	// Log receives one line per check run (nil: silent).
	Log io.Writer
	// GoCmd is the go command to run; "" means "go" found in $PATH.
	GoCmd string
	// Progress, when set, is called when a check starts and when it ends
	// (cached ones included), from one goroutine at a time: how many of
	// the checks that start a go process are done, of how many, and which
	// run now. bookgen prints it on the terminal and serve's "building"
	// page shows it.
	Progress func(Progress)
	// Fragments, when set, remembers the Go fragments that parsed, so
	// that the next verification (bookgen serve) does not parse them
	// again (see FragmentCache).
	Fragments *FragmentCache
	// Markdown, when set, remembers each chapter's fenced blocks and claim
	// links for the next verification (see MarkdownCache); nil parses
	// them for this one only.
	Markdown *MarkdownCache

	// exec runs processes; nil means execProcess. Tests count calls.
	exec execFunc
}

// Progress is the state of a verification as Options.Progress sees it.
type Progress struct {
	Done, Total int
	// Running names the checks running now, the longest running first:
	// "go test ./examples/stream", "book/ch.md:12: $ go run ./examples/x",
	// "book/ch.md:30: go block".
	Running []string
	// Since is when each of Running started (same order).
	Since []time.Time
}

// Check is one verification that was run or found in the cache.
type Check struct {
	Kind    string // "vet", "test", "transcript", "compile", "parse", "wasm", "mutant"
	Subject string // package path, or "book/ch.md:12"
	Cached  bool
	Elapsed time.Duration
}

// Report is what a verification did.
type Report struct {
	Checks  []Check
	Ran     int // checks executed now (parse checks run in process)
	Cached  int // checks answered by the cache
	Ignored int // go and console blocks marked "ignore"
	// Blocks holds the verdict on every fenced code block of every
	// chapter, in reading order (see BlockVerdict): what render may show.
	Blocks []BlockVerdict
	// Edits are, with Options.Bless, the transcripts whose output differs
	// from what the chapter shows, each as the edit that makes the chapter
	// show it, in reading order. Verify writes none: bless.Apply does.
	Edits []bless.Edit
	// Blessed is set by whoever applies Edits (the build): each rewritten
	// transcript, as "book/ch.md:12: go run ./examples/x (1 lines -> 4
	// lines)".
	Blessed []string
	// Claims lists every link naming a claim's check, in reading order,
	// with whether its check passed (see claims.go).
	Claims []Claim
	// Programs lists every program a transcript runs with "$ go run
	// ./examples/...", in reading order, as built for the browser (see
	// wasm.go): runnable with its binary, or not with the reason.
	Programs []Program
}

// Verify checks the book. A failure is returned as a diag.List naming file
// and line of every failed check; the Report is returned in both cases.
// docs are the expanded chapters (expand.All). Independent checks run
// Workers at a time; all of them run even when some fail.
func Verify(ctx context.Context, b *book.Book, docs []*expand.Doc, opt Options) (*Report, error) {
	v := &verifier{
		b:      b,
		root:   b.Root,
		opt:    opt,
		goCmd:  opt.GoCmd,
		exec:   opt.exec,
		listed: map[string]*listCall{},
		md:     opt.Markdown,
	}
	if v.md == nil {
		v.md = &MarkdownCache{oneVerify: true}
	}
	if v.goCmd == "" {
		v.goCmd = "go"
	}
	v.module = findModule(b.Root)
	if v.exec == nil {
		v.exec = execProcess
	}
	cacheDir := opt.CacheDir
	if cacheDir == "" {
		cacheDir = filepath.Join(b.Root, ".bookgen-cache")
	}
	v.cache = newCache(b.Root, filepath.Join(cacheDir, "verify"))
	v.timeout = DefaultTimeout
	if d, err := time.ParseDuration(b.Config.Timeout); err == nil && d > 0 {
		v.timeout = d
	}
	if opt.Timeout > 0 {
		v.timeout = opt.Timeout
	}

	rep := &Report{}
	var errs diag.List
	var jobs []job
	var names []string
	add := func(name string, j job) {
		jobs = append(jobs, j)
		names = append(names, name)
	}
	pkgs, err := examplePackages(b.Root)
	if err != nil {
		errs = append(errs, diag.Errorf("examples", 0, "%v", err))
	}
	if len(pkgs) > 0 && v.module == "" {
		errs = append(errs, diag.Errorf("examples", 0, "holds Go packages (%s), which go vet and go test check in a Go module, but there is no go.mod in %s or above; add one (go mod init)", pkgs[0], b.Root))
		pkgs = nil
	}
	for _, p := range pkgs {
		add("go vet "+p, v.packageJob("vet", p))
		add("go test "+p, v.packageJob("test", p))
	}
	prefetch(v.md, docs)
	for _, d := range docs {
		blks := v.md.findBlocks(d.Markdown)
		for i, blk := range blks {
			verdict := func(v Verdict, check string) {
				rep.Blocks = append(rep.Blocks, verdictOf(d.Chapter.Path, i, blk, v, check))
			}
			if blk.Lang == "console" && !v.decidesConsole(blk) {
				// Not a transcript (an mdBook book's "$ cargo run", a
				// shell session): shown as it is, attributes and all.
				verdict(Shown, "")
				continue
			}
			if err := checkAttrs(d, blk); err != nil {
				errs = append(errs, err)
				continue
			}
			switch blk.Lang {
			case "console":
				if _, ok := blk.Attrs["ignore"]; ok {
					rep.Ignored++
					verdict(Ignored, "")
					continue
				}
				j, first, err := v.transcriptJob(d, blk)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				verdict(Checked, "transcript")
				add(first, j)
			case "d2":
				if !isFigureRun(blk) {
					verdict(Shown, "")
					continue
				}
				j, err := v.figureJob(d, blk)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				verdict(Checked, "figure")
				add("figure "+blk.Attrs["run"], j)
			case "go":
				if _, ok := blk.Attrs["ignore"]; ok {
					rep.Ignored++
					verdict(Ignored, "")
					continue
				}
				if isWholeFile(blk.Lines) {
					if err := v.needModule(d, blk.Line, "a go block that is a whole file (\"package ...\") is compiled"); err != nil {
						errs = append(errs, err)
						continue
					}
					verdict(Checked, "compile")
					add(at(d, blk.Line)+": go block", v.compileJob(d, blk))
					continue
				}
				start := time.Now()
				err, cached := opt.Fragments.check(d, &blks[i])
				if err != nil {
					errs = append(errs, err)
					continue
				}
				verdict(Checked, "parse")
				rep.Checks = append(rep.Checks, Check{Kind: "parse", Subject: at(d, blk.Line), Cached: cached, Elapsed: time.Since(start)})
				if cached {
					rep.Cached++
				} else {
					rep.Ran++
				}
			default:
				verdict(Shown, "")
			}
		}
	}

	if v.module != "" {
		pkgs, runs := programRuns(v.md, docs)
		for _, p := range pkgs {
			add("wasm "+p, v.wasmJob(p, runs[p]))
		}
	}

	claims, claimErrs := v.findClaims(docs)
	errs = append(errs, claimErrs...)
	for _, r := range mutantRuns(claims) {
		add("mutant "+r.m.Dir+": go test -run "+r.fn+" "+r.pkg, v.mutantJob(r))
	}

	results := v.runAll(ctx, jobs, names)
	settled := settleClaims(claims, results)
	v.noteClaimFailures(claims, settled)
	settled = append(settled, settleMutants(claims, results)...)
	rep.Claims = claims
	for _, r := range results {
		for _, c := range r.checks {
			rep.Checks = append(rep.Checks, c)
			if c.Cached {
				rep.Cached++
			} else {
				rep.Ran++
			}
		}
		errs = append(errs, r.errs...)
		rep.Edits = append(rep.Edits, r.edits...)
		if r.program != nil {
			rep.Programs = append(rep.Programs, *r.program)
		}
	}
	errs = append(errs, settled...)
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	return rep, v.groupBuildErrors(errs).Err()
}

// decidesConsole reports whether the console block blk is verify's to
// decide: marked "ignore", opted in with markdown.TranscriptAttr, any
// console block of a book that sets [bookgen] strict-console, and
// otherwise a transcript as markdown.IsTranscript reads one ("$ go run" or
// "$ go test" lines) in a book with a go.mod, which its commands need.
// Every other console block is shown as written, not run: bookgen can
// verify go commands only.
func (v *verifier) decidesConsole(blk markdown.Block) bool {
	if _, ok := blk.Attrs["ignore"]; ok {
		return true
	}
	if _, ok := blk.Attrs[markdown.TranscriptAttr]; ok || v.b.Config.StrictConsole {
		return true
	}
	return v.module != "" && markdown.IsTranscript(blk.Lines)
}

// knownAttrs are the info-string attributes of go and console blocks that
// bookgen acts on (see markdown.ParseInfo).
var knownAttrs = map[string]bool{"ignore": true, "timeout": true, "hl_lines": true, "linenos": true, markdown.TranscriptAttr: true}

// checkAttrs refuses an attribute of a go or console block that bookgen
// does not know: a misspelt "ignore" or "timeout" would otherwise be
// dropped without a word. Blocks in other languages are not checked.
func checkAttrs(d *expand.Doc, blk markdown.Block) *diag.Error {
	if _, ok := figureAttrs[blk.Lang]; ok {
		return checkFigureAttrs(d, blk)
	}
	if blk.Lang != "go" && blk.Lang != "console" {
		return nil
	}
	var unknown []string
	for k := range blk.Attrs {
		if !knownAttrs[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return errAt(d, blk.Line, "```%s block: unknown attribute %s (bookgen knows ignore, timeout=, hl_lines=, linenos, transcript)", blk.Lang, strings.Join(unknown, ", "))
}

// findModule returns the path of the go.mod of the folder dir or of the
// nearest folder above it, "" when there is none (an mdBook book without
// Go programs needs none).
func findModule(dir string) string {
	for {
		p := filepath.Join(dir, "go.mod")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// needModule returns nil when the book is in a Go module, else the error
// at line n of d that what (a check that runs the go command) needs one.
// Without go.mod no go process is started: it could only fail.
func (v *verifier) needModule(d *expand.Doc, n int, what string) *diag.Error {
	if v.module != "" {
		return nil
	}
	return errAt(d, n, "%s in a Go module, but there is no go.mod in %s or above; add one beside %s (go mod init), or mark the block \"ignore\"", what, v.root, v.b.ConfigFile)
}

// sortErrors orders errors by file and line, keeping the order of equal
// positions.
func sortErrors(l diag.List) {
	sort.SliceStable(l, func(i, j int) bool {
		if l[i].File != l[j].File {
			return l[i].File < l[j].File
		}
		return l[i].Line < l[j].Line
	})
}

type verifier struct {
	b       *book.Book
	root    string
	module  string // the go.mod that holds root, "" when none does (see needModule)
	opt     Options
	goCmd   string
	exec    execFunc
	cache   *cache
	timeout time.Duration
	md      *MarkdownCache // Options.Markdown, or one for this Verify

	verOnce sync.Once
	version string
	verErr  error

	engineOnce sync.Once // see jsEngine
	engine     jsEngine
	engineErr  error

	execOnce          sync.Once // see execWithMemFS
	execPath, execSum string
	execErr           error

	mu     sync.Mutex // guards listed, failed and logging
	listed map[string]*listCall
	failed map[*diag.Error]failedRun // see noteFailure
}

// job is one independent unit of work; it returns what it checked.
type job func(ctx context.Context) jobResult

type jobResult struct {
	checks  []Check
	errs    []*diag.Error
	edits   []bless.Edit
	tests   *pkgTests      // a package test's outcomes, for claims
	program *Program       // a wasm check's outcome
	mutant  *mutantOutcome // a mutant run's outcome (mutants.go)
}

// runAll runs jobs on Workers goroutines and returns their results in the
// jobs' order. names[i] names jobs[i] for Options.Progress.
func (v *verifier) runAll(ctx context.Context, jobs []job, names []string) []jobResult {
	results := make([]jobResult, len(jobs))
	pr := &progress{report: v.opt.Progress, total: len(jobs), started: map[int]time.Time{}, names: names}
	pr.send()
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				pr.start(i)
				results[i] = jobs[i](ctx)
				pr.end(i)
			}
		}()
	}
	for i := range jobs {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return results
}

// progress tracks the running checks for Options.Progress.
type progress struct {
	mu      sync.Mutex
	report  func(Progress)
	total   int
	done    int
	started map[int]time.Time // running job -> start
	names   []string
}

func (p *progress) start(i int) {
	if p.report == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.started[i] = time.Now()
	p.sendLocked()
}

func (p *progress) end(i int) {
	if p.report == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.started, i)
	p.done++
	p.sendLocked()
}

func (p *progress) send() {
	if p.report == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sendLocked()
}

func (p *progress) sendLocked() {
	running := make([]int, 0, len(p.started))
	for i := range p.started {
		running = append(running, i)
	}
	sort.Slice(running, func(a, b int) bool {
		ta, tb := p.started[running[a]], p.started[running[b]]
		if !ta.Equal(tb) {
			return ta.Before(tb)
		}
		return running[a] < running[b]
	})
	pr := Progress{Done: p.done, Total: p.total}
	for _, i := range running {
		pr.Running = append(pr.Running, p.names[i])
		pr.Since = append(pr.Since, p.started[i])
	}
	p.report(pr)
}

func (v *verifier) logf(format string, args ...any) {
	if v.opt.Log == nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	fmt.Fprintf(v.opt.Log, format+"\n", args...)
}

// staticKey is the part of a cache key that does not depend on files.
func (v *verifier) staticKey(ctx context.Context, kind string, parts ...string) (string, error) {
	ver, err := v.goVersion(ctx)
	if err != nil {
		return "", err
	}
	return kind + "\x00" + strings.Join(parts, "\x00") + "\x00" + ver + "\x00" + goEnvKey(), nil
}

// at formats the origin of Markdown line n of d as "file:line".
func at(d *expand.Doc, n int) string {
	o := d.Origin(n)
	return fmt.Sprintf("%s:%d", o.File, o.Line)
}

func errAt(d *expand.Doc, n int, format string, args ...any) *diag.Error {
	o := d.Origin(n)
	return diag.Errorf(o.File, o.Line, format, args...)
}

// examplePackages returns "./examples/..." directories holding .go files,
// sorted, skipping testdata, names starting with "." or "_", and nested
// modules (directories with their own go.mod), as "go list ./examples/..."
// does. It reads directories only: listing packages starts no go process.
func examplePackages(root string) ([]string, error) {
	base := filepath.Join(root, "examples")
	if _, err := os.Stat(base); os.IsNotExist(err) {
		return nil, nil
	}
	var pkgs []string
	seen := map[string]bool{}
	err := filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			n := d.Name()
			if p != base && (n == "testdata" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(d.Name(), ".go") {
			rel, _ := filepath.Rel(root, filepath.Dir(p))
			rel = "./" + filepath.ToSlash(rel)
			if !seen[rel] {
				seen[rel] = true
				pkgs = append(pkgs, rel)
			}
		}
		return nil
	})
	sort.Strings(pkgs)
	return pkgs, err
}
