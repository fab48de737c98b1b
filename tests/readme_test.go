package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeIsADoor checks README.md as a newcomer reads it: under 8 KB;
// it links the published book and the manual; its console blocks are the
// two commands for a fresh machine, one that builds and serves the book
// (bookgen serve) and one that runs every test (go test ./...), and .ci/run
// runs that test command; every relative link names a file or folder of
// the repository; and both licence files it names exist.
func TestReadmeIsADoor(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	if len(data) >= 8<<10 {
		t.Errorf("README.md is %d bytes; the door stays under 8 KB (the rest belongs in the manual)", len(data))
	}
	for _, url := range []string{"https://ownership-book.netlify.app/", "https://ownership-book.netlify.app/manual/"} {
		if !strings.Contains(s, "<"+url+">") {
			t.Errorf("README.md does not link %s", url)
		}
	}
	var cmds []string
	for _, m := range regexp.MustCompile("(?s)```console\n(.*?)```").FindAllStringSubmatch(s, -1) {
		for _, l := range strings.Split(m[1], "\n") {
			if c, ok := strings.CutPrefix(l, "$ "); ok {
				cmds = append(cmds, c)
			}
		}
	}
	if len(cmds) != 2 || cmds[0] != "go run ./cmd/bookgen serve" || cmds[1] != "go test ./..." {
		t.Errorf("README.md's commands are %q; want the two for a fresh machine, serve and go test ./...", cmds)
	}
	ci, err := os.ReadFile("../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^[A-Z_=0-9 ]*go test [^\n]*\./\.\.\.$`).Match(ci) {
		t.Errorf(".ci/run runs no go test ./...: CI does not run the README's test command")
	}
	for _, m := range regexp.MustCompile(`\]\(([^)#]+)\)`).FindAllStringSubmatch(s, -1) {
		target := m[1]
		if strings.Contains(target, "://") {
			continue
		}
		if _, err := os.Stat(filepath.Join("..", target)); err != nil {
			t.Errorf("README.md links %s: %v", target, err)
		}
	}
	for _, f := range []string{"LICENSE", "LICENSE-text"} {
		if !strings.Contains(s, "("+f+")") {
			t.Errorf("README.md does not link %s", f)
		}
	}
}
