package tests

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestExamplesMap checks examples/README.md against examples/: every
// package under examples/ has a row, a main package in the Programs table
// and any other in the Libraries table; no row names a package that does
// not exist; a program's row gives `go run ./examples/<path>` as its
// command, and names as its chapter a title of book/SUMMARY.md whose file
// mentions examples/<path>. Negative control: a program added under
// examples/ without a row fails here, naming it (notes/house.md).
func TestExamplesMap(t *testing.T) {
	data, err := os.ReadFile("../examples/README.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]map[string][]string{} // table -> package -> cells
	table := ""
	for _, line := range strings.Split(string(data), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			table = h
			rows[table] = map[string][]string{}
			continue
		}
		if !strings.HasPrefix(line, "| `") || table == "" {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows[table][strings.Trim(cells[0], "`")] = cells
	}

	// Chapters: SUMMARY title -> chapter text.
	summary, err := os.ReadFile("../book/SUMMARY.md")
	if err != nil {
		t.Fatal(err)
	}
	chapters := map[string]string{}
	for _, m := range regexp.MustCompile(`\[([^\]]+)\]\(([^)]+\.md)\)`).FindAllStringSubmatch(string(summary), -1) {
		text, err := os.ReadFile(filepath.Join("../book", m[2]))
		if err != nil {
			t.Fatal(err)
		}
		chapters[m[1]] = string(text)
	}

	found := map[string]bool{}
	err = filepath.WalkDir("../examples", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel("../examples", filepath.Dir(p))
		rel = filepath.ToSlash(rel)
		if found[rel] {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.PackageClauseOnly)
		if err != nil {
			return err
		}
		found[rel] = true
		if f.Name.Name != "main" {
			if rows["Libraries"][rel] == nil {
				t.Errorf("examples/README.md: library examples/%s has no row under ## Libraries", rel)
			}
			return nil
		}
		cells := rows["Programs"][rel]
		if cells == nil {
			t.Errorf("examples/README.md: program examples/%s has no row under ## Programs", rel)
			return nil
		}
		if len(cells) != 4 {
			t.Errorf("examples/README.md: row of %s has %d cells, want 4 (program, what, chapter, command)", rel, len(cells))
			return nil
		}
		cmd := "go run ./examples/" + rel
		if c := strings.Trim(cells[3], "`"); c != cmd && !strings.HasPrefix(c, cmd+" ") {
			t.Errorf("examples/README.md: %s's command is %s, want %s", rel, cells[3], cmd)
		}
		text, ok := chapters[cells[2]]
		switch {
		case !ok:
			t.Errorf("examples/README.md: %s's chapter %q is not a title of book/SUMMARY.md", rel, cells[2])
		case !regexp.MustCompile(`(^|[^\w/.])(\./)?` + regexp.QuoteMeta("examples/"+rel) + `([^/\w]|$)`).MatchString(text):
			t.Errorf("examples/README.md: chapter %q does not mention examples/%s", cells[2], rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for table, pkgs := range rows {
		for pkg := range pkgs {
			if !found[pkg] {
				t.Errorf("examples/README.md: ## %s names %s, which is no package under examples/", table, pkg)
			}
		}
	}
	if len(found) < 30 {
		t.Errorf("found %d packages under examples/; the walk is broken", len(found))
	}
}
