package markdown

import (
	"fmt"
	"testing"
)

func TestMutantTarget(t *testing.T) {
	for _, c := range []struct {
		ch, dest       string
		dir, pkg, name string
		ok             bool
	}{
		{"book/ch.md", "../examples/x/testdata/mutants/m/", "examples/x/testdata/mutants/m", "examples/x", "m", true},
		{"book/ch.md", "../examples/x/y/testdata/mutants/m", "examples/x/y/testdata/mutants/m", "examples/x/y", "m", true},
		{"book/ch.md", "../examples/x/testdata/mutants/m/x.go", "", "", "", false}, // a file, not the folder
		{"book/ch.md", "../examples/x/testdata/mutants/", "", "", "", false},       // no name
		{"book/ch.md", "../examples/x/testdata/mutants/m/#a", "", "", "", false},   // a fragment
		{"book/ch.md", "../internal/x/testdata/mutants/m/", "", "", "", false},     // not under examples/
		{"book/ch.md", "https://example.com/examples/x/testdata/mutants/m/", "", "", "", false},
	} {
		dir, pkg, name, ok := MutantTarget(c.ch, c.dest)
		if dir != c.dir || pkg != c.pkg || name != c.name || ok != c.ok {
			t.Errorf("MutantTarget(%q, %q) = %q, %q, %q, %v; want %q, %q, %q, %v", c.ch, c.dest, dir, pkg, name, ok, c.dir, c.pkg, c.name, c.ok)
		}
	}
}

// TestClaimLinksAttachMutants: a mutant link belongs to the claim link
// before it in the same paragraph, list item or table row; elsewhere it is
// an orphan.
func TestClaimLinksAttachMutants(t *testing.T) {
	src := "# T\n\n" +
		"A [TestA](../examples/x/x_test.go#TestA) kills [m1](../examples/x/testdata/mutants/m1/)\nand [m2](../examples/x/testdata/mutants/m2/).\n\n" +
		"[m3](../examples/x/testdata/mutants/m3/) alone.\n\n" +
		"- [TestB](../examples/x/x_test.go#TestB)\n- [m4](../examples/x/testdata/mutants/m4/)\n\n" +
		"| claim | check |\n|---|---|\n| c | [TestC](../examples/x/x_test.go#TestC) |\n| d | [m5](../examples/x/testdata/mutants/m5/) |\n" +
		"| e | [TestD](../examples/x/x_test.go#TestD) [m6](../examples/x/testdata/mutants/m6/) |\n"
	var got []string
	for _, l := range ClaimLinks("book/ch.md", []byte(src)) {
		s := l.Func
		if l.Orphan != nil {
			s = "orphan " + l.Orphan.Dir
		}
		for _, m := range l.Mutants {
			s += fmt.Sprintf(" %s@%d", m.Dir, m.Line)
		}
		got = append(got, s)
	}
	want := []string{
		"TestA examples/x/testdata/mutants/m1@3 examples/x/testdata/mutants/m2@4",
		"orphan examples/x/testdata/mutants/m3",
		"TestB",
		"orphan examples/x/testdata/mutants/m4",
		"TestC",
		"orphan examples/x/testdata/mutants/m5",
		"TestD examples/x/testdata/mutants/m6@15",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ClaimLinks:\n%q\nwant\n%q", got, want)
	}
}
