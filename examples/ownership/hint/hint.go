// Package hint is a library: it lets a failure detector's verdicts drive
// the ownership record's Revoke, and shows that nothing the detector says
// can break the record's safety. A detector's "suspect" is a hint: it may
// be wrong (the suspected node was only slow, or paused), and the epoch
// bump of Revoke is what makes a wrong hint harmless, because the node it
// wrongly removes holds a token that no longer passes the fence.
//
// Like the ownership package, the core is pure: a Coordinator and a
// Resource are values changed by method calls, with no clock, network or
// goroutines. The program in ./suspect runs them under a real detector
// (hashicorp/memberlist, SWIM with Lifeguard) on loopback.
//
// Reference: chapter "Failure detection is a hint"; the detector is the
// SWIM protocol of Abhinandan Das, Indranil Gupta and Ashish Motivala,
// "SWIM: Scalable Weakly-consistent Infection-style Process Group
// Membership Protocol", DSN 2002.
package hint

import (
	"errors"
	"fmt"

	"github.com/ownership-book/ownership/examples/ownership"
)

// Verdict is what a failure detector reports: Node is suspected, and the
// coordinator observed the record at Epoch when the report arrived.
type Verdict struct {
	Node  ownership.NodeID
	Epoch ownership.Epoch
}

// ErrNotOwner is matched by Suspect's error when the verdict is stale or
// names a node that holds nothing: the record is left as it is.
var ErrNotOwner = errors.New("suspected node is not the owner at the verdict's epoch")

// Coordinator turns verdicts into Revoke on one actor's record. Its rule:
// a verdict against the owner at the record's current epoch revokes the
// actor to Next(suspected); any other verdict (a stale one, carrying an
// older epoch, or one against a node that owns nothing) changes nothing.
// The epoch check is a compare-and-revoke, so that a suspicion raised
// before a handover cannot remove the node that took over after it; it
// is not needed for safety, which holds for any Revoke at any time (see
// TestAdversarialDetectorCannotBreakSafety).
type Coordinator struct {
	// Record is the actor's ownership record.
	Record *ownership.Actor
	// Next chooses the intended owner after suspected is revoked.
	Next func(suspected ownership.NodeID) ownership.NodeID
}

// ANCHOR: suspect

// Suspect applies v. It returns the record's state after a Revoke, or an
// error matching ErrNotOwner (nothing changed), or Revoke's own error.
func (c *Coordinator) Suspect(v Verdict) (ownership.State, error) {
	o, ok := c.Record.State().(ownership.Owned)
	if !ok || o.Owner != v.Node || o.Epoch != v.Epoch {
		return c.Record.State(), fmt.Errorf("suspect %s at epoch %d: the record is %v: %w",
			v.Node, v.Epoch, c.Record.State(), ErrNotOwner)
	}
	if err := c.Record.Revoke(c.Next(v.Node)); err != nil {
		return c.Record.State(), err
	}
	return c.Record.State(), nil
}

// ANCHOR_END: suspect

// Write is one write a Resource accepted: the token presented and the
// value, with the record's current epoch when it was accepted.
type Write struct {
	Token ownership.Token
	Value string
	// RecordEpoch is the record's current epoch at acceptance.
	RecordEpoch ownership.Epoch
}

// Resource is a resource server that checks each write's token against the
// record (Actor.Authorize: issued, current epoch, holder), as a Chubby
// server checks a sequencer. With Unchecked set it accepts every write:
// the negative control.
type Resource struct {
	Record    *ownership.Actor
	Unchecked bool
	// Log lists the accepted writes in order.
	Log []Write
}

// Put writes value with token t. A refused write changes nothing and
// returns Authorize's error (*ownership.StaleEpochError for a token from
// before the last Revoke).
func (r *Resource) Put(t ownership.Token, value string) error {
	if !r.Unchecked {
		if err := r.Record.Authorize(t); err != nil {
			return err
		}
	}
	r.Log = append(r.Log, Write{Token: t, Value: value, RecordEpoch: r.Record.CurrentEpoch()})
	return nil
}

// Violations counts the safety violations in a resource's log of accepted
// writes, whatever drove the record:
//
//   - a write whose epoch is below one accepted before it (a deposed
//     owner's write landing after its successor's);
//   - two holders writing at one epoch (two owners);
//   - a write below the record's current epoch when it was accepted.
//
// Reference: the fencing invariants of chapter "Ownership: epochs and
// fencing", section "One predicate for authority, one check for servers".
func Violations(log []Write) int {
	n := 0
	var high ownership.Epoch
	holder := map[ownership.Epoch]ownership.NodeID{}
	for i, w := range log {
		if i > 0 && w.Token.Epoch < high {
			n++
		}
		high = max(high, w.Token.Epoch)
		if h, ok := holder[w.Token.Epoch]; ok && h != w.Token.Holder {
			n++
		}
		holder[w.Token.Epoch] = w.Token.Holder
		if w.Token.Epoch < w.RecordEpoch {
			n++
		}
	}
	return n
}
