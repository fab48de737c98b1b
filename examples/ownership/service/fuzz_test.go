package service

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzOpenFloor: any file content either is refused with ErrCorruptFloor or
// reads as a floor that a burn writes back and that reads back the same.
func FuzzOpenFloor(f *testing.F) {
	f.Add([]byte("ownership epoch floor v2\nx 5\ny 7\nend 2 crc32c 3b673afd\n"))
	f.Add([]byte("ownership epoch floor v2\nend 0 crc32c d42bbea1\n"))
	f.Add([]byte("ownership epoch floor v2\nx 18446744073709551615\nend 1 crc32c 7e482a24\n"))
	f.Add([]byte("hello"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "floor")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		fl, err := OpenFloor(path, nil)
		if err != nil {
			return
		}
		before := fl.Get("zz-fuzz")
		if err := fl.Burn("zz-fuzz", before+1); err != nil && before+1 != 0 {
			t.Fatalf("burn on a parsed floor: %v", err)
		}
		again, err := OpenFloor(path, nil)
		if err != nil {
			t.Fatalf("floor written by Burn does not parse: %v", err)
		}
		for a, e := range fl.durable {
			if again.Get(a) != e {
				t.Fatalf("actor %s: %d after reopen, want %d", a, again.Get(a), e)
			}
		}
	})
}

// FuzzMachineApply: no log entry makes the replicated machine panic, and an
// entry it refuses changes nothing.
func FuzzMachineApply(f *testing.F) {
	f.Add([]byte(`{"op":"Acquire","actor":"x","caller":"A","epoch":1}`))
	f.Add([]byte(`{"op":"BeginTransfer","actor":"x","caller":"A","epoch":1,"to":"B"}`))
	f.Add([]byte(`{"op":"Revoke","actor":"x","to":""}`))
	f.Add([]byte(`{"op":"Create","actor":"","to":"A"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, cmd []byte) {
		m := NewMachine()
		// Without actor x every entry is refused for a missing actor and the
		// checks below test little.
		if out := m.Apply(mustJSON(Request{Op: OpCreate, Actor: "x", To: "A"})); containsError(out) {
			t.Fatalf("create x: %s", out)
		}
		if _, err := m.Read("x"); err != nil {
			t.Fatalf("after create: %v", err)
		}
		before, err := m.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		out := m.Apply(cmd)
		if containsError(out) {
			after, err := m.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			if string(after) != string(before) {
				t.Fatalf("refused entry %q changed the record", cmd)
			}
		}
		snap, err := m.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		if err := NewMachine().Restore(snap); err != nil {
			t.Fatalf("entry %q left a record that does not restore: %v", cmd, err)
		}
	})
}
