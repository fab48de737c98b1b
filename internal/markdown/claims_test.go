package markdown

import "testing"

func TestClaimTarget(t *testing.T) {
	for _, c := range []struct {
		ch, dest string
		file, fn string
		ok       bool
	}{
		{"book/ch.md", "../examples/x/x_test.go#TestA", "examples/x/x_test.go", "TestA", true},
		{"book/sub/ch.md", "../../examples/x/y/z_test.go#FuzzB", "examples/x/y/z_test.go", "FuzzB", true},
		{"book/ch.md", "../examples/x/x_test.go", "", "", false},       // no fragment: a file link
		{"book/ch.md", "../examples/x/x_test.go#L12", "", "", false},   // lines
		{"book/ch.md", "../examples/x/x_test.go#L1-L9", "", "", false}, // lines
		{"book/ch.md", "../examples/x/x.go#TestA", "", "", false},      // not a test file
		{"book/ch.md", "../internal/x/x_test.go#TestA", "", "", false}, // not under examples/
		{"book/ch.md", "https://example.com/x_test.go#TestA", "", "", false},
		{"book/ch.md", "other.md#TestA", "", "", false},
	} {
		file, fn, ok := ClaimTarget(c.ch, c.dest)
		if file != c.file || fn != c.fn || ok != c.ok {
			t.Errorf("ClaimTarget(%q, %q) = %q, %q, %v; want %q, %q, %v", c.ch, c.dest, file, fn, ok, c.file, c.fn, c.ok)
		}
	}
}
