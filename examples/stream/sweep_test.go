package stream

import (
	"bytes"
	"strings"
	"testing"
)

// TestSweepReclaims: an OpSweep removes every stream expired at its Now,
// whether or not any later command names it, and forgets every producer id
// idle for ProducerTTL, while streams and producers still in use stay. Two
// machines that apply the same commands hold the same state after it.
// Reference: PROTOCOL.md 5.1 (Stream-TTL, Stream-Expires-At), 5.2.1
// (producer state kept for 7 days is recommended).
func TestSweepReclaims(t *testing.T) {
	const day = int64(24 * 3600 * 1e9)
	cmds := []Command{
		{Op: OpCreate, Stream: "ttl", Now: t0, ContentType: "text/plain", HasTTL: true, TTL: 60},
		{Op: OpCreate, Stream: "at", Now: t0, ContentType: "text/plain", ExpiresAt: t0 + 10e9},
		{Op: OpCreate, Stream: "src", Now: t0, ContentType: "text/plain", HasTTL: true, TTL: 60},
		{Op: OpCreate, Stream: "fork", Now: t0, ForkFrom: "src", ForkOffset: -1, HasTTL: true, TTL: 3600},
		create("keep", "text/plain"),
		appendP("keep", "idle", 1, 0, "a"),
		appendP("keep", "busy", 1, 0, "b"),
	}
	late := appendP("keep", "busy", 1, 1, "c")
	late.Now = t0 + 7*day
	cmds = append(cmds, late,
		Command{Op: OpSweep, Now: t0 + 7*day + 1, ProducerTTL: 7 * day})
	var snaps [][]byte
	for range 2 {
		m := NewMachine()
		var last Result
		for _, c := range cmds {
			last = m.ApplyCommand(c)
		}
		if last.Outcome != Swept || !strings.Contains(last.Message, "removed 4 expired streams and 1 idle producers") {
			t.Errorf("sweep: %+v, want 4 streams (at, fork, src, ttl) and 1 producer removed", last)
		}
		now := t0 + 7*day + 2
		for _, name := range []string{"ttl", "at", "fork", "src"} {
			if _, o := m.Stat(name, now); o != NotFound {
				t.Errorf("stream %s after the sweep: %q, want not-found", name, o)
			}
		}
		m.mu.RLock()
		_, srcKept := m.st.Streams["src"]
		_, ttlKept := m.st.Streams["ttl"]
		idle, busy := m.st.Streams["keep"].Producers["idle"], m.st.Streams["keep"].Producers["busy"]
		m.mu.RUnlock()
		if srcKept || ttlKept {
			t.Errorf("expired streams still in the state: src %v, ttl %v", srcKept, ttlKept)
		}
		if idle != nil || busy == nil {
			t.Errorf("producers after the sweep: idle %v (want forgotten), busy %v (want kept)", idle, busy)
		}
		if r := m.ApplyCommand(appendP("keep", "idle", 1, 1, "d")); r.Outcome != SequenceGap {
			t.Errorf("forgotten producer's next append: %s, want sequence-gap (it must claim anew)", r.Outcome)
		}
		b, err := m.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, b)
	}
	if !bytes.Equal(snaps[0], snaps[1]) {
		t.Error("two machines differ after the same sweep")
	}
	m := NewMachine()
	m.ApplyCommand(create("k", "text/plain"))
	if m.NeedsSweep(t0+1, 7*day) {
		t.Error("NeedsSweep with nothing expired and no producer: true")
	}
	m.ApplyCommand(Command{Op: OpCreate, Stream: "e", Now: t0, ContentType: "text/plain", HasTTL: true, TTL: 1})
	if !m.NeedsSweep(t0+2e9, 0) {
		t.Error("NeedsSweep with an expired stream: false")
	}
}
