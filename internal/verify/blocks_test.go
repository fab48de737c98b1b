package verify

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/expand"
	"github.com/ownership-book/ownership/internal/markdown"
)

func TestIsWholeFile(t *testing.T) {
	tests := []struct {
		src  string
		want bool
	}{
		{"package main", true},
		{"\n// Command x does y.\n//go:build linux\n\npackage main\n", true},
		{"/* a\nb */ package p", true},
		{"/* package p */\nx := 1", false},
		{"x := 1\npackage p", false},
		{"packages := 1", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := isWholeFile(strings.Split(tt.src, "\n")); got != tt.want {
			t.Errorf("isWholeFile(%q) = %v, want %v", tt.src, got, tt.want)
		}
	}
}

func TestCheckFragment(t *testing.T) {
	ch := &book.Item{Path: "ch.md"}
	// The doc's line 10 came from line 40 of the chapter, and so on.
	d := &expand.Doc{Chapter: ch}
	for i := 1; i <= 20; i++ {
		d.Origins = append(d.Origins, expand.Origin{File: "book/ch.md", Line: i + 30})
	}
	block := func(src string) markdown.Block {
		b := markdown.Block{Lang: "go", Line: 9}
		for i, l := range strings.Split(src, "\n") {
			b.Lines = append(b.Lines, l)
			b.LineNos = append(b.LineNos, 10+i)
		}
		return b
	}
	for _, ok := range []string{
		"type Epoch uint64\n\nfunc (e Epoch) Next() Epoch { return e + 1 }",
		"if token < fence {\n\treturn ErrStale\n}",
		"x := 1\ny := x + 1",
		"import \"fmt\"\n\nvar _ = fmt.Sprint",
		"a.Epoch() > b.Epoch()",
		"// just a comment",
	} {
		if err := checkFragment(d, block(ok)); err != nil {
			t.Errorf("checkFragment(%q) = %v, want nil", ok, err)
		}
	}
	err := checkFragment(d, block("x := 1\ny := (\nz := 3"))
	if err == nil || err.File != "book/ch.md" || err.Line != 42 {
		t.Fatalf("err = %v, want an error at book/ch.md:42 (block line 3)", err)
	}
	err = checkFragment(d, block("func f() {\n\treturn 1 +\n}"))
	if err == nil || err.Line != 42 || !strings.Contains(err.Msg, "does not parse") {
		t.Fatalf("err = %v, want an error at book/ch.md:42", err)
	}
}

func TestExamplePackages(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{
		"examples/a/a.go", "examples/a/z.go", "examples/a/sub/s.go", "examples/a/testdata/t.go",
		"examples/_skip/x.go", "examples/.hidden/x.go", "examples/nested/go.mod", "examples/nested/n.go",
		"examples/onlytests/x_test.go", "examples/docs/README.md",
	} {
		writeFile(t, root, f, "package x\n")
	}
	got, err := examplePackages(root)
	want := []string{"./examples/a", "./examples/a/sub", "./examples/onlytests"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("examplePackages = %q, %v; want %q", got, err, want)
	}
	if got, err := examplePackages(t.TempDir()); err != nil || got != nil {
		t.Errorf("without examples/: %q, %v", got, err)
	}
}

func TestFmtDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{60 * time.Second: "60s", 4000 * time.Millisecond: "4s", 1500 * time.Millisecond: "1.5s", 10 * time.Minute: "600s"} {
		if got := fmtDuration(d); got != want {
			t.Errorf("fmtDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
