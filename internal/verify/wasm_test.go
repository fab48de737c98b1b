package verify

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/expand"
	"github.com/ownership-book/ownership/internal/markdown"
)

func TestRunArgs(t *testing.T) {
	for _, c := range []struct {
		text string
		pkg  string
		args []string
		ok   bool
	}{
		{"go run ./examples/raft/figure8", "./examples/raft/figure8", []string{}, true},
		{"go run ./examples/raft/figure8 -d2", "./examples/raft/figure8", []string{"-d2"}, true},
		{"go run -race ./examples/x -n 3 a", "./examples/x", []string{"-n", "3", "a"}, true},
		{"go run -tags t ./examples/x/", "./examples/x", []string{}, true},
		{"go run main.go", "", nil, false},
		{"go test ./examples/x", "", nil, false},
	} {
		pkg, args, ok := markdown.RunArgs(c.text)
		if ok != c.ok || pkg != c.pkg || ok && !reflect.DeepEqual(args, c.args) {
			t.Errorf("RunArgs(%q) = %q %q %v, want %q %q %v", c.text, pkg, args, ok, c.pkg, c.args, c.ok)
		}
	}
}

func TestProgramRuns(t *testing.T) {
	md := "# C\n\n```console\n$ go run ./examples/a -n 2\nout\n$ go test ./examples/b\nok\n$ go run ./examples/c/\n$ go run x.go\n```\n\n" +
		"```console ignore\n$ go run ./examples/d\n```\n\n```console timeout=3m\n$ go run ./examples/a\n```\n"
	d := &expand.Doc{Chapter: &book.Item{Title: "C", Path: "c.md"}, Markdown: []byte(md)}
	pkgs, runs := programRuns(nil, []*expand.Doc{d})
	if want := []string{"./examples/a", "./examples/c"}; !reflect.DeepEqual(pkgs, want) {
		t.Errorf("packages %q, want %q", pkgs, want)
	}
	want := map[string][]pageRun{
		"./examples/a": {
			{At: "book/c.md:4", Text: "go run ./examples/a -n 2", Args: []string{"-n", "2"}, Expected: []string{"out"}},
			{At: "book/c.md:17", Text: "go run ./examples/a", Args: []string{}, Timeout: 3 * time.Minute},
		},
		"./examples/c": {{At: "book/c.md:8", Text: "go run ./examples/c/", Args: []string{}}},
	}
	if !reflect.DeepEqual(runs, want) {
		t.Errorf("runs %#v,\nwant %#v", runs, want)
	}
}

func TestDeclaredFlags(t *testing.T) {
	dir := t.TempDir()
	src := `package main

import (
	f "flag"
	"time"
)

var seed = f.Int64("seed", -7, "the seed")

func main() {
	var n int
	f.IntVar(&n, "n", 3, "the number of nodes")
	d := f.Duration("wait", 2*time.Second, "how long")
	f.Int("buf", 1<<20, "buffer bytes")
	f.Duration("tick", (time.Minute+30*time.Second)/2, "tick")
	f.IntVar(&n, "m", n*2, "not constant")
	name := "x"
	f.String(name, "", "not a literal name: skipped")
	f.Bool("d2", false, ` + "`print D2`" + `)
	f.Func("peer", "add a peer", func(string) error { return nil })
	f.Parse()
	_, _ = d, seed
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main_test.go"), []byte("package main\nimport \"flag\"\nvar _ = flag.Bool(\"test-only\", false, \"\")\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	flags, err := declaredFlags(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, fl := range flags {
		s := fl.Name + " " + fl.Kind + " " + fl.Default
		if fl.DefaultExpr {
			s += " (expr)"
		}
		got = append(got, s+": "+fl.Usage)
	}
	want := []string{
		"seed int64 -7: the seed",
		"n int 3: the number of nodes",
		"wait duration 2s: how long",
		"buf int 1048576: buffer bytes",
		"tick duration 45s: tick",
		"m int n*2 (expr): not constant",
		"d2 bool false: print D2",
		"peer func : add a peer",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("flags:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestPageNote(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{
		"main.go":        "package main\n\n//bookgen:page-note everywhere: not a page note\nfunc main() {}\n",
		"store_js.go":    "//go:build js\n\npackage main\n\n//bookgen:page-note the log is kept in memory\n",
		"net_js.go":      "package main\n\n//bookgen:page-note probes travel in memory\n",
		"disk.go":        "//go:build !js\n\npackage main\n\n//bookgen:page-note on the host only\n",
		"tagged_js.go":   "//go:build js && pagetag\n\npackage main\n\n//bookgen:page-note with the tag\n",
		"store_test.go":  "//go:build js\n\npackage main\n\n//bookgen:page-note a test\n",
		"readme_js.txt":  "//bookgen:page-note not Go\n",
		"empty_js.go":    "package main\n\n//bookgen:page-note   \n",
		"windows_x.go":   "//go:build windows\n\npackage main\n\n//bookgen:page-note windows\n",
		"wasm_wasm.go":   "package main\n\n//bookgen:page-note wasm by file name\n",
		"other_linux.go": "package main\n\n//bookgen:page-note linux\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := pageNote(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "probes travel in memory; the log is kept in memory; wasm by file name"; got != want {
		t.Errorf("pageNote = %q, want %q", got, want)
	}
	got, _ = pageNote(dir, []string{"pagetag"})
	if want := "probes travel in memory; the log is kept in memory; with the tag; wasm by file name"; got != want {
		t.Errorf("pageNote with pagetag = %q, want %q", got, want)
	}
}
