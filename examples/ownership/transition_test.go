package ownership

import (
	"errors"
	"reflect"
	"testing"
)

// The three shapes of one handover, used as inputs throughout.
var (
	ownedA        = Owned{Owner: "A", Epoch: 41}
	transferringA = Transferring{From: "A", To: "B", OldEpoch: 41, NewEpoch: 42}
	unownedB      = Unowned{Epoch: 42, IntendedOwner: "B"}
)

// transitionCase is one transition applied to one state by one caller.
type transitionCase struct {
	name    string
	in      State
	apply   func(State) (State, error)
	want    State // the next state; ignored when wantErr is set
	wantErr error // the exact typed error, compared with reflect.DeepEqual
	is      error // the sentinel errors.Is must match
}

func beginTransfer(caller, to NodeID) func(State) (State, error) {
	return func(s State) (State, error) { return BeginTransfer(s, caller, to) }
}
func completeRelease(caller NodeID) func(State) (State, error) {
	return func(s State) (State, error) { return CompleteRelease(s, caller) }
}
func acquire(caller NodeID) func(State) (State, error) {
	return func(s State) (State, error) { return Acquire(s, caller) }
}
func revoke(next NodeID) func(State) (State, error) {
	return func(s State) (State, error) { return Revoke(s, next) }
}

func runTransitionCases(t *testing.T, cases []transitionCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.apply(c.in)
			if c.is == nil {
				if err != nil {
					t.Fatalf("from %v: unexpected error %v", c.in, err)
				}
				if got != c.want {
					t.Fatalf("from %v: got %v, want %v", c.in, got, c.want)
				}
				if verr := Validate(got); verr != nil {
					t.Fatalf("transition produced an invalid state: %v", verr)
				}
				return
			}
			if err == nil {
				t.Fatalf("from %v: got %v, want error %v", c.in, got, c.is)
			}
			if !errors.Is(err, c.is) {
				t.Fatalf("error %q does not match %v", err, c.is)
			}
			if c.wantErr != nil && !reflect.DeepEqual(err, c.wantErr) {
				t.Fatalf("error = %#v (%q), want %#v", err, err, c.wantErr)
			}
			if got != c.in {
				t.Fatalf("refused transition returned %v, want the unchanged %v", got, c.in)
			}
		})
	}
}

// BeginTransfer is defined only in Owned, only for the owner, and allocates
// epoch+1 at once: Owned(A, 41) -> Transferring(A, B, 41, 42).
// Reference: chapter "One owner at a time", section "The epoch moves
// first".
func TestBeginTransfer(t *testing.T) {
	runTransitionCases(t, []transitionCase{
		{name: "owner A to B", in: ownedA, apply: beginTransfer("A", "B"), want: transferringA},
		{name: "owner A to D", in: ownedA, apply: beginTransfer("A", "D"),
			want: Transferring{From: "A", To: "D", OldEpoch: 41, NewEpoch: 42}},
		{name: "non-owner B", in: ownedA, apply: beginTransfer("B", "C"), is: ErrWrongNode,
			wantErr: &WrongNodeError{Op: OpBeginTransfer, Caller: "B", Required: "A", Role: "owner"}},
		{name: "intended target B itself", in: ownedA, apply: beginTransfer("B", "B"), is: ErrWrongNode,
			wantErr: &WrongNodeError{Op: OpBeginTransfer, Caller: "B", Required: "A", Role: "owner"}},
		{name: "empty caller", in: ownedA, apply: beginTransfer("", "B"), is: ErrWrongNode,
			wantErr: &WrongNodeError{Op: OpBeginTransfer, Caller: "", Required: "A", Role: "owner"}},
		{name: "to self", in: ownedA, apply: beginTransfer("A", "A"), is: ErrInvalidNode,
			wantErr: &InvalidNodeError{Op: OpBeginTransfer, Node: "A", Reason: "a transfer needs another node as target"}},
		{name: "to nobody", in: ownedA, apply: beginTransfer("A", ""), is: ErrInvalidNode,
			wantErr: &InvalidNodeError{Op: OpBeginTransfer, Node: "", Reason: "a transfer needs another node as target"}},
		{name: "while transferring, by From", in: transferringA, apply: beginTransfer("A", "C"), is: ErrWrongState,
			wantErr: &WrongStateError{Op: OpBeginTransfer, State: transferringA}},
		{name: "while transferring, by To", in: transferringA, apply: beginTransfer("B", "C"), is: ErrWrongState,
			wantErr: &WrongStateError{Op: OpBeginTransfer, State: transferringA}},
		{name: "while unowned, by intended owner", in: unownedB, apply: beginTransfer("B", "C"), is: ErrWrongState,
			wantErr: &WrongStateError{Op: OpBeginTransfer, State: unownedB}},
		{name: "epoch space exhausted", in: Owned{Owner: "A", Epoch: MaxEpoch}, apply: beginTransfer("A", "B"),
			is: ErrEpochExhausted},
	})
}

