package verify

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// countingRead hashes like readFileHash and counts its calls.
func countingRead(n *int) func(string) (string, bool) {
	return func(p string) (string, bool) {
		*n++
		return readFileHash(p)
	}
}

func TestStampMemoRereadsOnlyWhatChanged(t *testing.T) {
	m := newStampMemo[string]()
	m.window = 50 * time.Millisecond
	p := filepath.Join(t.TempDir(), "a.go")
	old := time.Now().Add(-time.Hour)
	write := func(s string, mtime time.Time) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	reads := 0
	read := countingRead(&reads)

	write("package a // 1", old)
	time.Sleep(60 * time.Millisecond) // past the change time's racy window
	h1 := m.get(p, read)
	if got := m.get(p, read); got != h1 || reads != 1 {
		t.Fatalf("second hash of an unchanged file: %s after %d reads, want %s after 1", got, reads, h1)
	}

	// Same size, modification time set back: on Linux the change time
	// still moves, so the new content is read.
	if runtime.GOOS == "linux" {
		write("package a // 2", old)
		if got := m.get(p, read); got == h1 {
			t.Error("a rewrite that keeps size and modification time got the old hash")
		}
	}

	// A file written just now is not remembered: a second write within
	// the timestamp granularity could leave its stamp as it is.
	write("package a // 3", time.Now())
	h3 := m.get(p, read)
	m.mu.Lock()
	e, ok := m.m[p]
	m.mu.Unlock()
	if ok && e.v == h3 {
		t.Error("a file written within the racy window was remembered")
	}
	time.Sleep(60 * time.Millisecond)
	before := reads
	m.get(p, read)
	m.get(p, read)
	if reads != before+1 {
		t.Errorf("after the racy window: %d reads for two hashes, want 1", reads-before)
	}

	// A missing file hashes to "-", and is not remembered as such.
	os.Remove(p)
	if got := m.get(p, read); got != "-" {
		t.Errorf("missing file: %q, want -", got)
	}
	write("package a // 5", old)
	if got := m.get(p, read); got == "-" {
		t.Error("a file created after it was missing still hashes as missing")
	}
}

func TestStampMemoDirectoryListing(t *testing.T) {
	m := newStampMemo[string]()
	m.window = 50 * time.Millisecond
	d := t.TempDir()
	old := time.Now().Add(-time.Hour)
	os.WriteFile(filepath.Join(d, "a.go"), nil, 0o644)
	os.Chtimes(d, old, old)
	time.Sleep(60 * time.Millisecond)
	h1 := m.get(d, readDirHash)
	os.WriteFile(filepath.Join(d, "b.go"), nil, 0o644)
	os.Chtimes(d, old, old) // the listing changed; the mtime is put back
	if runtime.GOOS == "linux" && m.get(d, readDirHash) == h1 {
		t.Error("a file added to a directory is not seen")
	}
}

// shortRacyWindow makes the memos remember what was read 50 ms after its
// last change, for the test's duration.
func shortRacyWindow(t *testing.T) {
	for _, w := range []*time.Duration{&fileHashes.window, &dirHashes.window, &entries.window, &testFiles.window} {
		old := *w
		*w = 50 * time.Millisecond
		t.Cleanup(func() { *w = old })
	}
}

// TestCacheNoticesEditsToRememberedFiles: once the memos remember a
// book's files, an edit that keeps a file's size still reruns the checks
// that depend on it, and a prose edit still reruns none.
func TestCacheNoticesEditsToRememberedFiles(t *testing.T) {
	shortRacyWindow(t)
	root := fixture(t, passingChapter, nil)
	rec := &recorder{}
	opt := Options{exec: rec.exec}
	if _, err := verifyRoot(t, root, opt); err != nil {
		t.Fatal(err)
	}
	time.Sleep(60 * time.Millisecond)
	rep, err := verifyRoot(t, root, opt)
	if err != nil || len(uncached(rep)) != 0 {
		t.Fatalf("second run: ran %q, err %v; want everything cached", uncached(rep), err)
	}
	greet := filepath.Join(root, "examples", "greet", "greet.go")
	fileHashes.mu.Lock()
	_, remembered := fileHashes.m[greet]
	fileHashes.mu.Unlock()
	if !remembered {
		t.Fatal("the memo does not remember examples/greet/greet.go: the test would not test it")
	}

	src := readFile(t, root, "examples/greet/greet.go")
	edited := strings.Replace(src, "greets name", "greets nime", 1)
	if edited == src || len(edited) != len(src) {
		t.Fatal("the edit must change the file and keep its size")
	}
	writeFile(t, root, "examples/greet/greet.go", edited)
	rep, err = verifyRoot(t, root, opt)
	if err != nil {
		t.Fatal(err)
	}
	if got := uncached(rep); !slices.Contains(got, "vet ./examples/greet") || slices.Contains(got, "vet ./examples/other") {
		t.Errorf("after a same-size edit of greet.go ran %q, want greet's checks and not other's", got)
	}
}
