package stream

import (
	"bytes"
	"testing"
)

// FuzzAppendRefusalChangesNothing applies one arbitrary append after a fixed
// history and checks the machine's promise: a refused command leaves the
// state byte for byte as it was, and an accepted one moves the producer to
// the request's (epoch, seq). With fenced the stream is created with
// Stream-Fence: required, and with anon the append has no producer
// headers, which such a stream (holding producer p's state) must refuse.
// Reference: chapter "The epoch-fenced stream", section "The HTTP surface"
// (a refusal changes nothing); PROTOCOL.md 5.2.1.
func FuzzAppendRefusalChangesNothing(f *testing.F) {
	f.Add("p", uint64(7), uint64(2), []byte("x"), false, "text/plain", "", false, false)
	f.Add("p", uint64(6), uint64(0), []byte("x"), false, "text/plain", "", false, false)
	f.Add("p", uint64(8), uint64(0), []byte{}, true, "", "", false, false)
	f.Add("q", uint64(0), uint64(3), []byte("x"), false, "application/json", "i", false, false)
	f.Add("", uint64(0), uint64(0), []byte("x"), false, "text/plain", "", true, true)
	f.Add("", uint64(0), uint64(0), []byte{}, true, "", "", true, true)
	f.Add("", uint64(0), uint64(0), []byte("x"), false, "text/plain", "", false, true)
	f.Fuzz(func(t *testing.T, id string, epoch, seq uint64, data []byte, closeIt bool, ct, inc string, fenced, anon bool) {
		m := NewMachine()
		// The fixed history must hold, or every input is refused for a
		// missing stream and the checks below test nothing.
		for _, h := range []struct {
			c    Command
			want Outcome
		}{
			{Command{Op: OpCreate, Stream: "s", Now: t0, ContentType: "text/plain", Fence: map[bool]string{true: FenceRequired}[fenced]}, Created},
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
		if anon {
			c.Producer = nil
		}
		if len(data) > 0 {
			c.Messages = [][]byte{data}
		}
		r := m.ApplyCommand(c)
		after, err := m.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case anon && fenced:
			// Only malformed input and a wrong content type come before
			// the fence (State.decide's order).
			if o := r.Outcome; o != ProducerRequired && o != BadRequest && o != ContentTypeMismatch {
				t.Fatalf("header-less append to a fence-required stream with a producer: %s (%s), want %s", o, r.Message, ProducerRequired)
			}
			if !bytes.Equal(before, after) {
				t.Fatalf("%s (%s) changed the state", r.Outcome, r.Message)
			}
		case anon:
			if r.Err() != nil && !bytes.Equal(before, after) {
				t.Fatalf("%s (%s) changed the state", r.Outcome, r.Message)
			}
		case r.Outcome == Appended || r.Outcome == ClosedNow:
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
