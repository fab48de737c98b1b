package verify

import (
	"archive/zip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// noisyGo puts a "go" script first in $PATH that writes to stderr before
// and after running the real go command, as go does on a cold module cache
// ("go: downloading ...") or under a GOFLAGS that makes it warn. "go run"
// stays quiet so that transcripts compare as before: what a program's go
// run prints on stderr is part of its transcript.
func noisyGo(t *testing.T) {
	t.Helper()
	real, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("go not found: %v", err)
	}
	bin := t.TempDir()
	script := "#!/bin/sh\n" +
		"if [ \"$1\" = run ]; then exec " + real + " \"$@\"; fi\n" +
		"echo 'go: downloading example.com/noise v1.0.0' >&2\n" +
		real + " \"$@\"\n" +
		"status=$?\n" +
		"echo 'go: warning: noise after the output' >&2\n" +
		"exit $status\n"
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// TestVerifyIgnoresGoStderr checks that go list -json and go version are
// decoded from stdout alone: a go that speaks on stderr (a cold module
// cache, GOFLAGS=-mod=mod on an untidy go.mod) must not break the book.
// Issue 9: "go list output: invalid character 'g' looking for beginning of
// value".
func TestVerifyIgnoresGoStderr(t *testing.T) {
	root := fixture(t, passingChapter, nil)
	noisyGo(t)
	rep, err := verifyRoot(t, root, Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatalf("Verify with a go that writes to stderr: %v", err)
	}
	if rep.Ran == 0 {
		t.Fatal("no check ran")
	}
	// The version recorded in the cache key is go's stdout only.
	v := &verifier{root: root, goCmd: "go", exec: execProcess, cache: newCache(root, t.TempDir())}
	ver, err := v.goVersion(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(ver, "noise") || !strings.HasPrefix(ver, "go version ") {
		t.Errorf("go version = %q, want go's stdout alone", ver)
	}
}

// TestGoListFailureShowsStderr checks that when go list fails, what it
// said on stderr is the error's text.
func TestGoListFailureShowsStderr(t *testing.T) {
	root := fixture(t, "# Chapter\n", nil)
	v := &verifier{root: root, goCmd: "go", exec: execProcess, listed: map[string]*listCall{}}
	_, err := v.localDirs(t.Context(), []string{"-no-such-flag"}, []string{"./examples/greet"})
	if err == nil {
		t.Fatal("go list with an unknown flag succeeded")
	}
	if !strings.Contains(err.Error(), "no-such-flag") {
		t.Errorf("error %q does not show go list's stderr", err)
	}
}

// TestVerifyOnColdCaches runs a verification with empty GOMODCACHE and
// GOCACHE, as on a fresh machine, on a book whose example needs a module
// that is not in the module cache: go downloads it (from a file:// proxy
// written here, so that the test needs no network) and says so on stderr
// ("go: downloading example.com/dep v1.0.0"). The book holds one small
// program (it prints with println, so that an empty build cache costs only
// the runtime's packages).
//
// The module cache is always empty. The build cache is empty only with
// BOOKGEN_TEST_COLD_GOCACHE=1, because compiling the runtime takes from 15
// s to a minute on a busy machine, and an empty build cache makes go print
// nothing more (.ci/run's first step builds the whole book with both
// caches empty).
func TestVerifyOnColdCaches(t *testing.T) {
	needGo(t)
	root := t.TempDir()
	for name, content := range map[string]string{
		"go.mod":          "module example.com/fixture\n\ngo 1.26\n\nrequire example.com/dep v1.0.0\n",
		"book/SUMMARY.md": "# Summary\n\n- [Chapter](ch.md)\n",
		"book/book.toml":  "[book]\ntitle = \"Cold\"\n",
		"book/ch.md":      "# Chapter\n\n```console\n$ go run ./examples/usedep\ndep says hi\n```\n",
		"examples/usedep/main.go": "// Command usedep prints what example.com/dep says.\npackage main\n\n" +
			"import \"example.com/dep\"\n\nfunc main() { println(dep.Word()) }\n",
	} {
		writeFile(t, root, name, content)
	}
	proxy := t.TempDir()
	writeProxyModule(t, proxy, "example.com/dep", "v1.0.0", map[string]string{
		"go.mod": "module example.com/dep\n\ngo 1.21\n",
		"dep.go": "// Package dep is a module for TestVerifyOnColdCaches.\npackage dep\n\n// Word returns a greeting.\nfunc Word() string { return \"dep says hi\" }\n",
	})
	t.Setenv("GOMODCACHE", t.TempDir())
	if os.Getenv("BOOKGEN_TEST_COLD_GOCACHE") != "" {
		t.Setenv("GOCACHE", t.TempDir())
	}
	t.Setenv("GOPROXY", "file://"+filepath.ToSlash(proxy))
	t.Setenv("GOSUMDB", "off")
	t.Setenv("GOFLAGS", "-mod=mod -modcacherw")
	rep, err := verifyRoot(t, root, Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatalf("Verify on cold caches: %v", err)
	}
	if rep.Ran != 4 {
		t.Errorf("%d checks ran, want 4 (vet, test, the transcript, its program for wasm): %+v", rep.Ran, rep.Checks)
	}
}

// writeProxyModule lays out module mod at version ver in a GOPROXY
// directory (https://go.dev/ref/mod#goproxy-protocol): list, .info, .mod
// and .zip.
func writeProxyModule(t *testing.T, proxy, mod, ver string, files map[string]string) {
	t.Helper()
	dir := filepath.Join(proxy, filepath.FromSlash(mod), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("list", ver+"\n")
	write(ver+".info", `{"Version":"`+ver+`","Time":"2026-01-01T00:00:00Z"}`)
	write(ver+".mod", files["go.mod"])
	f, err := os.Create(filepath.Join(dir, ver+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for name, content := range files {
		w, err := zw.Create(mod + "@" + ver + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCompileErrorReportedOnce breaks a library that a program, its tests,
// a transcript and a go block all build: the compile error is reported
// once, first, at the library's line, and what follows from it (the vet
// and test failures of every package that imports it, the transcript's
// diff that would suggest --bless, the go block's failure, the claim that
// names one of its tests) is not reported beside it.
func TestCompileErrorReportedOnce(t *testing.T) {
	root := fixture(t, passingChapter+"\nHello greets: [TestHello](../examples/greet/greet_test.go#TestHello).\n", map[string]string{
		"examples/greet/greet.go": "// Package greet is broken.\npackage greet\n\n" + // 1-3
			"// Hello greets name.\n" + // 4
			"func Hello(name string) string { return \"hello, \" + nmae }\n", // 5
	})
	_, err := verifyRoot(t, root, Options{CacheDir: t.TempDir()})
	errs := only(t, err)
	if len(errs) != 1 {
		t.Fatalf("got %d reports, want 1 (the compile error):\n%v", len(errs), err)
	}
	e := errs[0]
	if e.File != "examples/greet/greet.go" || e.Line != 5 || !strings.Contains(e.Msg, "undefined: nmae") {
		t.Errorf("report = %v, want examples/greet/greet.go:5 naming undefined: nmae", e)
	}
	t.Logf("report:\n%v", e)
	if strings.Contains(e.Error(), "--bless") {
		t.Errorf("the report suggests --bless for a compile error:\n%v", e)
	}
	for _, want := range []string{"go test ./examples/greet", "book/ch.md:6", "book/ch.md:13", "book/ch.md:33: claim TestHello"} {
		if !strings.Contains(e.Detail, want) {
			t.Errorf("detail does not list %q among what the error breaks:\n%s", want, e.Detail)
		}
	}
}

// TestCompileErrorFirst checks that a compile error comes before the other
// problems of the book, whatever their files.
func TestCompileErrorFirst(t *testing.T) {
	chapter := "# Chapter\n\n```console\n$ go run ./examples/greet/hello\nnot what it prints\n```\n"
	root := fixture(t, chapter, map[string]string{
		"examples/other/other.go": "package other\n\nfunc F() int { return \"x\" }\n",
	})
	_, err := verifyRoot(t, root, Options{CacheDir: t.TempDir()})
	errs := only(t, err)
	if len(errs) != 2 {
		t.Fatalf("got %d reports, want 2:\n%v", len(errs), err)
	}
	if errs[0].File != "examples/other/other.go" || errs[1].File != "book/ch.md" {
		t.Errorf("reports in order %s, %s; want the compile error first:\n%v", errs[0].File, errs[1].File, err)
	}
}

// TestProgressReportsEveryCheck checks Options.Progress: it starts at 0 of
// the number of checks, names each running check, and ends with all done
// and none running.
func TestProgressReportsEveryCheck(t *testing.T) {
	root := fixture(t, passingChapter, nil)
	var mu sync.Mutex
	var seen []Progress
	names := map[string]bool{}
	opt := Options{CacheDir: t.TempDir(), Progress: func(p Progress) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, p)
		for _, r := range p.Running {
			names[r] = true
		}
		if len(p.Running) != len(p.Since) {
			t.Errorf("Running %v and Since %v differ in length", p.Running, p.Since)
		}
	}}
	if _, err := verifyRoot(t, root, opt); err != nil {
		t.Fatal(err)
	}
	first, last := seen[0], seen[len(seen)-1]
	// vet and test of 3 packages, 1 transcript, 1 compiled go block, the
	// transcript's program built for wasm.
	if first.Done != 0 || first.Total != 9 {
		t.Errorf("first progress %+v, want 0 of 9", first)
	}
	if last.Done != last.Total || len(last.Running) != 0 {
		t.Errorf("last progress %+v, want all done, none running", last)
	}
	for _, want := range []string{"go test ./examples/greet", "go vet ./examples/other", "book/ch.md:6: $ go run ./examples/greet/hello", "book/ch.md:13: go block"} {
		if !names[want] {
			t.Errorf("no progress named %q; named %v", want, names)
		}
	}
}
