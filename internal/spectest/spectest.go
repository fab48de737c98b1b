// Package spectest reads bookgen's spec-as-data test cases: each rule a
// stage follows (most of them mdBook's) is one txtar archive under the
// stage's testdata/, whose comment states the rule and names the mdBook
// documentation section or source it follows, and whose files hold the
// input and the expected result. Each stage runs its cases with one table
// test, as goldmark runs the CommonMark spec's examples.
//
// File names inside an archive are the stage's to define; by convention,
// names with a slash or a dot are files to write into a temporary
// repository (book/SUMMARY.md, book/ch.md, examples/x/x.go) and the others
// are expectations (want, error, "want ch.md").
package spectest

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// Case is one rule.
type Case struct {
	Name    string            // the archive's file name without .txtar
	Comment string            // the rule and its source
	Files   map[string]string // section name to content
	Order   []string          // section names in archive order
}

// File returns section name, failing the test when there is none.
func (c *Case) File(t testing.TB, name string) string {
	t.Helper()
	s, ok := c.Files[name]
	if !ok {
		t.Fatalf("%s: no -- %s -- section", c.Name, name)
	}
	return s
}

// Load reads every *.txtar of dir, sorted by name. A directory without
// cases, an archive that does not parse and one whose comment does not
// name mdBook (the rule's source) fail the test, so that a renamed folder or
// a case without its reference cannot pass unnoticed.
func Load(t testing.TB, dir string) []*Case {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no cases in %s (%v)", dir, err)
	}
	sort.Strings(names)
	var out []*Case
	for _, n := range names {
		a, err := txtar.ParseFile(n)
		if err != nil {
			t.Fatal(err)
		}
		c := &Case{Name: strings.TrimSuffix(filepath.Base(n), ".txtar"), Comment: strings.TrimSpace(string(a.Comment)), Files: map[string]string{}}
		if !strings.Contains(c.Comment, "mdBook") {
			t.Errorf("%s: the comment must name the mdBook rule or documentation section the case follows", n)
		}
		for _, f := range a.Files {
			if _, dup := c.Files[f.Name]; dup {
				t.Errorf("%s: section %q twice", n, f.Name)
			}
			c.Files[f.Name] = string(f.Data)
			c.Order = append(c.Order, f.Name)
		}
		out = append(out, c)
	}
	return out
}

// WriteTree writes the case's sections whose names hold a "/" (repository
// files such as book/ch.md; "./book.toml" for a file of the root itself)
// under root, and returns their names.
func (c *Case) WriteTree(t testing.TB, root string) []string {
	t.Helper()
	var names []string
	for _, name := range c.Order {
		if !strings.Contains(name, "/") {
			continue
		}
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c.Files[name]), 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	return names
}

// Fold collapses runs of white space to one space and trims, so that an
// expected HTML fragment can be written over several lines.
func Fold(s string) string { return strings.Join(strings.Fields(s), " ") }
