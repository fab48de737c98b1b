package render

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/alecthomas/chroma/v2"
)

// coalesced returns the tokens of lexer for text after chroma.Coalesce,
// as the page's formatter sees them.
func coalesced(t testing.TB, lexer chroma.Lexer, text string) []chroma.Token {
	t.Helper()
	it, err := chroma.Coalesce(lexer).Tokenise(nil, text)
	if err != nil {
		t.Fatal(err)
	}
	return it.Tokens()
}

// sameTokens reports the first token where a and b differ, "" when equal.
func sameTokens(a, b []chroma.Token) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return "token " + strconv.Itoa(i) + ": go/scanner " + a[i].GoString() + ", chroma " + b[i].GoString()
		}
	}
	if len(a) != len(b) {
		return "go/scanner gives " + strconv.Itoa(len(a)) + " tokens, chroma " + strconv.Itoa(len(b))
	}
	return ""
}

// goSources returns the Go files under the repository and under a few
// GOROOT packages; with BOOKGEN_LEX_ALL=1 under ten more (20 MB of Go
// written by many hands, about a minute).
func goSources(t *testing.T) []string {
	t.Helper()
	var files []string
	roots := []string{"../.."}
	pkgs := []string{"fmt", "strings", "strconv"}
	if os.Getenv("BOOKGEN_LEX_ALL") != "" {
		pkgs = append(pkgs, "go", "sync", "net/http", "regexp", "text/template", "encoding/json", "math/big")
	}
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	goroot := strings.TrimSpace(string(out))
	for _, p := range pkgs {
		roots = append(roots, filepath.Join(goroot, "src", p))
	}
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && p != root {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(p, ".go") {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// TestGoLexerMatchesChroma lexes every Go file of the repository and of
// the GOROOT packages above whole, and those of examples/ also as the
// function-sized pieces a chapter shows, with both lexers: the tokens must be the same, and
// go/scanner must handle (not hand back to chroma) nearly all of them.
func TestGoLexerMatchesChroma(t *testing.T) {
	files := goSources(t)
	if len(files) < 300 {
		t.Fatalf("only %d Go files found", len(files))
	}
	fast, total, bytes := 0, 0, 0
	check := func(name, text string) {
		total++
		bytes += len(text)
		if _, ok := lexGo(text); ok {
			fast++
		}
		if d := sameTokens(coalesced(t, goFast, text), coalesced(t, goChroma, text)); d != "" {
			t.Errorf("%s: %s", name, d)
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		if testing.Short() && len(text) > 20000 {
			continue
		}
		check(f, text)
		if !strings.Contains(filepath.ToSlash(f), "/examples/") {
			continue
		}
		// Pieces as a chapter includes them: from a func to the next.
		parts := strings.Split(text, "\nfunc ")
		for i, p := range parts[1:] {
			check(f+" piece "+strconv.Itoa(i+1), "func "+p)
		}
	}
	t.Logf("%d texts (%d bytes): %d lexed by go/scanner, %d by chroma", total, bytes, fast, total-fast)
	if fast < total*9/10 {
		t.Errorf("go/scanner lexed %d of %d texts: the fast path is not the common one", fast, total)
	}
}

// Texts that must go back to chroma, and texts on the edges of the rules.
func TestGoLexerEdges(t *testing.T) {
	for _, c := range []struct {
		text string
		fast bool
	}{
		{"package main\n\nfunc main() { println(len(x)) }\n", true},
		{"x := 0o755 + 1_000.5 + 1_0i", true}, // chroma splits these: 0 o755, 1_000 .5
		{"x := 0x1p-2", false},                // 0x1 p then "-": chroma's split crosses the literal
		{"x := 0or(1)", false},                // a name before "(" would be a function
		{"x := 0x1F + 017 + 0b101 + 1_000 + 1.5e9 + .5 + 2i + 1.5i", true},
		{"s := `a{b{{.X}}c`", true},
		{"s := `a { b`", true},
		{"r := '\\'' + 'é' + '\\x41'", true},
		{"a &^= b; c ^= d; e |= f; x <- ch; y := <-ch; z...", true},
		{"//go:build linux\n// plain\n//\n/* block */", true},
		{"func f() {\r\n}\r\n", false}, // chroma turns \r\n into \n first
		{"x := \"unterminated", false},
		{"$ go run .", false},
		{"naïve := 1", false},
		{"len (x); int(y); int (z); any(v); f\n(x); f /* c */ (x)", true},
		{"\ufefffunc f() {}", false},
		{"", true},
		{"   \n\t", true},
	} {
		_, ok := lexGo(c.text)
		if ok != c.fast {
			t.Errorf("lexGo(%q): go/scanner used = %v, want %v", c.text, ok, c.fast)
		}
		if d := sameTokens(coalesced(t, goFast, c.text), coalesced(t, goChroma, c.text)); d != "" {
			t.Errorf("%q: %s", c.text, d)
		}
	}
}

// FuzzGoLexer: on any text the page's tokens are chroma's.
func FuzzGoLexer(f *testing.F) {
	for _, s := range []string{"package p\nfunc f(a, b int) (int, error) { return a &^ b, nil }\n",
		"x := `{{if .A}}b{{end}}`", "v := 0x_1F + 1e-3i", "/* a */ // b\n//c", "a<-b<<=c...", "'\\u00e9'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if d := sameTokens(coalesced(t, goFast, text), coalesced(t, goChroma, text)); d != "" {
			t.Errorf("%q: %s", text, d)
		}
	})
}

// BenchmarkGoLexer lexes the Go files of examples/ with each lexer; the
// bytes/s of the two are the comparison (chroma's is its regexp lexer).
func BenchmarkGoLexer(b *testing.B) {
	var texts []string
	size := 0
	_ = filepath.WalkDir("../../examples", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") {
			if t, err := os.ReadFile(p); err == nil {
				texts = append(texts, string(t))
				size += len(t)
			}
		}
		return nil
	})
	for _, l := range []struct {
		name  string
		lexer chroma.Lexer
	}{{"goscanner", goFast}, {"chroma", goChroma}} {
		b.Run(l.name, func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				for _, t := range texts {
					coalesced(b, l.lexer, t)
				}
			}
		})
	}
}
