package chubby

import (
	"testing"
	"time"
)

const ms = time.Millisecond

// zombie is Kleppmann's scenario: client 1 (generation 33) pauses for
// pause and then sends A; client 2 works for think once it holds the lock
// and sends B. Every message takes 10ms.
func zombie(scheme Scheme, lockDelay, pause, think time.Duration) Scenario {
	return Trial{Pause: pause, Delay1: 10 * ms, Think: think, Delay2: 10 * ms, FenceDelay: 10 * ms}.
		Scenario(Protection{Scheme: scheme, LockDelay: lockDelay}, DefaultLease)
}

func fate(t *testing.T, sc Scenario) (res Result, refused bool) {
	t.Helper()
	res, err := Run(sc)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range res.Refused {
		if w.Data == "A" {
			refused = true
		}
		if w.Data == "B" {
			t.Fatalf("the new holder's write was refused: %+v", res.Trace)
		}
	}
	return res, refused
}

// The zombie writer's table: with nothing checked, client 1's late write
// overwrites client 2's; lock-delay saves it when client 1 wakes before the
// lock-delay ends and not after; a sequencer, checked either way, refuses
// it. Reference: Kleppmann 2016 (fencing tokens 33 and 34); Burrows 2006,
// section 2.4.
func TestZombieWriter(t *testing.T) {
	for _, c := range []struct {
		name        string
		scheme      Scheme
		lockDelay   time.Duration
		pause       time.Duration
		overwritten bool
		refused     bool
	}{
		{"unchecked", SchemeUnchecked, 0, 20 * s, true, false},
		{"lock-delay, pause ends inside it", SchemeLockDelay, time.Minute, 20 * s, false, false},
		{"lock-delay, pause outlasts it", SchemeLockDelay, time.Minute, 90 * s, true, false},
		{"sequencer checked at the cell", SchemeSequencerAtCell, 0, 20 * s, false, true},
		{"sequencer, newest seen", SchemeSequencerNewest, 0, 20 * s, false, true},
		{"ownership model", SchemeOwnership, 0, 20 * s, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, refused := fate(t, zombie(c.scheme, c.lockDelay, c.pause, 0))
			if res.Regressed != c.overwritten || refused != c.refused {
				t.Fatalf("overwritten=%v refused=%v, want %v %v\n%+v", res.Regressed, refused, c.overwritten, c.refused, res.Trace)
			}
			if !res.Failover {
				t.Fatalf("client 2 never took the lock over: %+v", res.Trace)
			}
			if v, _ := lastWrite(res); c.overwritten != (v == "A") {
				t.Fatalf("the server ends with %s", v)
			}
		})
	}
}

func lastWrite(res Result) (string, bool) {
	if len(res.Applied) == 0 {
		return "", false
	}
	return res.Applied[len(res.Applied)-1].Data, true
}

// The two ways of checking a sequencer differ. When client 2 holds
// generation 34 but has not written yet, a server that keeps only the
// newest sequencer it has seen still accepts 33, because 34 has not reached
// it; the cell knows 33's session expired and refuses it. The ownership
// model's epoch moves at the revoke, before any new holder writes, so a
// newest-seen server told of it refuses 33 too.
// Reference: Burrows 2006, section 2.4; chapter "Ownership: epochs and
// fencing", section "The epoch moves first".
func TestNewestSeenDiffersFromTheCellAndEpochMovesFirstCloses(t *testing.T) {
	think := 15 * s
	res, refused := fate(t, zombie(SchemeSequencerNewest, 0, 20*s, think))
	if refused || res.Late != 1 || res.Regressed {
		t.Fatalf("newest seen: refused=%v late=%d regressed=%v, want A applied late\n%+v", refused, res.Late, res.Regressed, res.Trace)
	}
	if _, refused := fate(t, zombie(SchemeSequencerAtCell, 0, 20*s, think)); !refused {
		t.Fatal("checked at the cell: A was applied")
	}
	res, refused = fate(t, zombie(SchemeOwnership, 0, 20*s, think))
	if !refused || res.Late != 0 {
		t.Fatalf("ownership model: refused=%v late=%d\n%+v", refused, res.Late, res.Trace)
	}
}

// A client that pauses for less than its lease keeps the lock: no
// failover, and its write is applied.
func TestShortPauseKeepsTheLock(t *testing.T) {
	for _, scheme := range []Scheme{SchemeUnchecked, SchemeLockDelay, SchemeSequencerAtCell, SchemeSequencerNewest, SchemeOwnership} {
		res, refused := fate(t, zombie(scheme, time.Minute, 5*s, 0))
		if res.Failover || refused || len(res.Applied) != 2 || res.Applied[0].Data != "A" {
			t.Fatalf("%v: failover=%v refused=%v applied=%+v", scheme, res.Failover, refused, res.Applied)
		}
	}
}
