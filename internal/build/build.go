// Package build runs bookgen's stages in order — load, expand, verify,
// render, write — for the command (cmd/bookgen), the live server
// (internal/serve) and the end-to-end tests (tests/), so that all three
// build a book the same way.
package build

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ownership-book/ownership/internal/bless"
	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/expand"
	"github.com/ownership-book/ownership/internal/render"
	"github.com/ownership-book/ownership/internal/site"
	"github.com/ownership-book/ownership/internal/verify"
)

// Options say what to build and where.
type Options struct {
	// Root is the repository root: the folder holding go.mod and
	// book/SUMMARY.md, or mdBook's book.toml (see FindRoot).
	Root string
	// Out is the output folder; a relative path is taken relative to Root.
	// "" means "site".
	Out string
	// Book is the folder of the book to build, relative to Root, when it
	// is not the repository's main book ("manual": see book.LoadDir and
	// [bookgen] also-build); "" is the main book, in either layout.
	Book string
	// Verify is passed to verify.Verify (Bless, CacheDir, Timeout, Log).
	Verify verify.Options
	// CheckExternal also requests every http and https link of the book
	// (site.CheckExternal) and fails the build on a broken one. Off by
	// default: a build should not depend on other sites.
	CheckExternal bool
	// Loads, when set, keeps the chapter files read between builds
	// (bookgen serve): a chapter file whose status did not change is not
	// read again (see book.Cache).
	Loads *book.Cache
	// Expands, when set, keeps expanded chapters between builds (bookgen
	// serve): a chapter whose text and included files did not change is
	// not expanded again (see expand.Cache).
	Expands *expand.Cache
	// Renders, when set, keeps rendered chapters between builds (bookgen
	// serve): a chapter whose expanded Markdown and links' targets did
	// not change is not rendered again.
	Renders *render.Cache
	// Incremental is passed to site.Write: the previous build of the same
	// output folder, so that this one writes only the files that changed
	// (bookgen serve).
	Incremental *site.Incremental
	// ServedAtRoot is passed to site.Write: the site is served at the
	// root of its address (bookgen serve), so 404.html refers to "/"
	// rather than to site-url's path.
	ServedAtRoot bool
}

// Result tells what a build did.
type Result struct {
	Book   *book.Book
	Report *verify.Report // nil when the build stopped before verification
	Pages  int            // chapter pages written
	Out    string         // absolute output folder
	Files  []string       // every file of the site, slash paths relative to Out, sorted
	// Rendered and Reused count the chapters rendered by this build and
	// those taken unchanged from Options.Renders.
	Rendered, Reused int
	Elapsed          time.Duration
	// Finish, when not nil, writes what an incremental build left for
	// after its pages (site.Result.Finish): call it before the next
	// build (see there for ctx).
	Finish func(ctx context.Context) error
	// Warnings are the problems that do not stop the build: book.toml's
	// keys bookgen does not read (book.Config.Warnings), then the rendered
	// chapters' (render.Page.Warnings: raw HTML the site's
	// Content-Security-Policy blocks), in reading order.
	Warnings []*diag.Error
}

// KeepWarm makes the builds that share opt keep, between one build and
// the next, everything a later build can reuse (bookgen serve): the
// chapter files read (book.Cache), the expanded chapters (expand.Cache),
// the parsed Go fragments (verify.FragmentCache) and chapters
// (verify.MarkdownCache), the rendered chapters
// (render.Cache) and the site's files (site.Incremental). A cache already
// set is kept. The build owns these: its caller says only that builds
// follow one another.
func (opt *Options) KeepWarm() {
	if opt.Loads == nil {
		opt.Loads = &book.Cache{}
	}
	if opt.Expands == nil {
		opt.Expands = &expand.Cache{}
	}
	if opt.Verify.Fragments == nil {
		opt.Verify.Fragments = &verify.FragmentCache{}
	}
	if opt.Verify.Markdown == nil {
		opt.Verify.Markdown = &verify.MarkdownCache{}
	}
	if opt.Renders == nil {
		opt.Renders = &render.Cache{}
	}
	if opt.Incremental == nil {
		opt.Incremental = &site.Incremental{}
	}
}

