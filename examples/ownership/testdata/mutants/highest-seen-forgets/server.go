package ownership

// ANCHOR: highest_seen

// HighestSeen is the fence of a resource server that does not consult the
// record: it remembers only the highest epoch it has admitted and refuses
// anything older. It needs nothing but the requests it receives, and it is
// weaker than checking the record: until a request at the new epoch
// reaches it, it still admits the old one, even after the record has moved
// on. (Martin Kleppmann, "How to do distributed locking", 2016, describes
// this storage-side check of fencing tokens.)
//
// The zero value has admitted nothing and admits any epoch.
//
// Reference: chapter "One owner at a time", section "Two meanings
// of fenced".
type HighestSeen struct {
	Highest Epoch // the highest epoch admitted so far
}

// Admit admits a request stamped with epoch e and raises Highest to e, or
// returns a *StaleEpochError{Given: e, Current: Highest} if e is below
// Highest and changes nothing.
func (h *HighestSeen) Admit(e Epoch) error {
	if e < h.Highest {
		return &StaleEpochError{Given: e, Current: h.Highest}
	}
	return nil
}

// ANCHOR_END: highest_seen
