// Package owner is a small database owned by one process at a time and
// replicated through an epoch-fenced stream: "the last process to open a
// database becomes its only writer".
//
// A DB keeps its commits in a local log (each one fsynced before Put
// returns), a key-value state on top of that log, and a replicator that
// appends the log to a Durable Streams stream under one producer id. Every
// owner of the database writes under that same producer id and under an epoch
// of its own (Durable Streams PROTOCOL.md, section 5.2.1 "Idempotent
// Producers", headers Producer-Id, Producer-Epoch, Producer-Seq). The stream
// refuses an older epoch with 403 and Producer-Outcome: epoch-closed; that
// refusal is the fence, and it is the only thing this package relies on to
// keep one writer. There is no lock service and no lease.
//
// The rules come from the seed "Ownership and fencing":
//
//   - Open claims (Taking a database over): an open that reaches the stream
//     writes a claim record to its own log, syncs it, and appends sequence
//     number 0 under an epoch above every epoch it has seen. A lost race is
//     claimed again above the winner's epoch, at most MaxClaimRounds times,
//     then Open fails with ErrClaimRaces.
//   - Recovery: after the claim, a leader read from the copy's acknowledged
//     offset up to the claim tells which pending commits landed. If nobody
//     else wrote, the rest is sent under the new epoch, in order and
//     unchanged; otherwise it is discarded and the copy catches up.
//   - Synced returns once the stream holds every earlier commit and a round
//     trip begun after the call found the process still the owner. Act
//     outside the process only after it.
//   - Fenced (What the fenced process sees): a 403 epoch-closed resets the
//     database: pending Synced calls fail, reset listeners run once, every
//     later operation fails with an error matching ErrReset, and an open
//     Snapshot keeps working. A reset DB never reopens by itself.
//   - Claims nobody asked for: after the stream forgot the producer, after
//     413 (smaller batches, then a claim), and when an offline open goes
//     live. Each is exactly one epoch above the process's own and loses to
//     any newer owner; the offline case first reads the stream and claims
//     only if nobody else wrote or claimed there.
//   - A new history: a 412 (stale incarnation token) makes the copy adopt the
//     stream's new history if the stream kept every commit the copy saw
//     acknowledged, and otherwise moves the copy into salvage/ and resets.
//
// Copies of a cache directory: a directory holds the copy's writer id and its
// claims. A copy of a live directory opened on another host is, to the
// stream, the same writer; its open claims above the original and fences it.
// The supported way to use a database on another host is to open it by name
// into a fresh directory, which rebuilds the copy from the stream.
//
// Prior art: Kafka's transactional producer fences a "zombie" instance the
// same way, by bumping the producer epoch of a transactional.id (KIP-98,
// "Exactly Once Delivery and Transactional Messaging").
package owner
