package stream

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// snapshotFixture is a state with every feature a snapshot must keep:
// producers, a close by a producer, Stream-Seq, TTL and Expires-At, a fork
// in the middle of a chunk, a JSON fork by message sub-offset, a fork of a
// fork, a soft-deleted source, and a large stream with 100 bodiless forks.
func snapshotFixture(t *testing.T, bigSize int) *Machine {
	t.Helper()
	m := NewMachine()
	big := bytes.Repeat([]byte("b"), bigSize)
	cmds := []Command{
		create("s", "text/plain"),
		appendP("s", "p", 1, 0, "hello "),
		appendP("s", "p", 1, 1, "world"),
		{Op: OpAppend, Stream: "s", Now: t0, Close: true, Producer: &Producer{ID: "p", Epoch: 1, Seq: 2}},
		{Op: OpCreate, Stream: "ttl", Now: t0, ContentType: "text/plain", HasTTL: true, TTL: 3600},
		{Op: OpCreate, Stream: "at", Now: t0, ContentType: "text/plain", ExpiresAt: t0 + 1e12},
		{Op: OpAppend, Stream: "at", Now: t0, ContentType: "text/plain", StreamSeq: "007", Messages: [][]byte{[]byte("x")}},
		{Op: OpCreate, Stream: "mid", Now: t0, ForkFrom: "s", ForkOffset: 3},
		{Op: OpAppend, Stream: "mid", Now: t0, ContentType: "text/plain", Messages: [][]byte{[]byte("p!")}},
		{Op: OpCreate, Stream: "mid2", Now: t0, ForkFrom: "mid", ForkOffset: -1},
		{Op: OpCreate, Stream: "j", Now: t0, ContentType: "application/json", Messages: [][]byte{[]byte("1"), []byte("[2]"), []byte(`{"a":3}`)}},
		{Op: OpCreate, Stream: "jf", Now: t0, ForkFrom: "j", ForkOffset: 1, ForkSubOffset: 1},
		{Op: OpDelete, Stream: "j", Now: t0},
		{Op: OpCreate, Stream: "big", Now: t0, ContentType: "application/octet-stream", Messages: [][]byte{big}},
	}
	for _, c := range cmds {
		if r := m.ApplyCommand(c); r.Message != "" {
			t.Fatalf("%s %s: %s", c.Op, c.Stream, r.Message)
		}
	}
	for i := range 100 {
		if r := m.ApplyCommand(Command{Op: OpCreate, Stream: "f" + string(rune('A'+i/26)) + string(rune('a'+i%26)), Now: t0, ForkFrom: "big", ForkOffset: -1}); r.Outcome != Created {
			t.Fatalf("fork %d: %+v", i, r)
		}
	}
	return m
}

// TestStreamedSnapshotRoundTrip: WriteSnapshot then ReadSnapshot gives back
// the same state (compared through the JSON Snapshot), writing it again
// gives the same bytes, and the JSON form is still read by ReadSnapshot.
// Reference: Raft §7 (a snapshot replaces a prefix of the log exactly).
func TestStreamedSnapshotRoundTrip(t *testing.T) {
	m := snapshotFixture(t, 4<<10)
	want, _ := m.Snapshot()
	var b bytes.Buffer
	if err := m.WriteSnapshot(&b); err != nil {
		t.Fatal(err)
	}
	r := NewMachine()
	if err := r.ReadSnapshot(bytes.NewReader(b.Bytes())); err != nil {
		t.Fatal(err)
	}
	got, _ := r.Snapshot()
	if !bytes.Equal(got, want) {
		t.Fatalf("restored state differs:\n got %.300s\nwant %.300s", got, want)
	}
	var again bytes.Buffer
	if err := r.WriteSnapshot(&again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), b.Bytes()) {
		t.Errorf("second snapshot differs from the first (%d vs %d bytes)", again.Len(), b.Len())
	}
	j := NewMachine()
	if err := j.ReadSnapshot(bytes.NewReader(want)); err != nil {
		t.Fatalf("JSON snapshot: %v", err)
	}
	if got, _ := j.Snapshot(); !bytes.Equal(got, want) {
		t.Error("a JSON snapshot read by ReadSnapshot differs")
	}
	for _, bad := range [][]byte{b.Bytes()[:b.Len()/2], append(append([]byte(nil), b.Bytes()...), 0), []byte(snapMagic + "\xff")} {
		if err := NewMachine().ReadSnapshot(bytes.NewReader(bad)); err == nil {
			t.Errorf("a malformed snapshot of %d bytes was accepted", len(bad))
		}
	}
}

// TestForksShareBytes: 100 bodiless forks of a 1 MiB stream add a few
// bytes each to the snapshot (the source's bytes are written once), and
// after a restore every fork's bytes are the source's bytes in memory, not a
// copy. Before, the snapshot held the megabyte 101 times (134.7 MB with
// base64 and JSON, per voter) and a restore made 101 copies.
func TestForksShareBytes(t *testing.T) {
	m := snapshotFixture(t, 1<<20)
	var b bytes.Buffer
	if err := m.WriteSnapshot(&b); err != nil {
		t.Fatal(err)
	}
	if b.Len() > 1<<20+64<<10 {
		t.Errorf("snapshot of a 1 MiB stream and 100 forks: %d bytes, want about 1 MiB", b.Len())
	}
	r := NewMachine()
	if err := r.ReadSnapshot(&b); err != nil {
		t.Fatal(err)
	}
	src := r.st.Streams["big"].Chunks[0].Data
	n := 0
	for name, s := range r.st.Streams {
		if strings.HasPrefix(name, "f") && s.ForkFrom == "big" {
			n++
			if !sameBytes(s.Chunks[0].Data, src) {
				t.Fatalf("fork %s holds a copy of big's bytes after the restore", name)
			}
		}
	}
	if n != 100 {
		t.Fatalf("%d forks of big, want 100", n)
	}
	if mid := r.st.Streams["mid"]; string(mid.Chunks[0].Data) != "hel" || !sameBytes(mid.Chunks[0].Data, r.st.Streams["s"].Chunks[0].Data) {
		t.Errorf("fork mid's first chunk %q does not share s's bytes", mid.Chunks[0].Data)
	}
}

// FuzzReadSnapshot: ReadSnapshot never panics, and a snapshot it accepts
// writes back to itself.
func FuzzReadSnapshot(f *testing.F) {
	m := NewMachine()
	m.ApplyCommand(create("s", "text/plain"))
	m.ApplyCommand(appendP("s", "p", 1, 0, "abc"))
	m.ApplyCommand(Command{Op: OpCreate, Stream: "f", Now: t0, ForkFrom: "s", ForkOffset: 2})
	var b bytes.Buffer
	m.WriteSnapshot(&b)
	f.Add(b.Bytes())
	f.Add([]byte(snapMagic))
	f.Add([]byte(snapMagicV1))
	m.ApplyCommand(Command{Op: OpCreate, Stream: "fenced", Now: t0, Fence: FenceRequired})
	b.Reset()
	m.WriteSnapshot(&b)
	f.Add(b.Bytes())
	if old, err := os.ReadFile("testdata/snapshot-dss1.bin"); err == nil {
		f.Add(old)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewMachine()
		if err := r.ReadSnapshot(bytes.NewReader(data)); err != nil {
			return
		}
		var out bytes.Buffer
		if err := r.WriteSnapshot(&out); err != nil {
			t.Fatal(err)
		}
	})
}
