package stream

import (
	"bytes"
	"testing"
)

// FuzzAppendRefusalChangesNothing applies one arbitrary append after a fixed
// history and checks the machine's promise: a refused command leaves the
// state byte for byte as it was, and an accepted one moves the producer to
// the request's (epoch, seq).
// Reference: chapter "The epoch-fenced stream", section "The HTTP surface"
// (a refusal changes nothing); PROTOCOL.md 5.2.1.
func FuzzAppendRefusalChangesNothing(f *testing.F) {
	f.Add("p", uint64(7), uint64(2), []byte("x"), false, "text/plain", "")
	f.Add("p", uint64(6), uint64(0), []byte("x"), false, "text/plain", "")
	f.Add("p", uint64(8), uint64(0), []byte{}, true, "", "")
	f.Add("q", uint64(0), uint64(3), []byte("x"), false, "application/json", "i")
	f.Fuzz(func(t *testing.T, id string, epoch, seq uint64, data []byte, closeIt bool, ct, inc string) {
		m := NewMachine()
		// The fixed history must hold, or every input is refused for a
		// missing stream and the checks below test nothing.
		for _, h := range []struct {
			c    Command
			want Outcome
		}{
			{create("s", "text/plain"), Created},
			{appendP("s", "p", 7, 0, "a"), Appended},
			{appendP("s", "p", 7, 1, "b"), Appended},
		} {
			if r := m.ApplyCommand(h.c); r.Outcome != h.want {
				t.Fatalf("history %s: %s (%s), want %s", h.c.Op, r.Outcome, r.Message, h.want)
			}
		}
		before, err := m.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		c := Command{Op: OpAppend, Stream: "s", Now: t0, ContentType: ct, Close: closeIt,
			Producer: &Producer{ID: id, Epoch: epoch, Seq: seq}, Incarnation: inc}
		if len(data) > 0 {
			c.Messages = [][]byte{data}
		}
		r := m.ApplyCommand(c)
		after, err := m.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		switch r.Outcome {
		case Appended, ClosedNow:
			p := m.st.Streams["s"].Producers[id]
			if p == nil || p.Epoch != epoch || p.LastSeq != seq {
				t.Fatalf("%s: producer state %+v, want epoch %d seq %d", r.Outcome, p, epoch, seq)
			}
		default:
			if !bytes.Equal(before, after) {
				t.Fatalf("%s (%s) changed the state", r.Outcome, r.Message)
			}
		}
	})
}

// FuzzDecodeCommand checks that arbitrary bytes never panic the machine and
// that bytes which are not a command are refused without a change.
func FuzzDecodeCommand(f *testing.F) {
	f.Add(appendP("s", "p", 1, 0, "x").Encode())
	f.Add([]byte(`{"op":"bogus"}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m := NewMachine()
		if r := m.ApplyCommand(create("s", "text/plain")); r.Outcome != Created {
			t.Fatalf("create s: %s (%s)", r.Outcome, r.Message)
		}
		before, err := m.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		r, err := DecodeResult(m.Apply(b))
		if err != nil {
			t.Fatal(err)
		}
		if _, derr := DecodeCommand(b); derr != nil {
			after, err := m.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			if r.Outcome != BadRequest || !bytes.Equal(before, after) {
				t.Fatalf("undecodable command: %s, state changed: %v", r.Outcome, !bytes.Equal(before, after))
			}
		}
	})
}
