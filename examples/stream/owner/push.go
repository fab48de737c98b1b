package owner

import (
	"context"
	"fmt"
	"net/http"
)

// push appends pending commits in batches of at most maxBatch, each under
// the process's epoch and the next sequence number. A batch whose answer was
// lost is resent unchanged. It returns how many appends were acknowledged.
func (db *DB) push(ctx context.Context) (int, error) {
	appended, histories := 0, 0
	for {
		db.mu.Lock()
		if err := db.usable(); err != nil {
			db.mu.Unlock()
			return appended, err
		}
		if db.inflight == nil {
			if db.ackIndex >= uint64(len(db.commits)) {
				db.mu.Unlock()
				return appended, nil
			}
			db.inflight = db.nextBatch()
		}
		b, epoch, inc := db.inflight, db.epoch, db.inc
		db.mu.Unlock()

		res, err := db.c.Append(ctx, epoch, b.seq, inc, b.body)
		if err != nil {
			return appended, err
		}
		db.trace(Event{Kind: "append", Epoch: epoch, Seq: b.seq, Result: res})
		switch res.Status {
		case http.StatusOK, http.StatusNoContent:
			if err := db.acknowledge(b, res); err != nil {
				return appended, err
			}
			appended++
		case http.StatusForbidden:
			return appended, db.fenced(epoch, res)
		case http.StatusConflict:
			if res.Closed {
				return appended, closedStream(epoch, b.seq, db.c.Name)
			}
			// The stream does not know this producer at this sequence
			// number (it forgot an idle producer): claim again.
			if err := db.claimForgotten(ctx); err != nil {
				return appended, err
			}
		case http.StatusRequestEntityTooLarge:
			if err := db.shrink(b); err != nil {
				return appended, err
			}
			if err := db.claimUnasked(ctx, "limit", db.Epoch()); err != nil {
				return appended, err
			}
		case http.StatusPreconditionFailed:
			if histories++; histories == MaxClaimRounds {
				return appended, fmt.Errorf("append epoch %d seq %d to %q: the stream changed its history %d times during one push", epoch, b.seq, db.c.Name, histories)
			}
			if err := db.newHistory(ctx, res); err != nil {
				return appended, err
			}
		default:
			return appended, fmt.Errorf("append epoch %d seq %d to %q: status %d", epoch, b.seq, db.c.Name, res.Status)
		}
	}
}

// nextBatch builds the next batch of pending commits. Call with mu held.
func (db *DB) nextBatch() *batch {
	from := db.ackIndex
	to := min(uint64(len(db.commits)), from+uint64(db.maxBatch))
	recs := make([]record, 0, to-from)
	for _, c := range db.commits[from:to] {
		recs = append(recs, record{T: "commit", E: db.epoch, S: db.seq + 1, I: c.Index, W: c.Writer, K: c.Key, V: c.Value})
	}
	return &batch{seq: db.seq + 1, to: to, body: encode(recs...)}
}

func (db *DB) acknowledge(b *batch, res AppendResult) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.ackIndex, db.seq, db.last, db.inflight = b.to, b.seq, b, nil
	if res.Status == http.StatusOK && res.NextOffset != "" {
		// A 204 names the stream's tail, not the end of this batch.
		db.ackOffset = res.NextOffset
	}
	return db.log.append(record{T: "ack", E: db.read, I: db.ackIndex, O: db.ackOffset})
}

// shrink halves the batch size after a 413. A single commit the stream
// refuses cannot be sent at all.
func (db *DB) shrink(b *batch) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	n := int(b.to - db.ackIndex)
	if n <= 1 {
		return fmt.Errorf("stream %q: commit %d is larger than the stream's request limit", db.c.Name, b.to)
	}
	db.maxBatch = max(1, n/2)
	db.inflight = nil
	return nil
}

