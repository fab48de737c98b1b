package diag

import (
	"errors"
	"fmt"
	"testing"
)

func TestErrorFormat(t *testing.T) {
	tests := []struct {
		err  *Error
		want string
	}{
		{&Error{File: "book/a.md", Line: 3, Msg: "bad"}, "book/a.md:3: bad"},
		{&Error{File: "book/a.md", Msg: "bad"}, "book/a.md: bad"},
		{&Error{Msg: "bad"}, "bad"},
		{&Error{File: "book/a.md", Line: 3, Msg: "differs", Detail: "-x\n+y\n"}, "book/a.md:3: differs\n    -x\n    +y"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestAll(t *testing.T) {
	a, b := Errorf("x", 1, "a"), Errorf("y", 2, "b")
	if got := All(nil); got != nil {
		t.Errorf("All(nil) = %v", got)
	}
	if got := All(List{a, b}); len(got) != 2 || got[0] != a || got[1] != b {
		t.Errorf("All(List) = %v", got)
	}
	if got := All(fmt.Errorf("build: %w", a)); len(got) != 1 || got[0] != a {
		t.Errorf("All(wrapped) = %v", got)
	}
	if got := All(errors.New("plain")); len(got) != 1 || got[0].Msg != "plain" || got[0].File != "" {
		t.Errorf("All(plain) = %#v", got)
	}
	if (List{}).Err() != nil || (List{a}).Err() == nil {
		t.Error("List.Err: want nil only for an empty list")
	}
}
