package filestamp

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestSettled: a file just written is not settled; once its newest
// timestamp is more than the window in the past it is. On Linux, setting
// the modification time back does not settle a file (its change time
// moves), and an edit that keeps size and modification time changes the
// stamp.
func TestSettled(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	st := stat(t, p)
	if st.Settled(time.Now(), 50*time.Millisecond) {
		t.Fatal("a file written just now is settled")
	}
	if !st.Settled(time.Now().Add(time.Second), 50*time.Millisecond) {
		t.Fatal("a file last changed a second before the read is not settled")
	}
	if st.Settled(time.Now().Add(time.Second), 0) {
		t.Fatal("window 0 is not RacyWindow")
	}
	if runtime.GOOS != "linux" {
		return
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	back := stat(t, p)
	if back.Settled(time.Now(), 50*time.Millisecond) {
		t.Fatal("a file whose modification time was set back an hour is settled: the change time is not looked at")
	}
	if err := os.WriteFile(p, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	if again := stat(t, p); again == back {
		t.Fatal("an edit with the same size and modification time kept the stamp")
	}
}

func stat(t *testing.T, p string) Stamp {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return Of(fi)
}
