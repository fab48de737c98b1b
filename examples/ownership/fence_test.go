package ownership

import (
	"errors"
	"testing"
)

// Authority is one predicate, true only in Owned, for the owner, at the
// owner's epoch; nobody has authority in the middle of a handover.
// Reference: chapter "One owner at a time", section "One predicate
// for authority, one check for servers".
func TestMayMutate(t *testing.T) {
	cases := []struct {
		s     State
		node  NodeID
		epoch Epoch
		want  bool
	}{
		{ownedA, "A", 41, true},
		{ownedA, "A", 40, false},
		{ownedA, "A", 42, false},
		{ownedA, "B", 41, false},
		{transferringA, "A", 41, false},
		{transferringA, "A", 42, false},
		{transferringA, "B", 42, false},
		{unownedB, "B", 42, false},
		{unownedB, "A", 41, false},
		{Owned{Owner: "B", Epoch: 42}, "B", 42, true},
		{Owned{Owner: "B", Epoch: 42}, "A", 41, false},
		{nil, "A", 0, false},
	}
	for _, c := range cases {
		if got := MayMutate(c.s, c.node, c.epoch); got != c.want {
			t.Errorf("MayMutate(%v, %s, %d) = %v, want %v", c.s, c.node, c.epoch, got, c.want)
		}
	}
}

// In Transferring, CurrentEpoch is already NewEpoch, so the outgoing owner's
// epoch fails the fence from the first step; a server admits e iff e >= the
// current epoch. Reference: chapter "One owner at a time", section
// "One predicate for authority, one check for servers".
func TestCurrentEpochAndValidFence(t *testing.T) {
	cases := []struct {
		s       State
		current Epoch
	}{
		{ownedA, 41},
		{transferringA, 42},
		{unownedB, 42},
		{Owned{Owner: "B", Epoch: 42}, 42},
		{nil, 0},
	}
	for _, c := range cases {
		if got := CurrentEpoch(c.s); got != c.current {
			t.Errorf("CurrentEpoch(%v) = %d, want %d", c.s, got, c.current)
		}
		for _, e := range []Epoch{0, c.current - 1, c.current, c.current + 1} {
			want := e >= c.current
			if got := ValidFence(c.s, e); got != want {
				t.Errorf("ValidFence(%v, %d) = %v, want %v", c.s, e, got, want)
			}
			err := Fence(c.s, e)
			if want != (err == nil) {
				t.Errorf("Fence(%v, %d) = %v, want pass=%v", c.s, e, err, want)
			}
			if err != nil && !errors.Is(err, ErrStaleEpoch) {
				t.Errorf("Fence(%v, %d) = %v, want ErrStaleEpoch", c.s, e, err)
			}
		}
	}
	if ValidFence(transferringA, 41) {
		t.Errorf("the outgoing owner's epoch 41 passes the fence in %v", transferringA)
	}
}

// A server that keeps only the highest epoch it has admitted refuses an
// older one and keeps its bar, but admits the old epoch until a newer one
// has reached it, whatever the record says.
// Reference: chapter "One owner at a time", section "Two meanings
// of fenced".
func TestHighestSeenAdmitsUntilItSeesNewer(t *testing.T) {
	var h HighestSeen
	a := mustActor(t, ownedA)
	if err := h.Admit(41); err != nil || h.Highest != 41 {
		t.Fatalf("Admit(41) = %v, highest %d", err, h.Highest)
	}
	if _, err := a.Apply(Command{Op: OpBeginTransfer, Caller: "A", To: "B", Epoch: 41}); err != nil {
		t.Fatal(err)
	}
	if err := Fence(a.State(), 41); err == nil {
		t.Fatalf("the record still admits 41 in %v", a.State())
	}
	if err := h.Admit(41); err != nil {
		t.Fatalf("before seeing 42, Admit(41) = %v; this server cannot know the epoch moved", err)
	}
	if err := h.Admit(42); err != nil || h.Highest != 42 {
		t.Fatalf("Admit(42) = %v, highest %d", err, h.Highest)
	}
	var se *StaleEpochError
	if err := h.Admit(41); !errors.As(err, &se) || se.Given != 41 || se.Current != 42 || h.Highest != 42 {
		t.Fatalf("after 42, Admit(41) = %v, highest %d", err, h.Highest)
	}
}
