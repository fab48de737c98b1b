package tests

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ownership-book/ownership/internal/build"
	"github.com/ownership-book/ownership/internal/serve"
)

// BenchmarkProseEditToReload measures what a reader waits for after saving
// a prose edit under bookgen serve: from the write of the chapter file to
// the reload event on an open page's event stream (fsnotify, the quiet
// period, the rebuild, the event), with warm caches. It reports the median
// (p50-ms) besides the mean. Books: the good fixture, generated books of
// 100 and 1,000 chapters (genBook: prose, a table, a Go listing and an
// ignored transcript per chapter), and a copy of this repository's own
// book (realbook: its examples, checks, figures and claims; the edit is to
// book/stream.md), which shares the repository's .bookgen-cache so that
// only its first run pays for the checks. Run with
//
//	go test ./tests -run '^$' -bench ProseEditToReload -benchtime 20x
func BenchmarkProseEditToReload(b *testing.B) {
	for _, tc := range []struct {
		name string
		root func(b *testing.B) (root, chapter string)
		// repoCache: the verification cache is the repository's own
		// .bookgen-cache, not a new one
		repoCache bool
	}{
		{"fixture", func(b *testing.B) (string, string) {
			root := copyFixtureB(b, "good")
			return root, filepath.Join(root, "book", "intro.md")
		}, false},
		{"chapters=100", func(b *testing.B) (string, string) { return genBook(b, 100) }, false},
		{"chapters=1000", func(b *testing.B) (string, string) { return genBook(b, 1000) }, false},
		{"realbook", copyRealBook, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			root, chapter := tc.root(b)
			cache := b.TempDir()
			if tc.repoCache {
				abs, err := filepath.Abs(filepath.Join("..", ".bookgen-cache"))
				if err != nil {
					b.Fatal(err)
				}
				cache = abs
			}
			benchEdit(b, root, chapter, cache)
		})
	}
}

// copyRealBook copies what this repository's book is built from (go.mod,
// go.sum, book/, examples/, and internal/, which example tests import) to
// a temporary folder and returns it and the chapter to edit.
func copyRealBook(b *testing.B) (root, chapter string) {
	root = b.TempDir()
	for _, name := range []string{"go.mod", "go.sum", "book", "examples", "internal"} {
		src := filepath.Join("..", name)
		fi, err := os.Stat(src)
		if err != nil {
			b.Fatal(err)
		}
		if fi.IsDir() {
			if err := os.CopyFS(filepath.Join(root, name), os.DirFS(src)); err != nil {
				b.Fatal(err)
			}
			continue
		}
		data, err := os.ReadFile(src)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return root, filepath.Join(root, "book", "stream.md")
}

// settle is the pause before each measured edit (see benchEdit).
const settle = 300 * time.Millisecond

func benchEdit(b *testing.B, root, chapter, cacheDir string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opt := serve.Options{Build: build.Options{Root: root, Out: filepath.Join(b.TempDir(), "site")}, Log: &lockedLog{}}
	opt.Build.Verify.CacheDir = cacheDir
	done := make(chan error, 1)
	go func() { done <- serve.Run(ctx, ln, opt) }()
	defer func() { cancel(); <-done }()
	base := "http://" + ln.Addr().String()
	deadline := time.Now().Add(20 * time.Minute) // a cold real book runs every check first
	for {
		resp, err := http.Get(base + "/index.html")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			b.Fatal("the first build did not finish")
		}
		time.Sleep(50 * time.Millisecond)
	}
	resp, err := http.Get(base + serve.EventsPath)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	events := readEvents(resp.Body)
	if ev := <-events; ev.name != "hello" {
		b.Fatalf("first event %+v", ev)
	}
	src, err := os.ReadFile(chapter)
	if err != nil {
		b.Fatal(err)
	}
	var took []time.Duration
	b.ResetTimer()
	for i := range b.N {
		// A writer saves seconds apart, not the instant the page reloads:
		// give the previous build's print page and search index (written
		// after the reload, see serve's startFinish) time to finish, so
		// that each edit is measured as it is met, not queued behind the
		// last one's work.
		b.StopTimer()
		time.Sleep(settle)
		b.StartTimer()
		edit := fmt.Appendf(append([]byte{}, src...), "\nAn edit, number %d.\n", i)
		start := time.Now()
		if err := os.WriteFile(chapter, edit, 0o644); err != nil {
			b.Fatal(err)
		}
		for ev := range events {
			if ev.name == "reload" {
				break
			}
			if ev.name == "build-error" {
				b.Fatalf("build error: %s", ev.data)
			}
		}
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
}

// genBook writes a book of n chapters (go.mod, book.toml, SUMMARY.md with
// parts and nesting) and returns its root and the path of a chapter in the
// middle.
func genBook(b *testing.B, n int) (root, chapter string) {
	b.Helper()
	root = b.TempDir()
	var sum strings.Builder
	sum.WriteString("# Summary\n\n[Introduction](c0000.md)\n\n")
	for i := 1; i < n; i++ {
		if i%100 == 1 {
			fmt.Fprintf(&sum, "\n# Part %d\n\n", i/100+1)
		}
		indent := ""
		if i%5 != 1 {
			indent = "    "
		}
		fmt.Fprintf(&sum, "%s- [Chapter %d](c%04d.md)\n", indent, i, i)
	}
	files := map[string]string{
		"go.mod":          "module example.org/big\n\ngo 1.26\n",
		"book/book.toml":  "[book]\ntitle = \"Generated\"\n",
		"book/SUMMARY.md": sum.String(),
	}
	for i := range n {
		var c strings.Builder
		fmt.Fprintf(&c, "# Chapter %d\n\n", i)
		for s := range 4 {
			fmt.Fprintf(&c, "## Section %d.%d\n\nAn owner holds epoch %d and writes with it; a stale owner's write at epoch %d is refused by the fence, see [the next chapter](c%04d.md#section-%d%d).\n\n", i, s, i+s, i+s-1, (i+1)%n, (i+1)%n, s)
			fmt.Fprintf(&c, "| epoch | owner |\n|---|---|\n| %d | A |\n| %d | B |\n\n", i, i+1)
			fmt.Fprintf(&c, "```go\nfunc apply%d(e Epoch) error {\n\tif e < current {\n\t\treturn fmt.Errorf(\"stale epoch %%d\", e)\n\t}\n\treturn nil\n}\n```\n\n", s)
			c.WriteString("```console ignore\n$ go run ./examples/x\nok\n```\n\n")
		}
		files[fmt.Sprintf("book/c%04d.md", i)] = c.String()
	}
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return root, filepath.Join(root, "book", fmt.Sprintf("c%04d.md", n/2))
}
