// Package composed is Raymond's tree algorithm with every PRIVILEGE move
// made an ownership handover from examples/ownership: the privilege is an
// actor's ownership record, a node sending the PRIVILEGE performs
// BeginTransfer and CompleteRelease on the record and stamps the message with
// the new epoch, the receiver performs Acquire only if the record is unowned
// at that very epoch and names it, a node's critical section writes only
// while MayMutate holds, and every write carries the writer's epoch to a
// resource that fences it.
//
// Raymond's rules (examples/raymond's Step) still decide where the privilege
// goes; the ownership record decides whether a move is real. The record is
// assumed to be updated atomically (the assumption the ownership chapter
// names first). Nothing is assumed of the network: messages may be
// duplicated, reordered, delayed and lost, and a coordinator with an
// unreliable failure detector may revoke at any time.
//
// This folder is a library: System is the composed state machine, and
// Explore checks it exhaustively at small bounds. Its programs are
// examples/composed/check (the exhaustive check and its two mutants) and
// examples/composed/cost (record writes per critical-section entry).
package composed
