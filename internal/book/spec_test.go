package book

import (
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// specCase is one rule of a spec-as-data directory: a txtar archive whose
// comment names the rule and where it comes from, and whose files are the
// input and the expected result.
type specCase struct {
	name    string
	comment string
	files   map[string]string
}

func (c specCase) file(t *testing.T, name string) string {
	t.Helper()
	s, ok := c.files[name]
	if !ok {
		t.Fatalf("%s: no -- %s -- section", c.name, name)
	}
	return s
}

// specCases reads every *.txtar of dir; a directory without cases fails, so
// that a renamed folder cannot turn the test into a no-op.
func specCases(t *testing.T, dir string) []specCase {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no cases in %s (%v)", dir, err)
	}
	var out []specCase
	for _, n := range names {
		a, err := txtar.ParseFile(n)
		if err != nil {
			t.Fatal(err)
		}
		c := specCase{name: strings.TrimSuffix(filepath.Base(n), ".txtar"), comment: strings.TrimSpace(string(a.Comment)), files: map[string]string{}}
		if !strings.Contains(c.comment, "mdBook") {
			t.Errorf("%s: the comment must name the mdBook rule or documentation section the case follows", n)
		}
		for _, f := range a.Files {
			c.files[f.Name] = string(f.Data)
		}
		out = append(out, c)
	}
	return out
}
