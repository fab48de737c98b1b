// Command bookgen builds the book: it loads SUMMARY.md, expands
// includes, compiles, tests and runs every program the chapters show,
// renders the chapters and writes a static site.
//
// Usage:
//
//	bookgen build [-o site] [--check-external] [--root .] [-v]
//	                                            build the site into -o; --check-external
//	                                            also requests every http(s) link
//	bookgen test [--bless] [--root .] [-v]      verify only; --bless rewrites transcripts
//	bookgen serve [--addr 127.0.0.1:3000] [--poll 500ms] [-o site] [--root .] [-v]
//	                                            build, serve, rebuild on change, reload the
//	                                            browser; --poll watches by polling
//
// The repository root is the first folder, from --root upwards, holding
// go.mod and book/SUMMARY.md (book/book.toml is optional), or an mdBook
// book.toml (chapters in src/ or its [book] src; go.mod optional; mdBook's
// output folder book/ is left alone). A relative -o is taken relative to
// that root. A book.toml's [bookgen] also-build lists other books of the
// repository (folders with their own book.toml and SUMMARY.md, such as
// manual/) that build and test handle after the main book, build writing
// each into the output's subfolder of that name (site/manual/); serve
// serves the main book only.
// Problems print as "file:line: message" with an indented detail; the exit
// status is then 1 (2 for a usage error). Ctrl-C stops build and test with
// status 130, leaving the output folder as it was.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/ownership-book/ownership/internal/build"
	"github.com/ownership-book/ownership/internal/serve"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage:
  bookgen build [-o site] [--check-external] [--root .] [-v]
  bookgen test  [--bless] [--root .] [-v]
  bookgen serve [--addr 127.0.0.1:3000] [--poll 500ms] [-o site] [--root .] [-v]
