package verify

import (
	"testing"
)

// catProgram prints the names and contents of the files of the folder its
// one argument (or its -dir=folder flag) names: its output depends on that
// folder as much as on the program, as bookgen's output depends on the
// fixture book its manual's transcripts name.
const catProgram = `package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	dir := os.Args[1]
	if v, ok := strings.CutPrefix(dir, "-dir="); ok {
		dir = v
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		fmt.Printf("%s: %s", e.Name(), data)
	}
}
`

// TestCacheNoticesArgumentPaths checks addArgPaths: a transcript whose
// command names a folder of the repository (bare or as -flag=value) is
// rerun when a file in that folder changes or a file is added to it, and
// not when a file under a dot folder inside it (a cache the program keeps
// there) changes. Negative control: without m.addArgPaths in runCommand
// the edit of data/a/x.txt is served from the cache (the test's "want the
// transcript rerun" fails).
func TestCacheNoticesArgumentPaths(t *testing.T) {
	for _, arg := range []string{"data/a", "-dir=data/a"} {
		t.Run(arg, func(t *testing.T) {
			chapter := "# Chapter\n\n```console\n$ go run ./examples/cat " + arg + "\n...\n```\n"
			root := fixture(t, chapter, map[string]string{
				"examples/cat/main.go":  catProgram,
				"data/a/x.txt":          "one\n",
				"data/a/.cache/seen":    "1\n",
				"data/a/sub/deeper.txt": "deep\n",
			})
			rec := &recorder{}
			opt := Options{exec: rec.exec, CacheDir: t.TempDir()}
			run := func(what string) []string {
				t.Helper()
				if _, err := verifyRoot(t, root, opt); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				return rec.take()
			}
			run("cold")
			if calls := run("warm"); countPrefix(calls, "run ./examples/cat") != 0 {
				t.Fatalf("warm run reran the transcript: %q", calls)
			}
			steps := []struct {
				file, content string
				rerun         bool
			}{
				{"data/a/x.txt", "two\n", true},
				{"data/a/y.txt", "new\n", true},
				{"data/a/sub/deeper.txt", "deeper\n", true},
				{"data/a/.cache/seen", "2\n", false},
				{"data/elsewhere.txt", "x\n", false},
			}
			for _, s := range steps {
				writeFile(t, root, s.file, s.content)
				n := countPrefix(run("after editing "+s.file), "run ./examples/cat")
				if s.rerun && n != 1 {
					t.Errorf("after editing %s: transcript ran %d times, want the transcript rerun", s.file, n)
				}
				if !s.rerun && n != 0 {
					t.Errorf("after editing %s: transcript reran; the file is not one the command names", s.file)
				}
			}
		})
	}
}
