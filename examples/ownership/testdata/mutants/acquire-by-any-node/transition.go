package ownership

import "fmt"

// The transitions are pure functions: they read a State and return the next
// State, or the unchanged input and an error. None of them mutates anything.
// Each first checks that the input State is valid (see Validate) and returns
// its *InvalidStateError otherwise.

// nextEpoch returns e+1, or ErrEpochExhausted if e is MaxEpoch.
func nextEpoch(op Op, e Epoch) (Epoch, error) {
	if e == MaxEpoch {
		return e, &exhaustedError{op: op}
	}
	return e + 1, nil
}

// exhaustedError reports ErrEpochExhausted for the Op that hit MaxEpoch.
type exhaustedError struct{ op Op }

func (e *exhaustedError) Error() string {
	return fmt.Sprintf("%s: epoch space exhausted (current epoch is %d)", e.op, MaxEpoch)
}
func (e *exhaustedError) Is(target error) bool { return target == ErrEpochExhausted }

// ANCHOR: begin_transfer

// BeginTransfer starts a handover of the actor from its owner to node to.
// Only the owner may call it, and only from Owned. It allocates the next epoch
// at once: Owned(A, 41) becomes Transferring(A, B, 41, 42), so from this moment
// A's epoch-41 authority is fenced out, whether or not A is still reachable.
//
// Errors: *WrongStateError unless s is Owned; *WrongNodeError if caller is not
// the owner; *InvalidNodeError if to is empty or is the owner itself;
// ErrEpochExhausted if the epoch is MaxEpoch.
//
// Reference: chapter "One owner at a time", section "The epoch
// moves first".
func BeginTransfer(s State, caller, to NodeID) (State, error) {
	if err := Validate(s); err != nil {
		return s, err
	}
	o, ok := s.(Owned)
	if !ok {
		return s, &WrongStateError{Op: OpBeginTransfer, State: s}
	}
	if caller != o.Owner {
		return s, &WrongNodeError{
			Op: OpBeginTransfer, Caller: caller, Required: o.Owner, Role: "owner",
		}
	}
	if to == "" || to == o.Owner {
		return s, &InvalidNodeError{
			Op: OpBeginTransfer, Node: to,
			Reason: "a transfer needs another node as target",
		}
	}
	next, err := nextEpoch(OpBeginTransfer, o.Epoch)
	if err != nil {
		return s, err
	}
	return Transferring{From: o.Owner, To: to, OldEpoch: o.Epoch, NewEpoch: next}, nil
}

// ANCHOR_END: begin_transfer

// ANCHOR: complete_release

// CompleteRelease is the outgoing owner's confirmation that it has stopped
// acting: Transferring(A, B, 41, 42) becomes Unowned(42, B). Only From may
// call it. No epoch is allocated; the new epoch was allocated by BeginTransfer.
//
// Errors: *WrongStateError unless s is Transferring; *WrongNodeError if caller
// is not From.
//
// Reference: chapter "One owner at a time", section "A handover,
// step by step".
func CompleteRelease(s State, caller NodeID) (State, error) {
	if err := Validate(s); err != nil {
		return s, err
	}
	t, ok := s.(Transferring)
	if !ok {
		return s, &WrongStateError{Op: OpCompleteRelease, State: s}
	}
	if caller != t.From {
		return s, &WrongNodeError{Op: OpCompleteRelease, Caller: caller, Required: t.From, Role: "outgoing owner"}
	}
	return Unowned{Epoch: t.NewEpoch, IntendedOwner: t.To}, nil
}

// ANCHOR_END: complete_release

// ANCHOR: acquire

// Acquire makes the intended owner the owner at the unowned epoch:
// Unowned(42, B) becomes Owned(B, 42). Only IntendedOwner may call it. It is
// the only transition that confers authority (Actor.Acquire also issues the
// new owner's Token).
//
// Errors: *WrongStateError unless s is Unowned; *WrongNodeError if caller is
// not the intended owner.
//
// Reference: chapter "One owner at a time", section "A handover,
// step by step".
func Acquire(s State, caller NodeID) (State, error) {
	if err := Validate(s); err != nil {
		return s, err
	}
	u, ok := s.(Unowned)
	if !ok {
		return s, &WrongStateError{Op: OpAcquire, State: s}
	}
	return Owned{Owner: caller, Epoch: u.Epoch}, nil
}

// ANCHOR_END: acquire

// ANCHOR: abort

// Abort abandons a handover that has begun but not been released. It is the
// coordinator's transition, not a node's, so it takes no caller.
// Transferring(A, B, 41, 42) becomes Unowned(43, A): the actor goes back to
// the outgoing owner, who must Acquire it again, and one more epoch is burnt.
//
// Why another epoch, and why Unowned rather than Owned(A, 42): B may already
// hold a grant for epoch 42 (a message that A sent before the abort). If the
// abort reused epoch 42, that grant and A's renewed authority would carry the
// same number and a resource server could not tell them apart. With epoch 43
// current, anything stamped 42 fails ValidFence on arrival. And A may be the
// very node whose failure caused the abort, so the abort cannot hand it
// authority; A gets authority (and a token) only by acquiring.
//
// Errors: *WrongStateError unless s is Transferring (a handover that already
// reached Unowned is taken back with Revoke); ErrEpochExhausted.
//
// Reference: chapter "One owner at a time", section "Abort and
// revoke".
func Abort(s State) (State, error) {
	if err := Validate(s); err != nil {
		return s, err
	}
	t, ok := s.(Transferring)
	if !ok {
		return s, &WrongStateError{Op: OpAbort, State: s}
	}
	next, err := nextEpoch(OpAbort, t.NewEpoch)
	if err != nil {
		return s, err
	}
	return Unowned{Epoch: next, IntendedOwner: t.From}, nil
}

// ANCHOR_END: abort

// ANCHOR: revoke

// Revoke is the coordinator's force: from any state, the actor becomes
// Unowned at a fresh epoch (CurrentEpoch(s)+1) with next as the only node that
// may acquire it. The coordinator chooses next; it may be the current owner
// again (a failure detector that suspected a healthy node) or any other node.
// Revoke is safe even when it fires at a healthy owner, because the epoch bump
// makes that owner's token stale; it is not offered to nodes.
//
// Errors: *InvalidNodeError if next is empty; ErrEpochExhausted.
//
// Reference: chapter "One owner at a time", section "Abort and
// revoke".
func Revoke(s State, next NodeID) (State, error) {
	if err := Validate(s); err != nil {
		return s, err
	}
	if next == "" {
		return s, &InvalidNodeError{Op: OpRevoke, Node: next, Reason: "revoke needs the next intended owner"}
	}
	e, err := nextEpoch(OpRevoke, CurrentEpoch(s))
	if err != nil {
		return s, err
	}
	return Unowned{Epoch: e, IntendedOwner: next}, nil
}

// ANCHOR_END: revoke
