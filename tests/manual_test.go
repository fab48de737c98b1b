package tests

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ownership-book/ownership/internal/build"
)

// TestManual builds bookgen's manual (manual/, listed in book/book.toml's
// [bookgen] also-build) as build.BuildAll builds it after the book, and
// checks that every console block of its chapters that runs bookgen was
// verified as a transcript: each `$ go run ./cmd/bookgen ...` line of
// manual/src/*.md outside a "console ignore" block is the subject of a
// transcript check of the build, and names a fixture book under
// manual/fixtures/ that exists. It also checks that the book lists the
// manual, so that `bookgen build` (and Netlify) publish it under
// site/manual/. Negative control: a manual chapter whose expected output
// is changed fails this test at that line (notes/house.md).
func TestManual(t *testing.T) {
	root, err := build.FindRoot("..")
	if err != nil {
		t.Fatal(err)
	}
	also, err := build.Also(build.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	if len(also) != 1 || also[0].Book != "manual" {
		t.Fatalf("book/book.toml's also-build gives %d books, want manual/ alone", len(also))
	}
	opt := also[0]
	opt.Out = filepath.Join(t.TempDir(), "site", "manual")
	res, err := build.Build(context.Background(), opt)
	if err != nil {
		build.PrintError(testWriter{t}, err)
		t.Fatal("the manual does not build")
	}
	t.Logf("manual: %s", res.Summary())
	checked := map[string]bool{}
	for _, c := range res.Report.Checks {
		if c.Kind == "transcript" {
			checked[c.Subject] = true
		}
	}
	chapters, _ := filepath.Glob(filepath.Join(root, "manual", "src", "*.md"))
	fence := regexp.MustCompile("^(`{3,})(.*)$")
	runs := 0
	for _, ch := range chapters {
		data, err := os.ReadFile(ch)
		if err != nil {
			t.Fatal(err)
		}
		rel := "manual/src/" + filepath.Base(ch)
		open, info := "", ""
		for i, line := range strings.Split(string(data), "\n") {
			if m := fence.FindStringSubmatch(line); m != nil {
				switch {
				case open == "":
					open, info = m[1], strings.TrimSpace(m[2])
				case m[1] == open && strings.TrimSpace(m[2]) == "":
					open = ""
				}
				continue
			}
			if open == "" || !strings.HasPrefix(info, "console") || strings.Contains(info, "ignore") || !strings.HasPrefix(line, "$ go run ./cmd/bookgen ") {
				continue
			}
			runs++
			subject := rel + ":" + strconv.Itoa(i+1)
			if !checked[subject] {
				t.Errorf("%s: %s was not verified as a transcript", subject, line)
			}
			if f := regexp.MustCompile(`--root (\S+)`).FindStringSubmatch(line); f == nil || !strings.HasPrefix(f[1], "manual/fixtures/") {
				t.Errorf("%s: %s runs bookgen on no fixture book of manual/fixtures/", subject, line)
			} else if _, err := os.Stat(filepath.Join(root, f[1])); err != nil {
				t.Errorf("%s: %v", subject, err)
			}
		}
	}
	if runs < 5 {
		t.Errorf("the manual runs bookgen in %d transcripts; want one at least for each fixture book", runs)
	}
	for _, ch := range res.Book.Chapters {
		if _, err := os.Stat(filepath.Join(opt.Out, htmlPath(ch.Path))); err != nil {
			t.Errorf("manual: %v", err)
		}
	}
}
