package tests

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCheckExternalFlag runs `bookgen build --check-external` on the good
// fixture with two links to a loopback server (no test reaches the
// internet): one page answers, one is gone. Without the flag the build
// succeeds and requests nothing; with it the build fails naming the file
// and line of the broken link, and only that one.
func TestCheckExternalFlag(t *testing.T) {
	t.Parallel()
	requests := make(chan string, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests <- r.Method + " " + r.URL.Path
		if r.URL.Path != "/here" {
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	root := copyFixture(t, "good")
	intro := filepath.Join(root, "book", "intro.md")
	src, err := os.ReadFile(intro)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Count(string(src), "\n")
	add := "\nSee [this](" + srv.URL + "/here) and <" + srv.URL + "/gone>.\n"
	if err := os.WriteFile(intro, append(src, add...), 0o644); err != nil {
		t.Fatal(err)
	}
	linkLine := lines + 2

	if _, stderr, code := runBookgen(t, root, "build", "-o", filepath.Join(t.TempDir(), "a")); code != 0 {
		t.Fatalf("build without --check-external: exit %d\n%s", code, stderr)
	}
	if len(requests) != 0 {
		t.Fatalf("build without --check-external made %d requests", len(requests))
	}
	_, stderr, code := runBookgen(t, root, "build", "--check-external", "-o", filepath.Join(t.TempDir(), "b"))
	if code != 1 {
		t.Fatalf("build --check-external with a broken link: exit %d\n%s", code, stderr)
	}
	want := "book/intro.md:" + strconv.Itoa(linkLine) + ": external link " + srv.URL + "/gone: HTTP 404"
	if !strings.Contains(stderr, want) || strings.Contains(stderr, "/here") {
		t.Errorf("stderr lacks %q or names the good link:\n%s", want, stderr)
	}
	if len(requests) == 0 {
		t.Error("no request reached the server")
	}
}
