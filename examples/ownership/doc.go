// Package ownership is the ownership state machine of one actor: who may
// mutate it, at which epoch, and how authority moves from one node to another.
//
// The package is a pure core in the style of etcd's raft package: no I/O, no
// clock, no goroutines, no locks. Every transition is a function from a State
// (and the caller's identity) to a new State or a typed error, and a refused
// transition changes nothing. Networks, disks, timers and locking belong to
// the code around it (the ownership service wraps an Actor in a mutex and
// replicates its Commands through Raft).
//
// An actor is always in exactly one of three shapes (chapter "One owner at
// a time", section "Three shapes"):
//
//	Owned        {Owner, Epoch}
//	Transferring {From, To, OldEpoch, NewEpoch}
//	Unowned      {Epoch, IntendedOwner}
//
// A handover takes three transitions, and the first one already moves the
// epoch:
//
//	Owned(A, 41)
//	  | BeginTransfer(A -> B)     allocates epoch 42
//	Transferring(A, B, 41, 42)
//	  | CompleteRelease(A)
//	Unowned(42, B)
//	  | Acquire(B)                issues B's token for epoch 42
//	Owned(B, 42)
//
// A transition requested over a network is a Command, which carries the
// epoch its sender saw; Actor.Apply performs it only at that epoch, so a
// duplicated or delayed request is refused with a *StaleEpochError once the
// epoch has moved on.
//
// Authority is the single predicate MayMutate, true only in Owned. A resource
// server protects itself with ValidFence, which rejects any epoch older than
// the actor's current one; a Token carrying its epoch is what a holder
// presents. A server that cannot consult the record uses HighestSeen,
// which fences an old epoch only once a newer one has reached it. Together they are the sequencer of Chubby (Mike Burrows, "The
// Chubby lock service for loosely-coupled distributed systems", OSDI 2006,
// section 2.4, "Locks and sequencers"), whose lock generation number is our
// Epoch.
package ownership