// closedStream is the error of an append refused because the stream is
// closed. A closed stream answers every append with 409 and Stream-Closed
// before it judges the epoch (PROTOCOL.md 5.2 "Error Precedence"), so the
// answer says nothing about who owns the database; no claim can apply
// either, so the process claims nothing and reports the refusal.
func closedStream(epoch, seq uint64, name string) error {
	return fmt.Errorf("append epoch %d seq %d to %q: status 409: the stream is closed and takes no more appends",
		epoch, seq, name)
}

func (db *DB) fenced(epoch uint64, res AppendResult) error {
	return db.reset(&ResetError{Kind: ResetFenced, Epoch: epoch, Current: res.Epoch,
		Detail: fmt.Sprintf("403 %s", res.Outcome)})
}

// probe is the round trip of Synced: it resends the last acknowledged append
// of this epoch. The stream checks the epoch before the sequence number, so a
// duplicate (204) means the epoch is still current and 403 means it closed.
// (On a closed stream both give way to 409 with Stream-Closed.)
func (db *DB) probe(ctx context.Context) error {
	for attempt := 0; attempt < 3; attempt++ {
		db.mu.Lock()
		b, epoch, inc := db.last, db.epoch, db.inc
		db.mu.Unlock()
		if b == nil {
			return fmt.Errorf("%s: synced before any claim", db.dir)
		}
		if b.seq == 0 {
			// The last acknowledged append is the claim. Sent again to a
			// stream that has forgotten the producer, it would be applied
			// anew, as a claim of this epoch after any newer one. A leader
			// read is the round trip instead: a newer owner's claim is a
			// record in the stream.
			return db.readProbe(ctx, epoch)
		}
		res, err := db.c.Append(ctx, epoch, b.seq, inc, b.body)
		if err != nil {
			return err
		}
		db.trace(Event{Kind: "probe", Epoch: epoch, Seq: b.seq, Result: res})
		switch res.Status {
		case http.StatusOK, http.StatusNoContent:
			return nil
		case http.StatusForbidden:
			return db.fenced(epoch, res)
		case http.StatusConflict:
			if res.Closed {
				return closedStream(epoch, b.seq, db.c.Name)
			}
			if err := db.claimForgotten(ctx); err != nil {
				return err
			}
			return nil // the claim was the round trip
		case http.StatusPreconditionFailed:
			if err := db.newHistory(ctx, res); err != nil {
				return err
			}
		default:
			return fmt.Errorf("probe epoch %d seq %d on %q: status %d", epoch, b.seq, db.c.Name, res.Status)
		}
	}
	return fmt.Errorf("probe on %q: the stream kept changing its history", db.c.Name)
}

// readProbe is the round trip of Synced when the process has sent nothing
// since its claim of epoch: a leader read from the acknowledged offset. A
// record of another writer at epoch or above, after the process's claim,
// is a newer owner's, and the database resets as fenced; one below it is a
// stale resend that a stream which forgot the producer took (a stream that
// fences would have refused it), and is no owner.
func (db *DB) readProbe(ctx context.Context, epoch uint64) error {
	recs, err := db.recordsSinceAck(ctx)
	if err != nil {
		return err
	}
	db.trace(Event{Kind: "probe", Epoch: epoch, Seq: 0})
	if r, ok := db.newerOwner(recs, epoch); ok {
		return db.reset(&ResetError{Kind: ResetFenced, Epoch: epoch, Current: r.E,
			Detail: fmt.Sprintf("the stream holds %s's record of epoch %d after this process's claim", r.W, r.E)})
	}
	return nil
}

// newerOwner returns the first record, among recs read from the copy's
// acknowledged offset, of another writer at epoch own or above after this
// process's claim of own (all of recs when the claim lies before the
// acknowledged offset). Lower epochs of other writers are stale resends
// that a stream which forgot the producer applied; they own nothing.
func (db *DB) newerOwner(recs []record, own uint64) (record, bool) {
	for i, r := range recs {
		if r.T == "claim" && r.W == db.id && r.N == db.nonce && r.E == own {
			recs = recs[i+1:]
			break
		}
	}
	for _, r := range recs {
		if r.W != db.id && r.E >= own {
			return r, true
		}
	}
	return record{}, false
}
