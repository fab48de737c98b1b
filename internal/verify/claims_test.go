package verify

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/expand"
)

// TestFindClaims resolves claim links against a package written for the
// test: lines, kinds, ids in page order, the claim's text (title, sentence,
// or a table row's first cell) and the origin of each link.
func TestFindClaims(t *testing.T) {
	root := t.TempDir()
	write := func(rel, s string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("examples/x/x_test.go", `package x

import (
	"fmt"
	tt "testing"
)

// TestA is documented.
func TestA(t *tt.T) {
	t.Log("a")
}

func FuzzB(f *tt.F) { f.Add(1) }

func ExampleC() {
	fmt.Println("c")
	// Output: c
}

func TestBad(x int) {}

func Testlower(t *tt.T) {}
`)
	md := strings.Join([]string{
		"# Ch",
		"",
		"First sentence. Epochs only grow, as [TestA](../examples/x/x_test.go#TestA)",
		"shows. Next sentence.",
		"",
		"- Fuzzed: [FuzzB](../examples/x/x_test.go#FuzzB \"decoding never panics\")",
		"",
		"| Invariant | Check |",
		"| --- | --- |",
		"| One owner per epoch | [C](../examples/x/x_test.go#ExampleC), [again](../examples/x/x_test.go#TestA) |",
		"",
		"[bad](../examples/x/x_test.go#TestBad) [lower](../examples/x/x_test.go#Testlower)",
		"[none](../examples/x/x_test.go#TestNone) [typo](../examples/x/x_test.go#FuzB) [gone](../examples/x/gone_test.go#TestA)",
		"## A heading [TestA](../examples/x/x_test.go#TestA)",
	}, "\n")
	ch := &book.Item{Title: "Chapter", Path: "ch.md"}
	d := &expand.Doc{Chapter: ch, Markdown: []byte(md)}
	for i := range strings.Split(md, "\n") {
		d.Origins = append(d.Origins, expand.Origin{File: "book/ch.md", Line: i + 1})
	}
	claims, errs := FindClaims(root, d)
	var got []string
	for _, c := range claims {
		got = append(got, fmt.Sprintf("%d %s %s %s %d-%d %s %q", c.Line, c.ID, c.Kind, c.Package, c.StartLine, c.EndLine, c.Chapter, c.Text))
	}
	want := []string{
		`3 check-TestA test ./examples/x 9-11 ch.md "Epochs only grow, as TestA shows."`,
		`6 check-FuzzB fuzz ./examples/x 13-13 ch.md "decoding never panics"`,
		`10 check-ExampleC example ./examples/x 15-18 ch.md "One owner per epoch"`,
		`10 check-TestA-2 test ./examples/x 9-11 ch.md "One owner per epoch"`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("claims:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg))
	}
	wantErrs := []string{
		`book/ch.md:12: claim "../examples/x/x_test.go#TestBad": TestBad in examples/x/x_test.go is not a test: a test is func TestBad(t *testing.T)`,
		`book/ch.md:12: claim "../examples/x/x_test.go#Testlower": Testlower in examples/x/x_test.go is not a check: a claim names a Test, Fuzz or Example function`,
		`book/ch.md:13: claim "../examples/x/x_test.go#TestNone": examples/x/x_test.go has no function TestNone (its checks: ExampleC, FuzzB, TestA, TestBad)`,
		`book/ch.md:13: claim "../examples/x/x_test.go#FuzB": examples/x/x_test.go has no function FuzB; did you mean FuzzB?`,
		`book/ch.md:13: claim "../examples/x/gone_test.go#TestA" names examples/x/gone_test.go: the file does not exist`,
		`book/ch.md:14: claim "../examples/x/x_test.go#TestA" is in a heading; name the check in the section's text, where the claim is made`,
	}
	if !reflect.DeepEqual(msgs, wantErrs) {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(msgs, "\n"), strings.Join(wantErrs, "\n"))
	}
}

func TestReadTestEvents(t *testing.T) {
	out := strings.Join([]string{
		`# example.com/x`,
		`{"Action":"run","Test":"TestA"}`,
		`{"Action":"output","Test":"TestA","Output":"=== RUN   TestA\n"}`,
		`{"Action":"run","Test":"TestA/sub"}`,
		`{"Action":"output","Test":"TestA/sub","Output":"    x_test.go:9: boom\n"}`,
		`{"Action":"fail","Test":"TestA/sub"}`,
		`{"Action":"fail","Test":"TestA"}`,
		`{"Action":"skip","Test":"TestB"}`,
		`{"Action":"output","Test":"ExampleC","Output":"=== RUN   ExampleC\n"}`,
		`{"Action":"output","Test":"ExampleC","Output":"    x_test.go:20: a log line of a passing test\n"}`,
		`{"Action":"pass","Test":"ExampleC"}`,
		`{"Action":"pass","Test":"FuzzD/seed#0"}`,
		`{"Action":"output","Output":"FAIL\n"}`,
	}, "\n")
	status, outputs, text := readTestEvents([]byte(out))
	if want := map[string]string{"TestA": "fail", "TestB": "skip", "ExampleC": "pass"}; !reflect.DeepEqual(status, want) {
		t.Errorf("status = %v, want %v", status, want)
	}
	if !strings.Contains(outputs["TestA"], "x_test.go:9: boom") {
		t.Errorf("TestA's output %q lacks its subtest's", outputs["TestA"])
	}
	// What go test prints without -json: the failing test's output and
	// the package's, not the passing test's log line.
	if want := "# example.com/x\n=== RUN   TestA\n    x_test.go:9: boom\nFAIL\n"; string(text) != want {
		t.Errorf("text = %q, want %q", text, want)
	}
}

// FuzzFindClaims feeds arbitrary Markdown around claim links to
// FindClaims: it must not panic, and every claim and error it returns
// names a line of the chapter.
func FuzzFindClaims(f *testing.F) {
	root := f.TempDir()
	p := filepath.Join(root, "examples", "x", "x_test.go")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("package x\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {}\n"), 0o644); err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		"A claim. It holds ([TestA](../examples/x/x_test.go#TestA)). Next.",
		"| a | b |\n|---|---|\n| x | [TestA](../examples/x/x_test.go#TestA \"t\") |",
		"- [`TestA`](../examples/x/x_test.go#TestA)\n- [](../examples/x/x_test.go#TestB)",
		"[x](../examples/x/x_test.go#L3) [y](../examples/x/y_test.go#TestA)",
		"# [TestA](../examples/x/x_test.go#TestA)\n\n> quote. [TestA](../examples/x/x_test.go#TestA)!",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, md string) {
		d := &expand.Doc{Chapter: &book.Item{Title: "Ch", Path: "ch.md"}, Markdown: []byte(md)}
		n := strings.Count(md, "\n") + 1
		for i := range n {
			d.Origins = append(d.Origins, expand.Origin{File: "book/ch.md", Line: i + 1})
		}
		claims, errs := FindClaims(root, d)
		for _, c := range claims {
			if c.Line < 1 || c.Line > n || c.ID == "" || c.Func == "" {
				t.Errorf("claim %+v outside the chapter's %d lines", c, n)
			}
		}
		for _, e := range errs {
			if e.Line < 1 || e.Line > n {
				t.Errorf("error %v outside the chapter's %d lines", e, n)
			}
		}
	})
}