// CompleteRelease is defined only in Transferring, only for the outgoing
// owner, and allocates no epoch: Transferring(A, B, 41, 42) -> Unowned(42, B).
// Reference: chapter "One owner at a time", section "A handover, step
// by step".
func TestCompleteRelease(t *testing.T) {
	runTransitionCases(t, []transitionCase{
		{name: "outgoing owner A", in: transferringA, apply: completeRelease("A"), want: unownedB},
		{name: "incoming B", in: transferringA, apply: completeRelease("B"), is: ErrWrongNode,
			wantErr: &WrongNodeError{Op: OpCompleteRelease, Caller: "B", Required: "A", Role: "outgoing owner"}},
		{name: "bystander C", in: transferringA, apply: completeRelease("C"), is: ErrWrongNode,
			wantErr: &WrongNodeError{Op: OpCompleteRelease, Caller: "C", Required: "A", Role: "outgoing owner"}},
		{name: "while owned, by owner", in: ownedA, apply: completeRelease("A"), is: ErrWrongState,
			wantErr: &WrongStateError{Op: OpCompleteRelease, State: ownedA}},
		{name: "while unowned, by old owner", in: unownedB, apply: completeRelease("A"), is: ErrWrongState,
			wantErr: &WrongStateError{Op: OpCompleteRelease, State: unownedB}},
		{name: "while unowned, by intended owner", in: unownedB, apply: completeRelease("B"), is: ErrWrongState,
			wantErr: &WrongStateError{Op: OpCompleteRelease, State: unownedB}},
	})
}

// Acquire is defined only in Unowned, only for the intended owner, and keeps
// the epoch: Unowned(42, B) -> Owned(B, 42).
// Reference: chapter "One owner at a time", section "A handover, step
// by step".
func TestAcquire(t *testing.T) {
	runTransitionCases(t, []transitionCase{
		{name: "intended owner B", in: unownedB, apply: acquire("B"), want: Owned{Owner: "B", Epoch: 42}},
		{name: "old owner A", in: unownedB, apply: acquire("A"), is: ErrWrongNode,
			wantErr: &WrongNodeError{Op: OpAcquire, Caller: "A", Required: "B", Role: "intended owner"}},
		{name: "bystander D", in: unownedB, apply: acquire("D"), is: ErrWrongNode,
			wantErr: &WrongNodeError{Op: OpAcquire, Caller: "D", Required: "B", Role: "intended owner"}},
		{name: "while owned, by owner", in: ownedA, apply: acquire("A"), is: ErrWrongState,
			wantErr: &WrongStateError{Op: OpAcquire, State: ownedA}},
		{name: "while transferring, by To before release", in: transferringA, apply: acquire("B"), is: ErrWrongState,
			wantErr: &WrongStateError{Op: OpAcquire, State: transferringA}},
		{name: "while transferring, by From", in: transferringA, apply: acquire("A"), is: ErrWrongState,
			wantErr: &WrongStateError{Op: OpAcquire, State: transferringA}},
	})
}

// Abort is defined only in Transferring. It spends one more epoch, so that a
// grant naming the abandoned one fails the fence whenever it turns up, and
// hands the actor back to the outgoing owner, unowned:
// Transferring(A, B, 41, 42) -> Unowned(43, A).
// Reference: chapter "One owner at a time", section "Abort and
// revoke".
func TestAbort(t *testing.T) {
	runTransitionCases(t, []transitionCase{
		{name: "mid handover", in: transferringA, apply: Abort, want: Unowned{Epoch: 43, IntendedOwner: "A"}},
		{name: "while owned", in: ownedA, apply: Abort, is: ErrWrongState,
			wantErr: &WrongStateError{Op: OpAbort, State: ownedA}},
		{name: "while unowned", in: unownedB, apply: Abort, is: ErrWrongState,
			wantErr: &WrongStateError{Op: OpAbort, State: unownedB}},
		{name: "epoch space exhausted",
			in:    Transferring{From: "A", To: "B", OldEpoch: MaxEpoch - 1, NewEpoch: MaxEpoch},
			apply: Abort, is: ErrEpochExhausted},
	})
	// The abandoned epoch no longer passes the fence.
	s, _ := Abort(transferringA)
	if ValidFence(s, transferringA.NewEpoch) {
		t.Fatalf("after abort to %v, the abandoned epoch %d still passes ValidFence", s, transferringA.NewEpoch)
	}
}

