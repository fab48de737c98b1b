// Package epoch holds the one rule of the fixture.
package epoch

// ANCHOR: check
// Accept reports whether a write stamped with epoch may be applied by a
// store that has seen seen.
func Accept(seen, epoch uint64) bool {
	return epoch >= seen
}

// ANCHOR_END: check