// Stylesheet returns the site path of the book's content-hashed stylesheet
// ("assets/book.3f2a9c1e.css"), "" when no site was written.
func (r *Result) Stylesheet() string {
	for _, f := range r.Files {
		if strings.HasPrefix(f, "assets/book.") && strings.HasSuffix(f, ".css") {
			return f
		}
	}
	return ""
}

// Summary is the one-line account of a build printed by bookgen:
// "4 pages, 12 checks run, 30 cached, 1.234s". "Checks run" counts the
// checks that started a go process (vet, test, transcripts, compiles);
// Go fragments parsed in process are counted apart ("25 parsed") when
// there are any. When chapters were reused from an earlier build (bookgen
// serve), the pages part says how many were rendered again:
// "5 pages (1 rendered), 0 checks run, 33 cached, 25 parsed, 85ms".
func (r *Result) Summary() string {
	ran, cached, parsed := 0, 0, 0
	if r.Report != nil {
		ran, cached = r.Report.Ran, r.Report.Cached
		for _, c := range r.Report.Checks {
			if c.Kind == "parse" && !c.Cached {
				parsed++
			}
		}
		ran -= parsed
	}
	pages := fmt.Sprintf("%d %s", r.Pages, plural(r.Pages, "page", "pages"))
	if r.Reused > 0 {
		pages += fmt.Sprintf(" (%d rendered)", r.Rendered)
	}
	s := fmt.Sprintf("%s, %d %s run, %d cached", pages, ran, plural(ran, "check", "checks"), cached)
	if parsed > 0 {
		s += fmt.Sprintf(", %d parsed", parsed)
	}
	return s + ", " + r.Elapsed.Round(time.Millisecond).String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// OutDir returns the absolute output folder of opt.
func (opt Options) OutDir() string {
	out := opt.Out
	if out == "" {
		out = "site"
	}
	if !filepath.IsAbs(out) {
		out = filepath.Join(opt.Root, out)
	}
	return filepath.Clean(out)
}

// Build loads, expands, verifies and renders the book at opt.Root and writes
// the site to opt.OutDir(). Problems in the book's sources are returned as
// *diag.Error or diag.List values (file:line); the output folder changes
// only when the whole build succeeds. The Result is returned in both cases,
// with what was done.
func Build(ctx context.Context, opt Options) (res *Result, err error) {
	start := time.Now()
	res = &Result{Out: opt.OutDir()}
	defer func() { res.Elapsed = time.Since(start) }()
	var docs []*expand.Doc
	defer func() {
		includedFrom(docs, diag.All(err))
		includedFrom(docs, res.Warnings)
	}()

	// Fail fast: an output folder that cannot be written (a read-only
	// parent, a file in the way, a folder among the sources) is reported
	// before any example is verified.
	if err := site.CheckOutput(opt.Root, res.Out); err != nil {
		return res, err
	}
	b, docs, nfDoc, rep, err := check(ctx, opt)
	res.Book, res.Report = b, rep
	if b != nil {
		res.Warnings = append(res.Warnings, b.Config.Warnings...)
		res.Warnings = append(res.Warnings, b.Warnings...)
	}
	for _, d := range docs {
		res.Warnings = append(res.Warnings, d.Warnings...)
	}
	if nfDoc != nil {
		res.Warnings = append(res.Warnings, nfDoc.Warnings...)
	}
	if err != nil {
		return res, err
	}
	// A one-shot build holds what the stages after it need, not the whole
	// book: a chapter's file text is done with once it is expanded (see
	// check), its expanded text once it is rendered, and the rendered
	// bodies wait in a file (render.Spool) for the site to be written.
	// Builds that follow one another (serve) keep all of it to reuse.
	oneShot := opt.oneShot()
	if err := stage(ctx, "render"); err != nil {
		return res, err
	}
	var claims []verify.Claim
	var programs []verify.Program
	var verdicts []verify.BlockVerdict
	if rep != nil {
		claims, programs, verdicts = rep.Claims, rep.Programs, rep.Blocks
	}
	var spool *render.Spool
	if oneShot {
		if spool, err = newSpool(opt, b); err != nil {
			return res, err
		}
		defer spool.Close()
	}
	pages, rendered, reused, err := renderAll(ctx, b, docs, opt.Renders, spool, claims, programs, verdicts, figureCache(ctx, opt, b))
	if err != nil {
		return res, err
	}
	res.Rendered, res.Reused = rendered, reused
	for _, pg := range pages {
		res.Warnings = append(res.Warnings, pg.Warnings...)
	}
	if opt.CheckExternal {
		if err := site.CheckExternal(ctx, pages, site.ExternalOptions{}); err != nil {
			return res, err
		}
	}
	if err := stage(ctx, "write"); err != nil {
		return res, err
	}
	notFound, err := renderNotFound(b, nfDoc, verdicts)
	if err != nil {
		return res, err
	}
	if notFound != nil {
		res.Warnings = append(res.Warnings, notFound.Warnings...)
	}
	w, err := site.WriteContext(ctx, b, pages, res.Out, site.Options{ServedAtRoot: opt.ServedAtRoot, Incremental: opt.Incremental, NotFound: notFound})
	if err != nil {
		return res, err
	}
	res.Warnings = append(res.Warnings, w.Warnings...)
	res.Pages = w.Pages
	res.Files = w.Files
	res.Finish = w.Finish
	return res, nil
}

// includedFrom adds "included from chapter:line" as the first line of the
// Detail of each problem at a line of an included file (a listing, an
// included Markdown file) that a chapter of docs includes, naming every
// chapter line that includes it (expand.IncludedFrom). Problems that already
// name their chain of includes (expand's own) are left alone.
func includedFrom(docs []*expand.Doc, errs []*diag.Error) {
	if len(docs) == 0 {
		return
	}
	chapters := map[string]bool{}
	for _, d := range docs {
		chapters[d.Chapter.File()] = true
	}
	for _, e := range errs {
		if e.File == "" || e.Line == 0 || chapters[e.File] || strings.Contains(e.Detail, "included from ") {
			continue
		}
		sites := expand.IncludedFrom(docs, e.File, e.Line)
		if len(sites) == 0 {
			continue
		}
		if len(sites) > 3 {
			sites = append(sites[:3], fmt.Sprintf("and %d more", len(sites)-3))
		}
		line := "included from " + strings.Join(sites, ", ")
		if e.Detail == "" {
			e.Detail = line
		} else {
			e.Detail = line + "\n" + e.Detail
		}
	}
}

// stageHook, when set (by tests), is called as each stage after
// verification starts, so that a test can interrupt the build there.
var stageHook func(stage string)

// stage returns ctx.Err() as the named stage starts: every stage honours
// Ctrl-C, so that an interrupted build leaves the output folder as it was.
func stage(ctx context.Context, name string) error {
	if stageHook != nil {
		stageHook(name)
	}
	return ctx.Err()
}

// Test loads, expands, verifies and renders the book at opt.Root (so a
// figure that does not draw or a broken link fails it as it fails Build),
// writing nothing but the caches (and, with opt.Verify.Bless, the chapters
// whose transcripts it rewrites).
func Test(ctx context.Context, opt Options) (*Result, error) {
	start := time.Now()
	res := &Result{}
	b, docs, nfDoc, rep, err := check(ctx, opt)
	defer func() { includedFrom(docs, diag.All(err)) }()
	res.Book, res.Report = b, rep
	if err == nil {
		// Render too, dropping the pages, so that a figure that does
		// not draw or a broken link fails test as it fails build.
		_, _, _, err = renderAll(ctx, b, docs, nil, nil, rep.Claims, rep.Programs, rep.Blocks, figureCache(ctx, opt, b))
	}
	if err == nil {
		_, err = renderNotFound(b, nfDoc, rep.Blocks)
	}
	res.Elapsed = time.Since(start)
	return res, err
}

// oneShot reports whether the build is one no later build follows
// (nothing is kept warm: see KeepWarm), so that it can let go of what
// its later stages do not need.
func (opt Options) oneShot() bool {
	return opt.Loads == nil && opt.Expands == nil && opt.Renders == nil && opt.Incremental == nil
}

// newSpool makes the file the build's rendered bodies are kept in, in the
// cache folder (.bookgen-cache, or CacheDir), which is on the book's disk
// where os.TempDir may be memory (tmpfs).
func newSpool(opt Options, b *book.Book) (*render.Spool, error) {
	dir := cacheDir(opt, b)
	if err := os.MkdirAll(dir, 0o755); err == nil {
		if sp, err := render.NewSpool(dir); err == nil {
			return sp, nil
		}
	}
	// A cache folder that cannot be written (a read-only checkout) leaves
	// the system's temporary folder.
	return render.NewSpool("")
}

// cacheDir is the folder the build keeps its caches in: CacheDir, or
// .bookgen-cache at the book's root.
func cacheDir(opt Options, b *book.Book) string {
	if opt.Verify.CacheDir != "" {
		return opt.Verify.CacheDir
	}
	return filepath.Join(b.Root, ".bookgen-cache")
}

// figureCache returns the cache of drawn figures, kept between builds
// beside verify's results: .bookgen-cache/figures/ (or CacheDir/figures/).
// A drawing is abandoned when ctx is done or when it takes longer than
// book.toml's [bookgen] figure-timeout, and a slow one is reported to
// opt.Verify.Progress as it runs.
func figureCache(ctx context.Context, opt Options, b *book.Book) *render.FigureCache {
	dir := cacheDir(opt, b)
	budget, _ := time.ParseDuration(b.Config.FigureTimeout)
	return &render.FigureCache{Dir: filepath.Join(dir, "figures"), Context: ctx, Budget: budget, Progress: opt.Verify.Progress}
}

// check runs the first three stages.
func check(ctx context.Context, opt Options) (*book.Book, []*expand.Doc, *expand.Doc, *verify.Report, error) {
	b, err := opt.Loads.LoadDir(opt.Root, opt.Book)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	// Fail fast: a book the site stage will refuse (no chapters, a chapter
	// named print.md) is refused before any example is verified.
	if err := site.CheckBook(b); err != nil {
		return b, nil, nil, nil, err
	}
	docs, nf, err := expandAll(ctx, opt, b)
	if err != nil {
		return b, nil, nil, nil, err
	}
	if opt.oneShot() {
		// Once expanded, a chapter's file text is not read again.
		for _, d := range docs {
			d.Chapter.Source = nil
		}
	}
	// mdBook's src/404.md is verified with the chapters: nothing reaches
	// a page that verification did not see.
	all := docs
	if nf != nil {
		all = append(docs[:len(docs):len(docs)], nf)
	}
	if err := checkBounds(all); err != nil {
		return b, docs, nf, nil, err
	}
	if err := checkBlocksAgree(b.Config.Markdown, all); err != nil {
		return b, docs, nf, nil, err
	}
	rep, err := verify.Verify(ctx, b, all, opt.Verify)
	if rep != nil && len(rep.Edits) > 0 && ctx.Err() == nil {
		// verify decides what --bless rewrites; the build, which owns the
		// book's files between builds, writes it.
		blessed, errs := bless.Apply(b.Root, rep.Edits)
		rep.Blessed = blessed
		if len(errs) > 0 {
			// Reported after verification's own problems.
			err = append(diag.List(diag.All(err)), errs...)
		}
	}
	if err != nil {
		return b, docs, nf, rep, err
	}
	if opt.Verify.Bless {
		// Blessing may have rewritten chapters: render what is now on disk.
		if b, err = opt.Loads.LoadDir(opt.Root, opt.Book); err != nil {
			return nil, nil, nil, rep, err
		}
		if docs, nf, err = expandAll(ctx, opt, b); err != nil {
			return b, nil, nil, rep, err
		}
	}
	return b, docs, nf, rep, nil
}

// expandAll expands the book's chapters and, when the book has one, its
// 404 page (book.Book.NotFound, nil otherwise).
func expandAll(ctx context.Context, opt Options, b *book.Book) ([]*expand.Doc, *expand.Doc, error) {
	docs, err := opt.Expands.AllContext(ctx, b)
	if err != nil || b.NotFound == nil {
		return docs, nil, err
	}
	nf, err := expand.ExpandContext(ctx, b, b.NotFound)
	if err != nil {
		return nil, nil, err
	}
	return docs, nf, nil
}

// renderNotFound renders mdBook's src/404.md (nf; nil when the book has
// none) like a chapter, links and includes checked, with the verdicts
// verification gave its blocks, for site to write as 404.html.
func renderNotFound(b *book.Book, nf *expand.Doc, verdicts []verify.BlockVerdict) (*render.Page, error) {
	if nf == nil {
		return nil, nil
	}
	r := render.New(b)
	r.SetVerdicts(verdicts)
	return r.Render(nf)
}

// ErrNoRoot is returned by FindRoot when no folder up from the start holds
// a book in either layout.
var ErrNoRoot = errors.New("no repository root here or above (a folder with go.mod and book/SUMMARY.md, or with mdBook's book.toml or src/SUMMARY.md)")

// FindRoot walks up from dir to the first folder that holds a book and
// returns its absolute path. Two layouts are taken (see book.Layout):
//
//   - bookgen's: go.mod and a book/ folder with SUMMARY.md or book.toml
//     (book.toml is optional, as book.Load treats it; a book/ folder with
//     only book.toml is still taken, so that book.Load can say that
//     SUMMARY.md is missing);
//   - mdBook's: book.toml in the folder itself (or, without one,
//     src/SUMMARY.md: mdBook's defaults), go.mod optional. A
//     book/ folder without SUMMARY.md and book.toml beside it is mdBook's
//     output, not a book; the book/ folder of bookgen's layout (holding
//     book.toml, its parent go.mod) is not taken for an mdBook book.
func FindRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	start := dir
	for {
		switch book.LayoutOf(dir) {
		case book.BookgenLayout:
			if isFile(filepath.Join(dir, "go.mod")) {
				return dir, nil
			}
		case book.MdBookLayout:
			parent := filepath.Dir(dir)
			if !(filepath.Base(dir) == "book" && isFile(filepath.Join(parent, "go.mod")) && book.LayoutOf(parent) == book.BookgenLayout) {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%s: %w", start, ErrNoRoot)
		}
		dir = parent
	}
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// PrintWarnings writes the warnings of a build, one
// "file:line: warning: message" each.
func PrintWarnings(w io.Writer, res *Result) {
	if res == nil {
		return
	}
	for _, e := range res.Warnings {
		c := *e
		c.Msg = "warning: " + c.Msg
		fmt.Fprintln(w, c.Error())
	}
}

// PrintError writes err as bookgen prints problems: one "file:line: message"
// per problem, each followed by its indented detail.
func PrintError(w io.Writer, err error) {
	for _, e := range diag.All(err) {
		fmt.Fprintln(w, e.Error())
	}
}

// renderAll renders docs on every core: chapter i goes to pages[i], so the
// result does not depend on the order the workers finish in. Each worker
// has a Renderer of its own (a Renderer serves one goroutine); they share
// the caches (figures is safe for concurrent use). Errors are returned in
// chapter order.
func renderAll(ctx context.Context, b *book.Book, docs []*expand.Doc, cache *render.Cache, spool *render.Spool, claims []verify.Claim, programs []verify.Program, verdicts []verify.BlockVerdict, figures *render.FigureCache) (pages []*render.Page, rendered, reused int, err error) {
	pages = make([]*render.Page, len(docs))
	errs := make([]error, len(docs))
	workers := min(runtime.GOMAXPROCS(0), len(docs))
	var next atomic.Int64
	var wg sync.WaitGroup
	counts := make([][2]int, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := render.New(b)
			r.Cache = cache
			r.Spool = spool
			r.SetClaims(claims)
			r.SetPrograms(programs)
			r.SetVerdicts(verdicts)
			r.Figures = figures
			for {
				i := int(next.Add(1) - 1)
				if i >= len(docs) || ctx.Err() != nil {
					break
				}
				pages[i], errs[i] = r.Render(docs[i])
				if spool != nil {
					// A one-shot build writes the site from the pages:
					// the chapter's expanded text is let go at once, and
					// so are its lines' origins unless an include brought
					// some in (includedFrom needs only those).
					docs[i].Markdown = nil
					if !slices.ContainsFunc(docs[i].Sites, func(s int) bool { return s != 0 }) {
						docs[i].Origins, docs[i].Sites = nil, nil
					}
				}
			}
			counts[w] = [2]int{r.Rendered, r.Reused}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, 0, 0, err
	}
	var all diag.List
	for _, e := range errs {
		if e != nil {
			all = append(all, diag.All(e)...)
		}
	}
	if err := all.Err(); err != nil {
		return nil, 0, 0, err
	}
	for _, c := range counts {
		rendered += c[0]
		reused += c[1]
	}
	return pages, rendered, reused, nil
}