// The coordinator's revoke turns any state into Unowned at a fresh epoch,
// with the node it names as intended owner. It may hit an owner that was
// healthy all along (it may even name that owner again); the epoch rise is
// what keeps that safe. Reference: chapter "One owner at a time",
// section "Abort and revoke".
func TestRevoke(t *testing.T) {
	runTransitionCases(t, []transitionCase{
		{name: "owned, to another node", in: ownedA, apply: revoke("C"), want: Unowned{Epoch: 42, IntendedOwner: "C"}},
		{name: "owned, back to the owner", in: ownedA, apply: revoke("A"), want: Unowned{Epoch: 42, IntendedOwner: "A"}},
		{name: "transferring", in: transferringA, apply: revoke("C"), want: Unowned{Epoch: 43, IntendedOwner: "C"}},
		{name: "unowned", in: unownedB, apply: revoke("D"), want: Unowned{Epoch: 43, IntendedOwner: "D"}},
		{name: "unowned, same intended owner", in: unownedB, apply: revoke("B"), want: Unowned{Epoch: 43, IntendedOwner: "B"}},
		{name: "to nobody", in: ownedA, apply: revoke(""), is: ErrInvalidNode,
			wantErr: &InvalidNodeError{Op: OpRevoke, Node: "", Reason: "revoke needs the next intended owner"}},
		{name: "epoch space exhausted", in: Unowned{Epoch: MaxEpoch, IntendedOwner: "B"}, apply: revoke("C"),
			is: ErrEpochExhausted},
	})
}

// Every transition refuses a state no transition can produce, and returns it
// unchanged. Reference: chapter "One owner at a time", section "Three
// shapes".
func TestTransitionsRefuseInvalidStates(t *testing.T) {
	invalid := []State{
		nil,
		Owned{Owner: "", Epoch: 3},
		Transferring{From: "A", To: "A", OldEpoch: 3, NewEpoch: 4},
		Transferring{From: "", To: "B", OldEpoch: 3, NewEpoch: 4},
		Transferring{From: "A", To: "B", OldEpoch: 3, NewEpoch: 5},
		Transferring{From: "A", To: "B", OldEpoch: MaxEpoch, NewEpoch: 0},
		Unowned{Epoch: 4, IntendedOwner: ""},
	}
	transitions := map[string]func(State) (State, error){
		"BeginTransfer": beginTransfer("A", "B"), "CompleteRelease": completeRelease("A"),
		"Acquire": acquire("B"), "Abort": Abort, "Revoke": revoke("C"),
	}
	for _, s := range invalid {
		if err := Validate(s); !errors.Is(err, ErrInvalidState) {
			t.Errorf("Validate(%v) = %v, want ErrInvalidState", s, err)
		}
		for name, f := range transitions {
			got, err := f(s)
			if !errors.Is(err, ErrInvalidState) {
				t.Errorf("%s(%v) error = %v, want ErrInvalidState", name, s, err)
			}
			if got != s {
				t.Errorf("%s(%v) returned %v, want the input unchanged", name, s, got)
			}
		}
	}
	for _, s := range []State{ownedA, transferringA, unownedB} {
		if err := Validate(s); err != nil {
			t.Errorf("Validate(%v) = %v, want nil", s, err)
		}
	}
}

// States print in the book's notation.
// Reference: chapter "One owner at a time", section "Three shapes".
func TestStateString(t *testing.T) {
	for s, want := range map[State]string{
		ownedA:        "Owned(A, 41)",
		transferringA: "Transferring(A, B, 41, 42)",
		unownedB:      "Unowned(42, B)",
	} {
		if got := s.String(); got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
	}
}

// Error messages name the transition, the input and the rule broken.
func TestErrorMessages(t *testing.T) {
	_, err := BeginTransfer(ownedA, "B", "C")
	want := "BeginTransfer: caller B is not the owner A"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
	_, err = Acquire(transferringA, "B")
	want = "Acquire: not allowed in Transferring(A, B, 41, 42)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
	err = Fence(transferringA, 41)
	want = "epoch 41 is stale: the current epoch is 42"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
	var se *StaleEpochError
	if !errors.As(err, &se) || se.Given != 41 || se.Current != 42 {
		t.Errorf("errors.As(%v) = %+v, want Given 41, Current 42", err, se)
	}
}
