package verify

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ownership-book/ownership/internal/bless"
	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/expand"
)

// These tests run the real go command on the fixture module in
// testdata/fixture (its own go.mod, module example.com/fixture), copied to a
// temporary directory so that tests may edit it.

// sharedCache is a cache directory shared by the tests that do not count
// cache hits: the fixture copies are identical, so the examples' vet and
// test results carry over between them.
var sharedCache string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "bookgen-verify-cache-")
	if err != nil {
		panic(err)
	}
	sharedCache = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func needGo(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("go command not found and CI is set: %v", err)
		}
		t.Skipf("go command not found (%v); set CI to make this a failure", err)
	}
}

// fixture copies testdata/fixture to a temporary root, writes chapter as
// book/ch.md and the extra files, and returns the root.
func fixture(t *testing.T, chapter string, extra map[string]string) string {
	t.Helper()
	needGo(t)
	root := t.TempDir()
	err := filepath.WalkDir("testdata/fixture", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("testdata/fixture", p)
		dst := filepath.Join(root, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	extra = mapWith(extra, "book/ch.md", chapter)
	for name, content := range extra {
		writeFile(t, root, name, content)
	}
	return root
}

func mapWith(m map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for a, b := range m {
		out[a] = b
	}
	return out
}

func writeFile(t *testing.T, root, name, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, root, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// recorder runs processes for real and records their arguments.
type recorder struct {
	mu    sync.Mutex
	calls []string
}

func (r *recorder) exec(ctx context.Context, run Run) (Result, error) {
	r.mu.Lock()
	r.calls = append(r.calls, strings.Join(run.Args[1:], " "))
	r.mu.Unlock()
	return execProcess(ctx, run)
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.calls
	r.calls = nil
	return c
}

// verifyRoot loads, expands and verifies the book at root.
func verifyRoot(t *testing.T, root string, opt Options) (*Report, error) {
	t.Helper()
	b, err := book.Load(root)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	docs, err := expand.All(b)
	if err != nil {
		t.Fatalf("expand: %v", err)
	}
	rep, _, err := verifyAndBless(b, docs, opt)
	return rep, err
}

// verifyAndBless verifies and, with opt.Bless, applies the report's edits
// as the build does, returning what bless.Apply says it rewrote.
func verifyAndBless(b *book.Book, docs []*expand.Doc, opt Options) (*Report, []string, error) {
	rep, err := Verify(context.Background(), b, docs, opt)
	if !opt.Bless || rep == nil || len(rep.Edits) == 0 {
		return rep, nil, err
	}
	blessed, errs := bless.Apply(b.Root, rep.Edits)
	for _, e := range errs {
		err = errors.Join(err, e)
	}
	return rep, blessed, err
}

// blessRoot is verifyRoot with Bless set, returning what was rewritten.
func blessRoot(t *testing.T, root string, opt Options) (*Report, []string, error) {
	t.Helper()
	b, err := book.Load(root)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	docs, err := expand.All(b)
	if err != nil {
		t.Fatalf("expand: %v", err)
	}
	opt.Bless = true
	return verifyAndBless(b, docs, opt)
}

// uncached returns "kind subject" of every check that ran.
func uncached(r *Report) []string {
	var out []string
	for _, c := range r.Checks {
		if !c.Cached && c.Kind != "parse" {
			out = append(out, c.Kind+" "+c.Subject)
		}
	}
	return out
}

const passingChapter = "# Chapter\n" + // 1
	"\n" + // 2
	"Prose.\n" + // 3
	"\n" + // 4
	"```console\n" + // 5
	"$ go run ./examples/greet/hello\n" + // 6
	"hello, A\n" + // 7
	"...\n" + // 8
	"hello, [..]\n" + // 9
	"epoch 7\n" + // 10
	"```\n" + // 11
	"\n" + // 12
	"```go\n" + // 13
	"package main\n" + // 14
	"\n" + // 15
	"import (\n" + // 16
	"\t\"fmt\"\n" + // 17
	"\n" + // 18
	"\t\"example.com/fixture/examples/greet\"\n" + // 19
	")\n" + // 20
	"\n" + // 21
	"func main() { fmt.Println(greet.Hello(\"B\")) }\n" + // 22
	"```\n" + // 23
	"\n" + // 24
	"```go\n" + // 25
	"x := greet.Hello(\"C\")\n" + // 26
	"```\n" + // 27
	"\n" + // 28
	"```go ignore\n" + // 29
	"this is not Go\n" + // 30
	"```\n" // 31

func TestVerifyPassesAndCaches(t *testing.T) {
	root := fixture(t, passingChapter, nil)
	rec := &recorder{}
	opt := Options{exec: rec.exec}

	// Cold: everything runs.
	rep, err := verifyRoot(t, root, opt)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	wantRan := []string{
		"vet ./examples/greet", "test ./examples/greet",
		"vet ./examples/greet/hello", "test ./examples/greet/hello",
		"vet ./examples/other", "test ./examples/other",
		"transcript book/ch.md:6", "compile book/ch.md:13",
		"wasm ./examples/greet/hello",
	}
	if got := uncached(rep); strings.Join(got, ",") != strings.Join(wantRan, ",") {
		t.Errorf("ran %q\nwant %q", got, wantRan)
	}
	if rep.Ran != len(wantRan)+1 || rep.Cached != 0 || rep.Ignored != 1 {
		t.Errorf("Ran %d Cached %d Ignored %d, want %d 0 1", rep.Ran, rep.Cached, rep.Ignored, len(wantRan)+1)
	}
	calls := rec.take()
	if n := countPrefix(calls, "version"); n != 1 {
		t.Errorf("go version ran %d times, want 1: %q", n, calls)
	}
	t.Logf("cold run: %d go processes", len(calls))

	// A prose-only edit, including a change to a transcript's wildcard
	// line that still matches, starts no go process at all.
	ch := readFile(t, root, "book/ch.md")
	ch = strings.Replace(ch, "Prose.", "Prose, edited: a fencing token is an epoch.", 1)
	ch = strings.Replace(ch, "hello, [..]", "hello, [..]C", 1)
	writeFile(t, root, "book/ch.md", ch)
	rep, err = verifyRoot(t, root, opt)
	if err != nil {
		t.Fatalf("Verify after prose edit: %v", err)
	}
	if calls := rec.take(); len(calls) != 0 {
		t.Errorf("prose-only edit ran go: %q", calls)
	}
	if rep.Cached != len(wantRan) || len(uncached(rep)) != 0 {
		t.Errorf("after prose edit: Cached %d, ran %q", rep.Cached, uncached(rep))
	}

	// Editing greet reruns what depends on greet, not other's checks.
	writeFile(t, root, "examples/greet/greet.go", strings.Replace(readFile(t, root, "examples/greet/greet.go"), "greets name", "greets name, politely", 1))
	rep, err = verifyRoot(t, root, opt)
	if err != nil {
		t.Fatalf("Verify after editing greet: %v", err)
	}
	wantRerun := []string{
		"vet ./examples/greet", "test ./examples/greet",
		"vet ./examples/greet/hello", "test ./examples/greet/hello",
		"transcript book/ch.md:6", "compile book/ch.md:13",
		"wasm ./examples/greet/hello",
	}
	if got := uncached(rep); strings.Join(got, ",") != strings.Join(wantRerun, ",") {
		t.Errorf("after editing greet ran %q\nwant %q", got, wantRerun)
	}
	if n := countPrefix(rec.take(), "version"); n != 0 {
		t.Errorf("go version ran again (%d times) though the go binary did not change", n)
	}

	// A new file in other's directory reruns other's checks only.
	writeFile(t, root, "examples/other/more.go", "package other\n\n// Thrice triples n.\nfunc Thrice(n int) int { return 3 * n }\n")
	rep, err = verifyRoot(t, root, opt)
	if err != nil {
		t.Fatalf("Verify after adding a file: %v", err)
	}
	if got, want := uncached(rep), []string{"vet ./examples/other", "test ./examples/other"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("after adding examples/other/more.go ran %q, want %q", got, want)
	}

	// go.mod is part of every key.
	writeFile(t, root, "go.mod", readFile(t, root, "go.mod")+"\n// edited\n")
	rep, err = verifyRoot(t, root, opt)
	if err != nil {
		t.Fatalf("Verify after editing go.mod: %v", err)
	}
	if rep.Cached != 0 {
		t.Errorf("after editing go.mod %d checks were cached, want 0", rep.Cached)
	}
}

func countPrefix(calls []string, prefix string) int {
	n := 0
	for _, c := range calls {
		if strings.HasPrefix(c, prefix) {
			n++
		}
	}
	return n
}

// only returns the errors of err, failing the test if err is not a
// diag.List.
func only(t *testing.T, err error) []*diag.Error {
	t.Helper()
	var l diag.List
	if !errors.As(err, &l) {
		t.Fatalf("err = %v (%T), want a diag.List", err, err)
	}
	return l
}

func TestTranscriptMismatch(t *testing.T) {
	chapter := "# Chapter\n" + // 1
		"```console\n" + // 2
		"$ go run ./examples/greet/hello\n" + // 3
		"hello, A\n" + // 4
		"hello, X\n" + // 5
		"hello, C\n" + // 6
		"epoch 7\n" + // 7
		"```\n" + // 8
		"\n" +
		"```console\n" + // 10
		"{{#include transcript.txt}}\n" + // 11
		"```\n"
	included := "$ go run ./examples/greet/hello\n" + // 1
		"hello, A\n" + // 2
		"hello, B\n" + // 3
		"hello, C\n" + // 4
		"epoch 8\n" // 5
	root := fixture(t, chapter, map[string]string{"book/transcript.txt": included})
	rec := &recorder{}
	rep, err := verifyRoot(t, root, Options{exec: rec.exec, CacheDir: sharedCache})
	errs := only(t, err)
	if len(errs) != 2 {
		t.Fatalf("got %d errors, want 2:\n%v", len(errs), err)
	}
	e := errs[0]
	if e.File != "book/ch.md" || e.Line != 5 || !strings.Contains(e.Msg, `output of "go run ./examples/greet/hello" differs`) {
		t.Errorf("first error = %v, want book/ch.md:5 output differs", e)
	}
	if !strings.Contains(e.Detail, "-hello, X\n+hello, B") {
		t.Errorf("detail lacks the diff:\n%s", e.Detail)
	}
	if e := errs[1]; e.File != "book/transcript.txt" || e.Line != 5 || !strings.Contains(e.Detail, "-epoch 8\n+epoch 7") {
		t.Errorf("second error = %v, want book/transcript.txt:5 with -epoch 8 +epoch 7", e)
	}
	if rep == nil || rep.Ran == 0 {
		t.Fatalf("report = %+v, want checks even on failure", rep)
	}
	rec.take()
	// A failure is never cached: the next verification runs them again.
	_, err = verifyRoot(t, root, Options{exec: rec.exec, CacheDir: sharedCache})
	if err == nil {
		t.Fatal("second verification passed")
	}
	if n := countPrefix(rec.take(), "run ./examples/greet/hello"); n != 2 {
		t.Errorf("failed transcripts reran %d times, want 2", n)
	}
}

func TestTranscriptExitStatus(t *testing.T) {
	chapter := "```console\n" + // 1
		"$ go run ./cmd/exit3\n" + // 2
		"refused: epoch 2 < 3\n" + // 3
		"exit status 3\n" + // 4
		"$ go run ./cmd/exit3\n" + // 5
		"refused: epoch 2 < 3\n" + // 6
		"```\n"
	root := fixture(t, chapter, nil)
	_, err := verifyRoot(t, root, Options{CacheDir: sharedCache})
	errs := only(t, err)
	if len(errs) != 1 {
		t.Fatalf("got %d errors, want 1 (the second command):\n%v", len(errs), err)
	}
	// The output differs (go run printed "exit status 3"), reported at the
	// end of the expected lines.
	if e := errs[0]; e.File != "book/ch.md" || e.Line != 6 || !strings.Contains(e.Detail, "+exit status 3") {
		t.Errorf("error = %v\n%s", e, e.Detail)
	}
}

func TestTranscriptRefusals(t *testing.T) {
	tests := []struct {
		block string
		line  int
		msg   string
	}{
		{"```console transcript\n$ ls -l\n```\n", 2, `only "go run ..." and "go test ..."`},
		{"```console\n$ go run ./examples/greet/hello\nhello\n$ ls -l\n```\n", 4, `only "go run ..." and "go test ..."`},
		{"```console\n$ go run ./examples/greet/hello | head -1\n```\n", 2, "shell syntax is not supported"},
		{"```console\noutput first\n$ go run ./x\n```\n", 2, "comes before the first command"},
		{"```console timeout=soon\n$ go run ./x\n```\n", 1, `timeout="soon"`},
		{"```go\nfunc (\n```\n", 2, "does not parse"},
		{"```console timout=2m\n$ go run ./examples/greet/hello\n```\n", 1, "unknown attribute timout"},
		{"```go ignroe\nnot go\n```\n", 1, "```go block: unknown attribute ignroe"},
	}
	for _, tt := range tests {
		root := fixture(t, tt.block, nil)
		_, err := verifyRoot(t, root, Options{CacheDir: sharedCache})
		errs := only(t, err)
		if len(errs) != 1 || errs[0].File != "book/ch.md" || errs[0].Line != tt.line || !strings.Contains(errs[0].Msg, tt.msg) {
			t.Errorf("block %q: errors %v, want one at book/ch.md:%d containing %q", tt.block, err, tt.line, tt.msg)
		}
	}
}

func TestTranscriptTimeoutKillsProcessGroup(t *testing.T) {
	chapter := "```console timeout=8000ms\n$ go run ./cmd/sleeper\npid [..]\n```\n"
	root := fixture(t, chapter, nil)
	// Build the sleeper first so that the timeout covers running it, not
	// compiling it.
	build := exec.Command("go", "build", "-o", os.DevNull, "./cmd/sleeper")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build sleeper: %v\n%s", err, out)
	}
	start := time.Now()
	_, err := verifyRoot(t, root, Options{CacheDir: sharedCache})
	elapsed := time.Since(start)
	errs := only(t, err)
	if len(errs) != 1 || errs[0].Line != 2 || !strings.Contains(errs[0].Msg, "timeout after 8s") {
		t.Fatalf("errors = %v, want a timeout at book/ch.md:2", err)
	}
	m := regexp.MustCompile(`pid (\d+)`).FindStringSubmatch(errs[0].Detail)
	if m == nil {
		t.Fatalf("no pid in the partial output:\n%s", errs[0].Detail)
	}
	pid, _ := strconv.Atoi(m[1])
	// The program (go run's child) must be gone, not only go run.
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("sleeper (pid %d) still runs after the timeout", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("verification with an 8s timeout took %v", elapsed)
}

// TestTranscriptOutputLimit checks that a program that prints without end
// is killed once it has printed MaxOutput bytes, not kept until its
// timeout while its output fills memory, and that it is not blessed.
func TestTranscriptOutputLimit(t *testing.T) {
	flood := "package main\n\nimport (\n\t\"bufio\"\n\t\"os\"\n)\n\nfunc main() {\n\tw := bufio.NewWriter(os.Stdout)\n\tfor {\n\t\tw.WriteString(\"epoch 1 fenced\\n\")\n\t}\n}\n"
	chapter := "```console timeout=30s\n$ go run ./cmd/flood\nepoch 1 fenced\n```\n"
	root := fixture(t, chapter, map[string]string{"cmd/flood/main.go": flood})
	start := time.Now()
	_, err := verifyRoot(t, root, Options{CacheDir: sharedCache, Bless: true})
	errs := only(t, err)
	if len(errs) != 1 || errs[0].Line != 2 || !strings.Contains(errs[0].Msg, "printed more than 16 MiB") {
		t.Fatalf("errors = %v, want an output limit at book/ch.md:2", err)
	}
	if got := readFile(t, root, "book/ch.md"); got != chapter {
		t.Errorf("the chapter was blessed: %q", got)
	}
	t.Logf("a program printing without end was stopped after %v", time.Since(start))
}

func TestBless(t *testing.T) {
	chapter := "# Chapter\n" + // 1
		"\n" + // 2
		"- Run it:\n" + // 3
		"\n" + // 4
		"  ```console\n" + // 5
		"  $ go run ./examples/greet/hello\n" + // 6
		"  wrong\n" + // 7
		"  $ go run ./cmd/exit3\n" + // 8
		"  refused: epoch 2 < 3\n" + // 9
		"  exit status 3\n" + // 10
		"  $ go run ./examples/greet/hello\n" + // 11
		"  ```\n" + // 12
		"\n" + // 13
		"Done.\n" // 14
	root := fixture(t, chapter, nil)
	cache := t.TempDir()
	_, blessed, err := blessRoot(t, root, Options{CacheDir: cache})
	if err != nil {
		t.Fatalf("Verify with Bless: %v", err)
	}
	want := "# Chapter\n\n- Run it:\n\n  ```console\n" +
		"  $ go run ./examples/greet/hello\n  hello, A\n  hello, B\n  hello, C\n  epoch 7\n" +
		"  $ go run ./cmd/exit3\n  refused: epoch 2 < 3\n  exit status 3\n" +
		"  $ go run ./examples/greet/hello\n  hello, A\n  hello, B\n  hello, C\n  epoch 7\n" +
		"  ```\n\nDone.\n"
	if got := readFile(t, root, "book/ch.md"); got != want {
		t.Errorf("blessed chapter:\n%s\nwant:\n%s", got, want)
	}
	wantBlessed := []string{
		"book/ch.md:7: go run ./examples/greet/hello (1 lines -> 4 lines)",
		"book/ch.md:12: go run ./examples/greet/hello (0 lines -> 4 lines)",
	}
	if strings.Join(blessed, "\n") != strings.Join(wantBlessed, "\n") {
		t.Errorf("Blessed = %q, want %q", blessed, wantBlessed)
	}
	// Without Bless, the rewritten chapter passes from the cache.
	rec := &recorder{}
	_, err = verifyRoot(t, root, Options{CacheDir: cache, exec: rec.exec})
	if err != nil {
		t.Fatalf("Verify after blessing: %v", err)
	}
	if n := countPrefix(rec.take(), "run"); n != 0 {
		t.Errorf("%d transcripts reran after blessing, want 0 (cached)", n)
	}
}

// TestBlessIncludedTranscriptInListItem checks that a transcript included
// into a list item's console block is verified whole (the include keeps the
// item's indentation on every line) and blessed into the included file
// without that indentation.
func TestBlessIncludedTranscriptInListItem(t *testing.T) {
	chapter := "# Chapter\n\n- Run it:\n\n  ```console\n  {{#include ../examples/greet/hello/run.txt}}\n  ```\n\n- Done.\n"
	root := fixture(t, chapter, map[string]string{
		"examples/greet/hello/run.txt": "$ go run ./examples/greet/hello\nwrong\n",
	})
	_, err := verifyRoot(t, root, Options{CacheDir: sharedCache})
	errs := diag.All(err)
	if len(errs) != 1 || errs[0].File != "examples/greet/hello/run.txt" || errs[0].Line != 2 {
		t.Fatalf("err = %v, want a difference at examples/greet/hello/run.txt:2", err)
	}
	if _, err := verifyRoot(t, root, Options{Bless: true, CacheDir: sharedCache}); err != nil {
		t.Fatalf("Verify with Bless: %v", err)
	}
	want := "$ go run ./examples/greet/hello\nhello, A\nhello, B\nhello, C\nepoch 7\n"
	if got := readFile(t, root, "examples/greet/hello/run.txt"); got != want {
		t.Errorf("blessed file = %q, want %q", got, want)
	}
	if got := readFile(t, root, "book/ch.md"); got != chapter {
		t.Errorf("the chapter changed: %q", got)
	}
}

func TestBlessNeverBlessesTimeoutsOrStartFailures(t *testing.T) {
	chapter := "```console\n$ go run ./examples/greet/hello\nold\n$ go test ./examples/greet\nold too\n```\n"
	root := fixture(t, chapter, nil)
	fake := func(ctx context.Context, r Run) (Result, error) {
		switch r.Args[1] {
		case "run":
			return Result{Output: []byte("partial\n"), ExitCode: -1, TimedOut: true}, nil
		case "test":
			if len(r.Args) == 3 && r.Args[2] == "./examples/greet" && r.Timeout != PackageTimeout {
				return Result{ExitCode: -1}, ErrStart
			}
		}
		return execProcess(ctx, r)
	}
	_, err := verifyRoot(t, root, Options{Bless: true, CacheDir: sharedCache, exec: fake})
	errs := only(t, err)
	if len(errs) != 2 || !strings.Contains(errs[0].Msg, "timeout") || !strings.Contains(errs[1].Msg, "cannot start") {
		t.Errorf("errors = %v, want a timeout and a start failure", err)
	}
	if got := readFile(t, root, "book/ch.md"); got != chapter {
		t.Errorf("chapter rewritten to:\n%s", got)
	}
}

func TestCompileErrorMapsToChapterLine(t *testing.T) {
	chapter := "# Chapter\n" + // 1
		"```go\n" + // 2
		"// Package main is a whole file.\n" + // 3
		"package main\n" + // 4
		"\n" + // 5
		"func main() {\n" + // 6
		"\tx := 1\n" + // 7
		"}\n" + // 8
		"```\n"
	root := fixture(t, chapter, nil)
	_, err := verifyRoot(t, root, Options{CacheDir: sharedCache})
	errs := only(t, err)
	if len(errs) != 1 || errs[0].File != "book/ch.md" || errs[0].Line != 7 || !strings.Contains(errs[0].Msg, "declared and not used: x") {
		t.Fatalf("errors = %v, want book/ch.md:7 declared and not used", err)
	}
	if !strings.Contains(errs[0].Detail, "book/ch.md:7:") {
		t.Errorf("detail does not name the chapter line:\n%s", errs[0].Detail)
	}
	if _, err := os.Stat(filepath.Join(root, "book", "zz_bookgen_snippet.go")); !os.IsNotExist(err) {
		t.Errorf("the snippet was written into the repository: %v", err)
	}
}

// TestCompileGeneratorWithBuildIgnore checks that a whole-file block with
// "//go:build ignore" (a generator run with "go run gen.go") is compiled,
// and its errors reported, instead of failing with "build constraints
// exclude all Go files".
func TestCompileGeneratorWithBuildIgnore(t *testing.T) {
	good := "```go\n//go:build ignore\n\npackage main\n\nfunc main() {}\n```\n"
	root := fixture(t, good, nil)
	if _, err := verifyRoot(t, root, Options{CacheDir: sharedCache}); err != nil {
		t.Errorf("a generator with //go:build ignore: %v", err)
	}
	bad := "```go\n//go:build ignore\n\npackage main\n\nfunc main() { x := 1 }\n```\n"
	root = fixture(t, bad, nil)
	_, err := verifyRoot(t, root, Options{CacheDir: sharedCache})
	errs := diag.All(err)
	if len(errs) != 1 || errs[0].Line != 6 || !strings.Contains(errs[0].Msg, "declared and not used: x") {
		t.Errorf("errors = %v, want book/ch.md:6 declared and not used", err)
	}
}

func TestExampleTestFailure(t *testing.T) {
	failing := "package other\n\nimport \"testing\"\n\nfunc TestBroken(t *testing.T) {\n\tt.Fatal(\"epoch went backwards\")\n}\n"
	root := fixture(t, "# Chapter\n", map[string]string{"examples/other/broken_test.go": failing})
	_, err := verifyRoot(t, root, Options{CacheDir: sharedCache})
	errs := only(t, err)
	if len(errs) != 1 || errs[0].File != "examples/other/broken_test.go" || errs[0].Line != 6 || !strings.Contains(errs[0].Msg, "go test ./examples/other failed: epoch went backwards") {
		t.Fatalf("errors = %v, want examples/other/broken_test.go:6", err)
	}
}

// TestHangingTestIsNamed: a test that never returns is ended by the test
// binary's own -timeout (testBinaryTimeout, before the package's
// PackageTimeout kills the process group), so the error names the test
// that hung and its stack instead of only the package. Negative control:
// without the -timeout argument the run below ends at PackageTimeout, ten
// minutes, and says only "timeout after 10m".
func TestHangingTestIsNamed(t *testing.T) {
	defer func(d time.Duration) { testBinaryTimeout = d }(testBinaryTimeout)
	testBinaryTimeout = 3 * time.Second
	hang := "package other\n\nimport \"testing\"\n\nfunc TestWaitsForever(t *testing.T) {\n\tselect {}\n}\n"
	root := fixture(t, "# Chapter\n", map[string]string{"examples/other/hang_test.go": hang})
	_, err := verifyRoot(t, root, Options{CacheDir: t.TempDir()})
	errs := only(t, err)
	if len(errs) != 1 || !strings.Contains(errs[0].Msg, "go test ./examples/other failed: TestWaitsForever did not return within 3s") ||
		!strings.Contains(errs[0].Detail, "hang_test.go:6") {
		t.Fatalf("errors = %v, want go test ./examples/other failed, naming TestWaitsForever", err)
	}
	t.Logf("%s\n%s", errs[0], errs[0].Detail)
}

// BenchmarkVerifyCached measures a verification answered entirely by the
// cache (the prose-edit path of bookgen serve): re-hashing the files of
// every entry's manifest, parsing the chapter's blocks, starting no process.
func BenchmarkVerifyCached(b *testing.B) {
	if _, err := exec.LookPath("go"); err != nil {
		b.Skip("go command not found")
	}
	root := b.TempDir()
	if out, err := exec.Command("cp", "-r", "testdata/fixture/.", root).CombinedOutput(); err != nil {
		b.Fatalf("copy fixture: %v %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(root, "book", "ch.md"), []byte(passingChapter), 0o644); err != nil {
		b.Fatal(err)
	}
	bk, err := book.Load(root)
	if err != nil {
		b.Fatal(err)
	}
	docs, err := expand.All(bk)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := Verify(context.Background(), bk, docs, Options{}); err != nil {
		b.Fatal(err)
	}
	calls := 0
	opt := Options{exec: func(ctx context.Context, r Run) (Result, error) { calls++; return execProcess(ctx, r) }}
	for b.Loop() {
		if _, err := Verify(context.Background(), bk, docs, opt); err != nil {
			b.Fatal(err)
		}
	}
	if calls != 0 {
		b.Fatalf("%d processes ran on a cached verification", calls)
	}
}

// TestCacheNoticesEmbeddedFiles checks that a file a program embeds from a
// subdirectory (//go:embed static) is part of the key of the checks that
// build it: a changed or added embedded file reruns the transcript, whose
// output then no longer matches.
func TestCacheNoticesEmbeddedFiles(t *testing.T) {
	program := "package main\n\n" +
		"import (\n\t\"embed\"\n\t\"fmt\"\n\t\"io/fs\"\n)\n\n" +
		"//go:embed static\nvar static embed.FS\n\n" +
		"func main() {\n" +
		"\tfs.WalkDir(static, \".\", func(p string, d fs.DirEntry, err error) error {\n" +
		"\t\tif !d.IsDir() {\n\t\t\tb, _ := static.ReadFile(p)\n\t\t\tfmt.Printf(\"%s: %s\", p, b)\n\t\t}\n\t\treturn nil\n\t})\n" +
		"}\n"
	chapter := "# Chapter\n```console\n$ go run ./examples/emb\nstatic/msg.txt: epoch 1\n```\n"
	root := fixture(t, chapter, map[string]string{
		"examples/emb/main.go":        program,
		"examples/emb/static/msg.txt": "epoch 1\n",
	})
	rec := &recorder{}
	opt := Options{exec: rec.exec}
	if _, err := verifyRoot(t, root, opt); err != nil {
		t.Fatalf("cold: %v", err)
	}
	rec.take()
	if _, err := verifyRoot(t, root, opt); err != nil {
		t.Fatalf("warm: %v", err)
	}
	if calls := rec.take(); len(calls) != 0 {
		t.Fatalf("warm run started go: %q", calls)
	}

	for _, step := range []struct{ what, file, content string }{
		{"edited embedded file", "examples/emb/static/msg.txt", "epoch 2\n"},
		{"file added to an embedded directory", "examples/emb/static/sub/new.txt", "new\n"},
	} {
		if step.file != "examples/emb/static/msg.txt" {
			writeFile(t, root, "examples/emb/static/msg.txt", "epoch 1\n")
		}
		writeFile(t, root, step.file, step.content)
		_, err := verifyRoot(t, root, opt)
		errs := diag.All(err)
		if len(errs) != 1 || errs[0].File != "book/ch.md" || !strings.Contains(errs[0].Msg, "differs from the transcript") {
			t.Errorf("after %s: err = %v, want the transcript to differ", step.what, err)
		}
		if calls := rec.take(); countPrefix(calls, "run ./examples/emb") != 1 {
			t.Errorf("after %s: go calls %q, want the transcript rerun", step.what, calls)
		}
	}
}

// TestCacheNoticesNewPackageUnderPattern checks that a transcript of
// "go test ./examples/..." reruns when a package appears under examples/:
// go list could not name it when the entry was stored.
func TestCacheNoticesNewPackageUnderPattern(t *testing.T) {
	root := fixture(t, "# Chapter\n```console\n$ go test ./examples/...\n...\n```\n", nil)
	rec := &recorder{}
	opt := Options{exec: rec.exec}
	if _, err := verifyRoot(t, root, opt); err != nil {
		t.Fatalf("cold: %v", err)
	}
	rec.take()
	if _, err := verifyRoot(t, root, opt); err != nil {
		t.Fatalf("warm: %v", err)
	}
	if calls := rec.take(); len(calls) != 0 {
		t.Fatalf("warm run started go: %q", calls)
	}
	writeFile(t, root, "examples/third/deep/third_test.go", "package deep\n\nimport \"testing\"\n\nfunc TestEpoch(t *testing.T) {}\n")
	if _, err := verifyRoot(t, root, opt); err != nil {
		t.Fatalf("after adding a package: %v", err)
	}
	if calls := rec.take(); countPrefix(calls, "test ./examples/...") != 1 {
		t.Errorf("after adding examples/third/deep: go calls %q, want the transcript rerun", calls)
	}
}
