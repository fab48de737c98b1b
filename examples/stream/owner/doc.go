// Package owner is a small database that one process at a time may write,
// replicated through an epoch-fenced stream: whichever process opened the
// database most recently is its writer, and every earlier one is fenced.
//
// A DB keeps its commits in a local log (each one fsynced before Put
// returns), a key-value state on top of that log, and a replicator that
// appends the log to a Durable Streams stream under one producer id. Every
// owner of the database shares that producer id, and each has its own
// epoch (Durable Streams PROTOCOL.md, section 5.2.1 "Idempotent
// Producers", headers Producer-Id, Producer-Epoch, Producer-Seq). The stream
// answers an append from an older epoch with 403 and the header
// Producer-Outcome: epoch-closed. That answer is the fence, and the package
// relies on nothing else to keep one writer: no lock service, no lease.
//
// The rules, each described in chapter "Owning a database through its stream" under the
// section named in parentheses:
//
//   - Open claims the database (The claim). It first records the claim in
//     its own log and fsyncs it, then appends sequence number 0 under an
//     epoch higher than any it has seen. After losing a race it claims again
//     above the winning epoch; after MaxClaimRounds lost rounds Open fails
//     with ErrClaimRaces.
//   - After a won claim (Recovery after the claim), a leader read from the
//     copy's last acknowledged offset to its own claim shows which pending
//     commits reached the stream. When no other copy wrote in between, the
//     remaining ones are resent under the new epoch, same order, same
//     content; when another copy did, they are dropped and the copy adopts
//     the stream's commits.
//   - Synced (Synced: the one rule for callers) returns once the stream
//     holds every commit made before the call and a round trip that started
//     after the call found the process still the owner. Do nothing visible
//     outside the process before it returns.
//   - A 403 epoch-closed resets the database (How a replaced owner learns of it):
//     waiting Synced calls fail, reset listeners run once (with no lock of
//     the DB held, so they may call Close), every later operation, reads
//     included, fails with an error matching ErrReset, and a Snapshot taken
//     earlier keeps answering. A reset DB never reopens on its own.
//   - The package also claims without being asked (Claims the package makes on its
//     own): when the stream has forgotten the producer, after a 413 (it
//     halves its batches, then claims), and when an offline open reaches the
//     stream. Such a claim is one epoch above the highest epoch the process
//     holds on the stream (not above a claim in its log that never arrived),
//     so any newer owner beats it. Before the offline case claims, it reads
//     the stream and gives up if any other copy wrote or claimed after the
//     process's last claim there.
//   - A 412, a stale incarnation token (When the stream rewrites its history), makes the copy read
//     the stream's new history. If every commit it had seen acknowledged is
//     still there, it carries on under the new token; if not, its files move
//     into salvage/ and the database resets.
//
// The local log is fsynced on every append, and its directory whenever a
// file is created or renamed in it; a torn last line (a crash during an
// append) is cut off at the next open. A directory is locked (dir/lock)
// while a DB has it open: a second Open fails with ErrInUse.
//
// Copies of a cache (Copies of a cache): a directory holds the copy's writer
// id and its claims, so a copy of a live directory, opened elsewhere, is the
// same writer as far as the stream can tell, and its open fences the
// original. To use the database on another host, open it by name into a
// fresh directory, which rebuilds from the stream.
//
// Prior art: Kafka's transactional producer fences a "zombie" instance the
// same way, by bumping the producer epoch of a transactional.id (KIP-98,
// "Exactly Once Delivery and Transactional Messaging", Apache Kafka, 2017).
package owner