`

// exitInterrupted is the exit status after Ctrl-C (SIGINT) or SIGTERM
// stopped a build or test: 128 + 2, as shells report a process that
// SIGINT ended.
const exitInterrupted = 130

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	cmd, args := args[0], args[1:]
	fs := flag.NewFlagSet("bookgen "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", ".", "start `dir` of the search for the repository root")
	verbose := fs.Bool("v", false, "print every check as it runs")
	timeout := fs.Duration("timeout", 0, "default timeout of one transcript command (0: the book's, or 60s)")
	var out, addr *string
	var bless, external *bool
	var poll *time.Duration
	switch cmd {
	case "build":
		out = fs.String("o", "site", "output `folder` (relative to the repository root)")
		external = fs.Bool("check-external", false, "also request every http and https link of the book and fail on a broken one")
	case "test":
		bless = fs.Bool("bless", false, "rewrite the expected output of every transcript from a real run")
	case "serve":
		out = fs.String("o", "site", "output `folder` (relative to the repository root)")
		addr = fs.String("addr", "127.0.0.1:3000", "`address` to serve on")
		poll = fs.Duration("poll", 0, "watch by comparing files every `interval` (e.g. 500ms) instead of file system events")
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "bookgen: unknown command %q\n%s", cmd, usage)
		return 2
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "bookgen %s: unexpected arguments %q\n", cmd, fs.Args())
		return 2
	}
	dir, err := build.FindRoot(*root)
	if err != nil {
		fmt.Fprintln(stderr, "bookgen:", err)
		return 1
	}
	opt := build.Options{Root: dir}
	opt.Verify.Timeout = *timeout
	// Progress: one line on a terminal ("12 of 64 checks done; running
	// go test ./examples/x (8s)"), an occasional line in a log; -v prints
	// every check instead. serve sets up its own.
	progress := build.NewProgressLine(stderr)
	defer progress.Stop()
	if *verbose {
		opt.Verify.Log = stderr
	} else if cmd != "serve" {
		opt.Verify.Progress = progress.Update
	}
	if out != nil {
		opt.Out = *out
	}
	if bless != nil {
		opt.Verify.Bless = *bless
	}
	if external != nil {
		opt.CheckExternal = *external
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer watchInterrupt(ctx, stderr)()
	if f := os.Getenv("BOOKGEN_CPUPROFILE"); f != "" {
		w, err := os.Create(f)
		if err == nil && pprof.StartCPUProfile(w) == nil {
			defer pprof.StopCPUProfile()
		}
	}
	if f := os.Getenv("BOOKGEN_MEMPROFILE"); f != "" {
		defer peakHeapProfile(f)()
	}

	switch cmd {
	case "build":
		// The book, then every book its book.toml lists in [bookgen]
		// also-build (bookgen's manual, into site/manual/).
		results, err := build.BuildAll(ctx, opt)
		progress.Stop()
		for _, res := range results {
			build.PrintWarnings(stderr, res)
		}
		if err != nil && ctx.Err() != nil {
			// Ctrl-C: say so rather than "context canceled".
			fmt.Fprintf(stderr, "bookgen: interrupted; %s is unchanged\n", opt.OutDir())
			return exitInterrupted
		}
		if err != nil {
			build.PrintError(stderr, err)
			return 1
		}
		for _, res := range results {
			fmt.Fprintf(stdout, "bookgen: built %s: %s\n", res.Out, res.Summary())
		}
	case "test":
		results, err := build.TestAll(ctx, opt)
		progress.Stop()
		if err != nil && ctx.Err() != nil {
			fmt.Fprintln(stderr, "bookgen: interrupted")
			return exitInterrupted
		}
		if opt.Verify.Bless {
			for _, res := range results {
				printBlessed(stdout, res)
			}
		}
		if err != nil {
			build.PrintError(stderr, err)
			return 1
		}
		for _, res := range results {
			fmt.Fprintf(stdout, "bookgen: ok: %s\n", res.Summary())
		}
	case "serve":
		ln, err := net.Listen("tcp", *addr)
		if err != nil {
			fmt.Fprintln(stderr, "bookgen serve:", err)
			return 1
		}
		err = serve.Run(ctx, ln, serve.Options{Build: opt, Log: stdout, Poll: *poll})
		if err != nil {
			fmt.Fprintln(stderr, "bookgen serve:", err)
			return 1
		}
	}
	return 0
}

// interruptGrace is how long bookgen waits, after Ctrl-C or SIGTERM, for
// the stage that runs to stop (checks' processes are ended at once; a
// stage between two checks of its context, such as goldmark parsing a
// 30 MB chapter, may take seconds) before it exits anyway.
const interruptGrace = time.Second

// watchInterrupt makes Ctrl-C end the process promptly whatever runs:
// once ctx is done (the first signal), a second signal exits at once and,
// without one, the process exits after interruptGrace if run has not
// returned by then. The site is replaced by a rename, so an exit leaves
// the previous site or the new one, and whatever staging folder the write
// had made, which the next build removes. The returned function ends the
// watch (run returned).
func watchInterrupt(ctx context.Context, stderr io.Writer) (stop func()) {
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
			return
		case <-ctx.Done():
		}
		again := make(chan os.Signal, 1)
		signal.Notify(again, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(again)
		grace := time.NewTimer(interruptGrace)
		defer grace.Stop()
		select {
		case <-done:
			return
		case <-again:
			fmt.Fprintln(stderr, "bookgen: interrupted again; exiting now")
		case <-grace.C:
			fmt.Fprintf(stderr, "bookgen: interrupted; the running stage did not stop within %v, exiting without it\n", interruptGrace)
		}
		os.Exit(exitInterrupted)
	}()
	return func() { close(done) }
}

// printBlessed lists, one line each, the transcripts test --bless rewrote
// (verify.Report.Blessed), so that the author knows which chapters to
// review before committing, or says that none changed.
func printBlessed(w io.Writer, res *build.Result) {
	if res == nil || res.Report == nil {
		return
	}
	for _, b := range res.Report.Blessed {
		fmt.Fprintf(w, "bookgen: rewrote %s\n", b)
	}
	if len(res.Report.Blessed) == 0 {
		fmt.Fprintln(w, "bookgen: --bless: no transcript changed")
	}
}
