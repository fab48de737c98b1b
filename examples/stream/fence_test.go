package stream

import (
	"bytes"
	"cmp"
	"os"
	"strings"
	"testing"
)

// plain is an append without producer headers.
func plain(name, data string) Command {
	return Command{Op: OpAppend, Stream: name, Now: t0, ContentType: "text/plain", Messages: [][]byte{[]byte(data)}}
}

// closeOnly is a close without producer headers (an empty append with
// Stream-Closed).
func closeOnly(name string) Command {
	return Command{Op: OpAppend, Stream: name, Now: t0, Close: true}
}

func createFence(name, fence string) Command {
	c := create(name, "text/plain")
	c.Fence = fence
	return c
}

func snap(t *testing.T, st *State) []byte {
	t.Helper()
	m := NewMachine()
	m.st = st
	b, err := m.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFenceRequiredRefusesHeaderless: after writer A (producer p, epoch 1)
// is replaced by writer B's claim (epoch 2), an append without producer
// headers is refused with ProducerRequired on a stream created with
// Stream-Fence: required, and changes nothing; on a stream created without
// it the same append is applied. A close without producer headers is
// refused the same way, and B's own appends go on.
// Reference: chapter "The epoch-fenced stream", section "What the fence
// covers".
func TestFenceRequiredRefusesHeaderless(t *testing.T) {
	for _, tc := range []struct {
		fence string
		want  Outcome // of the header-less append and of the header-less close
		close Outcome
	}{
		{FenceRequired, ProducerRequired, ProducerRequired},
		{"", Appended, ClosedNow},
		{FenceNone, Appended, ClosedNow},
	} {
		t.Run("fence="+cmp.Or(tc.fence, "absent"), func(t *testing.T) {
			st := NewState()
			for _, c := range []Command{createFence("s", tc.fence),
				appendP("s", "p", 1, 0, "a0 "), appendP("s", "p", 1, 1, "a1 "),
				appendP("s", "p", 2, 0, "b0 ")} {
				if r := st.Apply(c); r.Err() != nil {
					t.Fatalf("setup %s: %v", c.Op, r.Err())
				}
			}
			before := snap(t, st)
			r := st.Apply(plain("s", "intruder "))
			if r.Outcome != tc.want {
				t.Fatalf("header-less append after B's claim: %s (%s), want %s", r.Outcome, r.Message, tc.want)
			}
			if tc.want == ProducerRequired {
				if !strings.Contains(r.Message, `stream "s"`) {
					t.Errorf("refusal %q does not name the stream", r.Message)
				}
				if after := snap(t, st); !bytes.Equal(before, after) {
					t.Fatalf("a refused append changed the state:\n%s\n%s", before, after)
				}
				if got := string(readAll(t, st, "s")); got != "a0 a1 b0 " {
					t.Errorf("stream holds %q after the refusal", got)
				}
			} else if got := string(readAll(t, st, "s")); got != "a0 a1 b0 intruder " {
				t.Errorf("stream holds %q, want the header-less append applied", got)
			}
			before = snap(t, st)
			if r := st.Apply(closeOnly("s")); r.Outcome != tc.close {
				t.Fatalf("header-less close: %s (%s), want %s", r.Outcome, r.Message, tc.close)
			} else if r.Outcome == ProducerRequired && !bytes.Equal(before, snap(t, st)) {
				t.Fatal("a refused close changed the state")
			}
			if tc.close == ProducerRequired {
				if r := st.Apply(appendP("s", "p", 2, 1, "b1 ")); r.Outcome != Appended {
					t.Errorf("B's next append: %s (%s), want appended", r.Outcome, r.Message)
				}
				if r := st.Apply(appendP("s", "p", 1, 2, "a2 ")); r.Outcome != EpochFenced {
					t.Errorf("A's next append: %s (%s), want epoch-closed", r.Outcome, r.Message)
				}
			}
		})
	}
}

// TestFenceRequiredBeforeAndAfterProducers: on a fence-required stream an
// append without producer headers is applied while the stream holds no
// producer state (before the first producer append, and after OpSweep
// forgot every producer), and refused from the first producer append on.
// On a closed stream the closed stream's answers come first: a header-less
// close is idempotent, a header-less append is refused as closed.
func TestFenceRequiredBeforeAndAfterProducers(t *testing.T) {
	st := NewState()
	steps := []struct {
		name string
		c    Command
		want Outcome
	}{
		{"create", createFence("s", FenceRequired), Created},
		{"header-less, no producer yet", plain("s", "init "), Appended},
		{"first producer append", appendP("s", "p", 1, 0, "a "), Appended},
		{"header-less after it", plain("s", "x "), ProducerRequired},
		{"producers forgotten", Command{Op: OpSweep, Now: t0 + 10e9, ProducerTTL: 5e9}, Swept},
		{"header-less, producers forgotten", plain("s", "late "), Appended},
		{"producer claims again", appendP("s", "p", 2, 0, "b "), Appended},
		{"header-less after the claim", plain("s", "y "), ProducerRequired},
		{"producer closes", Command{Op: OpAppend, Stream: "s", Now: t0, Close: true, Producer: &Producer{ID: "p", Epoch: 2, Seq: 1}}, ClosedNow},
		{"header-less close of the closed stream", closeOnly("s"), ClosedNow},
		{"header-less append to the closed stream", plain("s", "z "), StreamClosed},
	}
	for _, s := range steps {
		if r := st.Apply(s.c); r.Outcome != s.want {
			t.Fatalf("%s: %s (%s), want %s", s.name, r.Outcome, r.Message, s.want)
		}
	}
	if got := string(readAll(t, st, "s")); got != "init a late b " {
		t.Errorf("stream holds %q, want %q", got, "init a late b ")
	}
}

// TestFenceModeIsConfiguration: the fence mode is part of a stream's
// configuration. A create of an existing stream with another mode is
// refused with ConfigConflict (and one with the same mode answers Exists);
// an unknown mode is refused with BadRequest and creates nothing; a fork
// takes its source's mode unless it names one. Answers and Stat report the
// mode.
// Reference: PROTOCOL.md 5.1 (a create with a different configuration is
// 409).
func TestFenceModeIsConfiguration(t *testing.T) {
	m := NewMachine()
	fork := func(name, from, fence string) Command {
		return Command{Op: OpCreate, Stream: name, Now: t0, ForkFrom: from, ForkOffset: -1, Fence: fence}
	}
	steps := []struct {
		name      string
		c         Command
		want      Outcome
		wantFence string // of the answer, when accepted
	}{
		{"create fenced", createFence("f", FenceRequired), Created, FenceRequired},
		{"again, fenced", createFence("f", FenceRequired), Exists, FenceRequired},
		{"again, no mode", createFence("f", ""), ConfigConflict, ""},
		{"again, mode none", createFence("f", FenceNone), ConfigConflict, ""},
		{"create plain", createFence("p", ""), Created, ""},
		{"plain again, mode none", createFence("p", FenceNone), Exists, ""},
		{"plain again, fenced", createFence("p", FenceRequired), ConfigConflict, ""},
		{"unknown mode", createFence("u", "maybe"), BadRequest, ""},
		{"fork of fenced inherits", fork("ff", "f", ""), Created, FenceRequired},
		{"fork again, no mode", fork("ff", "f", ""), Exists, FenceRequired},
		{"fork again, mode none", fork("ff", "f", FenceNone), ConfigConflict, ""},
		{"fork of fenced, mode none", fork("fn", "f", FenceNone), Created, ""},
		{"fork of plain, fenced", fork("pf", "p", FenceRequired), Created, FenceRequired},
		{"fork of plain inherits", fork("pp", "p", ""), Created, ""},
	}
	for _, s := range steps {
		r := m.ApplyCommand(s.c)
		if r.Outcome != s.want {
			t.Fatalf("%s: %s (%s), want %s", s.name, r.Outcome, r.Message, s.want)
		}
		if r.Err() == nil && r.Fence != s.wantFence {
			t.Errorf("%s: answer's fence %q, want %q", s.name, r.Fence, s.wantFence)
		}
		if r.Err() == nil {
			if info, _ := m.Stat(s.c.Stream, t0); info.Fence != s.wantFence {
				t.Errorf("%s: Stat's fence %q, want %q", s.name, info.Fence, s.wantFence)
			}
		}
	}
	if _, o := m.Stat("u", t0); o != NotFound {
		t.Errorf("a create with an unknown mode left stream u: %s", o)
	}
}

// TestSnapshotKeepsFence: a fence-required stream keeps its mode through
// the streamed snapshot (version 2) and the JSON one, and still refuses a
// header-less append after the restore.
// Reference: Raft §7 (a snapshot replaces a prefix of the log exactly).
func TestSnapshotKeepsFence(t *testing.T) {
	m := snapshotFixture(t, 64)
	for _, c := range []Command{createFence("fenced", FenceRequired), appendP("fenced", "p", 1, 0, "a"),
		{Op: OpCreate, Stream: "fenced-fork", Now: t0, ForkFrom: "fenced", ForkOffset: -1}} {
		if r := m.ApplyCommand(c); r.Err() != nil {
			t.Fatal(r.Err())
		}
	}
	want, _ := m.Snapshot()
	var b bytes.Buffer
	if err := m.WriteSnapshot(&b); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b.Bytes(), []byte(snapMagic)) {
		t.Fatalf("snapshot starts with %q, want %q", b.Bytes()[:4], snapMagic)
	}
	for name, data := range map[string][]byte{"streamed": b.Bytes(), "JSON": want} {
		r := NewMachine()
		if err := r.ReadSnapshot(bytes.NewReader(data)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, _ := r.Snapshot(); !bytes.Equal(got, want) {
			t.Errorf("%s: restored state differs:\n got %.300s\nwant %.300s", name, got, want)
		}
		for _, s := range []string{"fenced", "fenced-fork"} {
			if info, _ := r.Stat(s, t0); info.Fence != FenceRequired {
				t.Errorf("%s: stream %s restored with fence %q", name, s, info.Fence)
			}
		}
		if res := r.ApplyCommand(plain("fenced", "x")); res.Outcome != ProducerRequired {
			t.Errorf("%s: header-less append after the restore: %s, want %s", name, res.Outcome, ProducerRequired)
		}
	}
}

// TestSnapshotVersion1StillReads: testdata/snapshot-dss1.bin was written by
// the version 1 format (before fence modes) from snapshotFixture(t, 64); it
// still reads, into the state those commands make today (no stream fenced),
// and is written back in version 2, which reads back the same.
func TestSnapshotVersion1StillReads(t *testing.T) {
	old, err := os.ReadFile("testdata/snapshot-dss1.bin")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(old, []byte(snapMagicV1)) {
		t.Fatalf("fixture starts with %q, want %q", old[:4], snapMagicV1)
	}
	want, _ := snapshotFixture(t, 64).Snapshot()
	r := NewMachine()
	if err := r.ReadSnapshot(bytes.NewReader(old)); err != nil {
		t.Fatalf("version 1 snapshot: %v", err)
	}
	if got, _ := r.Snapshot(); !bytes.Equal(got, want) {
		t.Fatalf("version 1 snapshot read differs:\n got %.300s\nwant %.300s", got, want)
	}
	var b bytes.Buffer
	if err := r.WriteSnapshot(&b); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b.Bytes(), []byte(snapMagic)) || bytes.Equal(b.Bytes(), old) {
		t.Fatalf("rewritten snapshot is not version 2")
	}
	r2 := NewMachine()
	if err := r2.ReadSnapshot(&b); err != nil {
		t.Fatal(err)
	}
	if got, _ := r2.Snapshot(); !bytes.Equal(got, want) {
		t.Error("version 2 rewrite of a version 1 snapshot reads back differently")
	}
	// A version 1 snapshot has no fence field: read as version 2 it is
	// malformed, so the marker is what tells them apart.
	if err := NewMachine().ReadSnapshot(bytes.NewReader(append([]byte(snapMagic), old[4:]...))); err == nil {
		t.Error("a version 1 body under the version 2 marker was accepted")
	}
}
