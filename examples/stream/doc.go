// Package stream is the state machine of an epoch-fenced stream: a Durable
// Streams server's streams, offsets and idempotent producers, as a pure
// function from (state, command) to (state, result).
//
// An append may name its producer in three headers, Producer-Id,
// Producer-Epoch and Producer-Seq (Durable Streams PROTOCOL.md, section 5.2.1
// "Idempotent Producers"). The machine keeps, per (stream, producer id), the
// producer's current epoch and the last sequence number applied in it, and
// refuses an append of an older epoch. That refusal is the fence. Because the
// machine runs on every voter of a Raft group, in log order, every voter
// refuses the same appends: keeping one writer takes neither a lock server
// nor a lease (chapter "The epoch-fenced stream").
//
// An append without producer headers passes beside the fence, as the
// protocol has it, unless the stream was created with FenceRequired (this
// book's Stream-Fence header): then, once any producer has written, such an
// append is refused with ProducerRequired (chapter "The epoch-fenced
// stream", section "What the fence covers").
//
// The package does no I/O and reads no clock: time enters as Command.Now,
// stamped by the leader before it proposes the command, so expiry decides the
// same way on every voter. The HTTP server (streamd) and the Raft group live
// around it.
package stream
