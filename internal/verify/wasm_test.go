package verify

import (
	"github.com/ownership-book/ownership/internal/markdown"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
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

func TestRunPackagesOfABlock(t *testing.T) {
	blk := markdown.Block{Lang: "console", Lines: []string{
		"$ go run ./examples/a -n 2", "out", "$ go test ./examples/b", "ok", "$ go run ./examples/c/", "$ go run x.go",
	}}
	if got, want := runPackages(blk), []string{"examples/a", "examples/c"}; !reflect.DeepEqual(got, want) {
		t.Errorf("runPackages = %q, want %q", got, want)
	}
}

func TestImportChain(t *testing.T) {
	imports := map[string][]string{
		"m/examples/p":      {"fmt", "m/examples/lib"},
		"m/examples/lib":    {"github.com/x/raft"},
		"github.com/x/raft": {"net", "io"},
		"fmt":               {"io"},
		"net":               {"io"},
	}
	got := importChain(imports, "m/examples/p", "net")
	if want := []string{"m/examples/p", "m/examples/lib", "github.com/x/raft", "net"}; !reflect.DeepEqual(got, want) {
		t.Errorf("chain %q, want %q", got, want)
	}
	if got := importChain(imports, "fmt", "net"); got != nil {
		t.Errorf("fmt reaches net by %q", got)
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
		"wait duration 2*time.Second (expr): how long",
		"d2 bool false: print D2",
		"peer func : add a peer",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("flags:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
