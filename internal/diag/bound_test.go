package diag

import (
	"strings"
	"testing"
)

// TestErrorOutputIsBounded checks that a problem whose detail is one
// enormous line, or very many lines, prints a bounded text that says how
// much was cut, and that a cut never splits a UTF-8 character.
func TestErrorOutputIsBounded(t *testing.T) {
	long := strings.Repeat("é", 1_200_000) // 2.4 MB on one line
	e := &Error{File: "book/ch.md", Line: 3, Msg: "$ go run ./x: timeout after 2s " + long, Detail: long + "\n" + strings.Repeat("line\n", 100_000)}
	got := e.Error()
	if len(got) > 4*MaxLineBytes+MaxDetailLines*(MaxLineBytes+8) || len(got) > 64<<10 {
		t.Errorf("Error() is %d bytes", len(got))
	}
	if !strings.HasPrefix(got, "book/ch.md:3: $ go run ./x: timeout after 2s ") {
		t.Errorf("Error() starts %q", got[:80])
	}
	for _, want := range []string{"more bytes on this line)", "\n    … (99801 more lines)"} {
		if !strings.Contains(got, want) {
			t.Errorf("Error() lacks %q", want)
		}
	}
	if !strings.Contains(got, "… (2399000 more bytes on this line)") {
		t.Errorf("the detail line's cut is not counted exactly:\n%.300s", got[strings.Index(got, "\n"):])
	}
	if !strings.ContainsRune(got, 'é') || strings.ContainsRune(got, '\uFFFD') || !isValidUTF8(got) {
		t.Error("a cut split a UTF-8 character")
	}
	short := &Error{File: "a", Line: 1, Msg: "m", Detail: "x\ny"}
	if short.Error() != "a:1: m\n    x\n    y" {
		t.Errorf("a short problem changed: %q", short.Error())
	}
}

func isValidUTF8(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
