// Package chubby is a small model of the Chubby lock service and of the
// resource servers its locks protect, in simulated time. It is a library: the
// programs that print its transcripts are examples/chubby/zombie (the zombie
// writer, step by step) and examples/chubby/sweep (the seeded experiment).
//
// The core is pure in the style of etcd's raft package: no clock, no network,
// no goroutines. Every call takes the simulated time now (a time.Duration
// since the start of the run), and time given to one Cell may never go
// backwards. What the model keeps of Chubby (Mike Burrows, "The Chubby lock
// service for loosely-coupled distributed systems", OSDI 2006):
//
//   - sessions with a lease that a KeepAlive extends by Config.Lease (12s by
//     default, section 2.8); a session whose lease runs out expires, and so do
//     its locks;
//   - locks in exclusive or shared mode whose generation number grows each
//     time the lock goes from free to held (section 2.3);
//   - GetSequencer and CheckSequencer (sections 2.4 and 2.6): a Sequencer
//     names the lock, the mode and the generation, and is valid while the
//     lock is still held in that mode at that generation;
//   - lock-delay (section 2.4): when a lock becomes free because its holder's
//     session expired, nobody may take it for the holder's lock-delay, which
//     may be at most Config.MaxLockDelay (one minute in the paper). A normal
//     Release frees the lock at once.
//
// What it leaves out: the cell's replicas and their consensus protocol (one
// Cell is one master that never fails), the file contents, handles, events,
// caching and ACLs. ClientLease models the client's side of a session: its
// local lease, jeopardy and the grace period (45s by default, section 2.8).
//
// Server is a resource server in one of four modes (Unchecked, CheckAtCell,
// NewestSeen, and NewestSeen fed by the ownership record's fence notices),
// and Run plays a Scenario of clients, pauses and network delays against a
// Cell (or an ownership.Actor) and a Server, returning what the server
// applied and refused. Martin Kleppmann, "How to do distributed locking"
// (2016), gives the zombie writer this package's tests and programs replay:
// a holder pauses past its lease, another client takes the lock, and the
// first one wakes up and writes.
package chubby
