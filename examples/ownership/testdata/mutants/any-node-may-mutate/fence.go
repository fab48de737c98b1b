package ownership

// ANCHOR: may_mutate

// MayMutate reports whether node may mutate the actor at epoch: true exactly
// when s is Owned by node at that epoch, false in every other state. It is the
// one definition of authority in this package. Because Owned has one owner and
// one epoch, at most one (node, epoch) pair satisfies it in any state:
// exclusivity is a property of the shape, not of a count.
//
// Reference: chapter "Ownership: epochs and fencing", section "One predicate
// for authority, one check for servers".
func MayMutate(s State, node NodeID, epoch Epoch) bool {
	o, ok := s.(Owned)
	return ok && epoch == o.Epoch
}

// ANCHOR_END: may_mutate

// ANCHOR: current_epoch

// CurrentEpoch returns the newest epoch allocated for the actor: the owner's
// epoch when Owned, the NEW epoch when Transferring (so the outgoing owner is
// stale from the moment the handover begins), the free epoch when Unowned.
// It returns 0 for a nil State.
//
// Reference: chapter "Ownership: epochs and fencing", section "One predicate
// for authority, one check for servers".
func CurrentEpoch(s State) Epoch {
	switch s := s.(type) {
	case Owned:
		return s.Epoch
	case Transferring:
		return s.NewEpoch
	case Unowned:
		return s.Epoch
	}
	return 0
}

// ANCHOR_END: current_epoch

// ANCHOR: valid_fence

// ValidFence is the check a resource server applies to an incoming request
// stamped with epoch e: it passes when e >= CurrentEpoch(s). A request from an
// owner whose handover has begun already fails, because the current epoch is
// then the new one.
//
// Reference: the check a Chubby server makes on a sequencer (Mike Burrows,
// "The Chubby lock service for loosely-coupled distributed systems", OSDI
// 2006, section 2.4).
func ValidFence(s State, e Epoch) bool {
	return e >= CurrentEpoch(s)
}

// ANCHOR_END: valid_fence

// Fence is ValidFence as an error: nil if e passes, otherwise a
// *StaleEpochError naming e and the current epoch.
func Fence(s State, e Epoch) error {
	if cur := CurrentEpoch(s); e < cur {
		return &StaleEpochError{Given: e, Current: cur}
	}
	return nil
}