// TestSettleClaims maps each function's outcome in its package's run to
// the claim: passed, or an error at the link naming why not.
func TestSettleClaims(t *testing.T) {
	claim := func(fn, pkg string, line int) Claim {
		return Claim{File: "book/ch.md", Line: line, Func: fn, Package: pkg}
	}
	claims := []Claim{
		claim("TestPass", "./examples/x", 1),
		claim("TestFail", "./examples/x", 2),
		claim("TestSkip", "./examples/x", 3),
		claim("TestGone", "./examples/x", 4),
		claim("TestA", "./examples/y", 5),
	}
	results := []jobResult{{tests: &pkgTests{
		pkg:     "./examples/x",
		status:  map[string]string{"TestPass": "pass", "TestFail": "fail", "TestSkip": "skip"},
		outputs: map[string]string{"TestFail": "x_test.go:3: boom\n"},
	}}}
	errs := settleClaims(claims, results)
	var got []string
	for _, e := range errs {
		got = append(got, strings.TrimSpace(fmt.Sprintf("%d: %s | %s", e.Line, e.Msg, strings.TrimSpace(e.Detail))))
	}
	want := []string{
		"2: claim TestFail failed in go test ./examples/x (alone: go test -run '^TestFail$' ./examples/x) | x_test.go:3: boom",
		"3: claim TestSkip was skipped in go test ./examples/x; a skipped test checks nothing |",
		"4: claim TestGone did not run: go test ./examples/x failed before it (see that error) |",
		"5: claim TestA: go test ./examples/y was not run |",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i, c := range claims {
		if c.Passed != (i == 0) {
			t.Errorf("claim %s: Passed = %v", c.Func, c.Passed)
		}
	}
}
