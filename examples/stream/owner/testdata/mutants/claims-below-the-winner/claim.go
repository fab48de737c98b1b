package owner

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
)

// ANCHOR: claim

// claimOpen takes the database over: it claims an epoch above every epoch
// this copy has seen and every epoch in the stream after the copy's
// acknowledged offset and, if another claim won, claims again above the
// winner's epoch, at most MaxClaimRounds times. Then it recovers.
// Reference: chapter "Owning a database through its stream", section "The claim".
func (db *DB) claimOpen(ctx context.Context) error {
	above := uint64(0)
	if db.fresh() {
		// A new copy has seen no epoch yet: it rebuilds from the stream
		// first, which also shows it the epochs already used there.
		if err := db.catchUp(ctx); err != nil {
			return err
		}
	} else {
		// A copy that has seen the stream reads what came after it.
		// A stream that forgot the producer accepts a claim at or below
		// an epoch already used there, and that claim hands the old epoch
		// back to its stale owner, whose next append then follows it.
		recs, err := db.recordsSinceAck(ctx)
		if err != nil {
			return err
		}
		for _, r := range recs {
			above = max(above, r.E)
		}
	}
	db.mu.Lock()
	above = max(above, db.seen)
	db.mu.Unlock()
	for round := 1; round <= MaxClaimRounds; round++ {
		epoch := above + 1
		res, won, err := db.claim(ctx, epoch, "open")
		if err == errClaimAgain {
			continue // a new history: the same epoch, in the next round
		}
		if err != nil {
			return err
		}
		if won {
			err := db.recoverAfter(ctx, epoch, res)
			var nf *notFencedError
			if !errors.As(err, &nf) {
				return err
			}
			// The stream had forgotten the producer: the claim fenced
			// nothing. Claim again above the epoch it let through.
			above = max(epoch, nf.Epoch)
			db.trace(Event{Kind: "lost", Reason: "open", Epoch: epoch, Result: res})
			continue
		}
		// Lost a race: the answer names the epoch that won.
		above = epoch
		db.trace(Event{Kind: "lost", Reason: "open", Epoch: epoch, Result: res})
	}
	return &ClaimRacesError{Stream: db.c.Name, Rounds: MaxClaimRounds, LastEpoch: above}
}

// claim writes a claim record to the local log and syncs it, then appends
// the claim: sequence number 0 under epoch. It reports whether the claim is
// this open's. A 204 (a claim of the same epoch is already there) is ours
// only if the stream holds our claim record, as after a lost answer.
func (db *DB) claim(
	ctx context.Context, epoch uint64, reason string,
) (AppendResult, bool, error) {
	db.mu.Lock()
	err := db.log.append(record{T: "claim", E: epoch, N: db.nonce})
	db.ownMax, db.seen = max(db.ownMax, epoch), max(db.seen, epoch)
	inc := db.inc
	db.mu.Unlock()
	if err != nil {
		return AppendResult{}, false, err
	}
	body := encode(record{T: "claim", E: epoch, W: db.id, N: db.nonce})
	res, err := db.c.Append(ctx, epoch, 0, inc, body)
	if err != nil {
		db.unsettled()
		return res, false, err
	}
	db.trace(Event{Kind: "claim", Reason: reason, Epoch: epoch, Result: res})
	switch res.Status {
	case http.StatusOK:
		return res, true, nil
	case http.StatusNoContent:
		ours, err := db.holdsOwnClaim(ctx, epoch)
		return res, ours, err
	case http.StatusForbidden:
		return res, false, nil
	case http.StatusConflict:
		// Sequence number 0 of an epoch is never a sequence gap: a 409
		// refuses the stream itself (closed, another content type). No
		// other owner won, so this is no lost race.
		return res, false, fmt.Errorf("claim epoch %d on %q: status 409: "+
			"the stream refused the append (closed, or another content type)",
			epoch, db.c.Name)
	case http.StatusPreconditionFailed:
		if err := db.newHistory(ctx, res); err != nil {
			return res, false, err
		}
		return res, false, errClaimAgain
	}
	return res, false, fmt.Errorf("claim epoch %d on %q: status %d",
		epoch, db.c.Name, res.Status)
}

// ANCHOR_END: claim

// errClaimAgain is claim's answer to a 412 after the copy took the new
// history: the claim did not apply and may be sent again, which costs the
// caller a round like a lost race, so that a stream that keeps changing its
// history cannot keep a claimant looping.
var errClaimAgain = errors.New("claim again under the new incarnation")

// unsettled is called when a claim may have applied but its recovery did not
// run: the process's old epoch may be closed, so nothing more is sent under
// it. The next Synced or Push goes live first (goLive), which finds the
// claim, as its own, and claims once more. Without this, the next append
// would go out under the closed epoch and fence the process by its own hand.
func (db *DB) unsettled() {
	db.mu.Lock()
	db.live, db.inflight = false, nil
	db.mu.Unlock()
}

// fresh reports whether this copy has never seen the stream.
func (db *DB) fresh() bool {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.seen == 0 && len(db.commits) == 0 && db.ackOffset == startOffset
}

// catchUp reads the whole stream into a new copy before its first claim.
func (db *DB) catchUp(ctx context.Context) error {
	data, next, inc, err := db.c.readAll(ctx, startOffset, true)
	if err != nil {
		return err
	}
	recs, err := decode(data)
	if err != nil {
		return fmt.Errorf("stream %q: %v", db.c.Name, err)
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if inc != "" && db.inc == "" {
		db.inc = inc
		if err := db.log.append(record{T: "inc", X: inc}); err != nil {
			return err
		}
	}
	m, err := db.merge(recs)
	if err != nil {
		return err
	}
	db.trace(Event{Kind: "catch-up", Epoch: db.seen, Taken: m.taken})
	db.ackOffset = next
	// The ack record keeps the epochs read: an offline open that never
	// won a claim goes live above them, even after a restart.
	return db.log.append(record{T: "ack", E: db.read, I: db.ackIndex, O: next})
}

// recordsSinceAck is a leader read of the stream from the acknowledged
// offset, decoded into records; a record that does not decode is an error
// naming the stream.
func (db *DB) recordsSinceAck(ctx context.Context) ([]record, error) {
	db.mu.Lock()
	from := db.ackOffset
	db.mu.Unlock()
	data, _, _, err := db.c.readAll(ctx, from, true)
	if err != nil {
		return nil, err
	}
	recs, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("stream %q: %v", db.c.Name, err)
	}
	return recs, nil
}

// holdsOwnClaim reads the stream after the acknowledged offset and reports
// whether it holds this open's claim of epoch.
func (db *DB) holdsOwnClaim(ctx context.Context, epoch uint64) (bool, error) {
	recs, err := db.recordsSinceAck(ctx)
	if err != nil {
		return false, err
	}
	for _, r := range recs {
		if r.T == "claim" && r.E == epoch && r.W == db.id && r.N == db.nonce {
			return true, nil
		}
	}
	return false, nil
}

// ANCHOR: recover

// recoverAfter runs after a won claim of epoch. A leader read from where the
// copy was acknowledged up to the claim shows which pending commits landed.
// If nobody else wrote, the rest stay pending, to be resent under epoch with
// order and content kept; if someone did, they are discarded and the copy
// takes the stream's commits instead.
// Reference: chapter "Owning a database through its stream", section "Recovery after the
// claim".
func (db *DB) recoverAfter(ctx context.Context, epoch uint64, claim AppendResult) error {
	db.mu.Lock()
	from := db.ackOffset
	db.mu.Unlock()
	data, next, inc, err := db.c.readAll(ctx, from, true)
	if err != nil {
		db.unsettled()
		return err
	}
	recs, err := decode(data)
	if err != nil {
		db.unsettled()
		return fmt.Errorf("stream %q: %v", db.c.Name, err)
	}
	upTo := -1 // our claim's position
	for i, r := range recs {
		if r.T == "claim" && r.E == epoch && r.W == db.id && r.N == db.nonce {
			upTo = i
			break
		}
	}
	if upTo < 0 {
		db.unsettled()
		return fmt.Errorf("stream %q: claim of epoch %d not found after offset %s",
			db.c.Name, epoch, from)
	}
	var nf *notFencedError
	for _, r := range recs[:upTo] {
		if r.E >= epoch && (nf == nil || r.E > nf.Epoch) {
			// A stream that fenced the epochs before ours would have
			// refused our claim; this one forgot the producer and took it.
			nf = &notFencedError{Stream: db.c.Name, Claimed: epoch, Epoch: r.E, Writer: r.W}
		}
	}
	if nf != nil {
		db.unsettled()
		return nf
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	m, err := db.merge(recs[:upTo])
	if err != nil {
		// The claim won but the copy is not settled: nothing more goes
		// out under the old epoch (see unsettled).
		db.live, db.inflight = false, nil
		return err
	}
	// From here on this process writes under epoch, from sequence number 1.
	db.epoch, db.seq, db.inflight = epoch, 0, nil
	db.last = &batch{seq: 0, to: db.ackIndex, body: encode(recs[upTo])}
	switch {
	case claim.Status == http.StatusOK && claim.NextOffset != "":
		db.ackOffset = claim.NextOffset
	case upTo == len(recs)-1:
		db.ackOffset = next
	}
	db.live = true
	db.trace(Event{Kind: "recover", Epoch: epoch,
		Landed: m.landed, Kept: m.kept, Discarded: m.discarded, Taken: m.taken})
	owner := []record{{T: "owner", E: epoch, I: db.ackIndex, O: db.ackOffset}}
	if db.inc == "" && inc != "" {
		// A copy that opened offline has no token yet: it follows the
		// history it has just read, or a restore would go unnoticed.
		db.inc = inc
		owner = append([]record{{T: "inc", X: inc}}, owner...)
	}
	return db.log.append(owner...)
}

// ANCHOR_END: recover

// notFencedError is recoverAfter's answer when the stream accepted a claim
// of Claimed although it already held a record of Epoch (≥ Claimed, the
// highest there) by Writer: it had forgotten the producer id (PROTOCOL.md 5.2.1 lets a store
// expire producer state), so the claim closed nothing and the process is
// not the owner. The claim is then lost like a race.
type notFencedError struct {
	Stream         string
	Claimed, Epoch uint64
	Writer         string
}

func (e *notFencedError) Error() string {
	return fmt.Sprintf("stream %q accepted the claim of epoch %d after a record of epoch %d by %s: it had forgotten the producer, and the claim fenced nothing",
		e.Stream, e.Claimed, e.Epoch, e.Writer)
}

// ANCHOR: merge

// merge walks stream records that follow the acknowledged point. A commit
// equal to the copy's next pending one landed; the first commit by anyone
// else discards the pending rest, and from there the stream's commits are
// taken (and the local log is rewritten). If the rewrite fails, the copy is
// left as it was. Call with mu held.
func (db *DB) merge(recs []record) (m merged, err error) {
	commits, cursor, seen, read := db.commits, db.ackIndex, db.seen, db.read
	diverged := false
	for _, r := range recs {
		seen, read = max(seen, r.E), max(read, r.E)
		if r.T != "commit" || r.I <= cursor {
			continue
		}
		if r.I != cursor+1 {
			return merged{}, fmt.Errorf("stream %q: commit %d follows commit %d",
				db.c.Name, r.I, cursor)
		}
		if !diverged && cursor < uint64(len(commits)) && commits[cursor] == r.commit() {
			m.landed++
			cursor++
			continue
		}
		if !diverged {
			diverged = true
			m.discarded = len(commits) - int(cursor)
			commits = append([]Commit(nil), commits[:cursor]...)
		}
		commits = append(commits, r.commit())
		m.taken++
		cursor++
	}
	m.kept = len(commits) - int(cursor)
	if diverged {
		if err := db.log.rewrite(db.logOf(commits, cursor)); err != nil {
			return merged{}, err
		}
		if m.discarded > 0 {
			db.discards++
		}
	}
	db.commits, db.ackIndex, db.seen, db.read = commits, cursor, seen, read
	if diverged {
		db.rebuild()
	}
	return m, nil
}

// merged counts what merge did.
type merged struct{ landed, kept, discarded, taken int }

// ANCHOR_END: merge

// rebuild recomputes the key-value state from the commits. Call with mu held.
func (db *DB) rebuild() {
	kv := make(map[string]string, len(db.kv))
	for _, c := range db.commits {
		kv[c.Key] = c.Value
	}
	db.kv, db.kvShared = kv, false
}

// logOf is the local log of a copy holding commits, of which the stream
// holds the first ackIndex. Call with mu held.
func (db *DB) logOf(commits []Commit, ackIndex uint64) []record {
	recs := make([]record, 0, len(commits)+3)
	for _, c := range commits {
		recs = append(recs, record{T: "commit", I: c.Index, W: c.Writer, K: c.Key, V: c.Value})
	}
	if db.inc != "" {
		recs = append(recs, record{T: "inc", X: db.inc})
	}
	recs = append(recs, record{T: "claim", E: db.ownMax})
	recs = append(recs, record{T: "owner", E: db.epoch, I: ackIndex, O: db.ackOffset})
	recs = append(recs, record{T: "ack", E: db.read, I: ackIndex, O: db.ackOffset})
	return recs
}

// ANCHOR: unasked

// claimUnasked is a claim nobody asked for: exactly one epoch above own,
// the highest epoch this process owns on the stream (or, after the stream
// forgot the producer and when going live, the highest epoch it read
// there), so any newer owner beats it, and being beaten resets the
// database. It is not one above the highest claim in the local log: a
// claim that never reached the stream (its request lost) would lift this
// one above the claim of an owner that opened meanwhile. Reference: chapter "Owning a database through its stream", section
// "Claims the package makes on its own".
func (db *DB) claimUnasked(ctx context.Context, reason string, own uint64) error {
	epoch := own + 1
	res, won, err := db.claim(ctx, epoch, reason)
	for round := 1; err == errClaimAgain; round++ {
		if round == MaxClaimRounds {
			return fmt.Errorf("claim epoch %d on %q: "+
				"the stream changed its history %d times in a row",
				epoch, db.c.Name, round)
		}
		res, won, err = db.claim(ctx, epoch, reason)
	}
	if err != nil {
		return err
	}
	if !won {
		return db.reset(&ResetError{
			Kind: ResetFenced, Epoch: epoch - 1, Current: res.Epoch,
			Detail: "a claim nobody asked for (" + reason + ") lost to a newer owner",
		})
	}
	err = db.recoverAfter(ctx, epoch, res)
	if nf := (*notFencedError)(nil); errors.As(err, &nf) {
		return db.reset(&ResetError{Kind: ResetFenced, Epoch: own, Current: nf.Epoch,
			Detail: "a claim nobody asked for (" + reason + "): " + nf.Error()})
	}
	return err
}

// claimForgotten is the claim after the stream answered 409 to an append
// under the process's epoch: it no longer knows the producer id (it
// expired idle producer state, PROTOCOL.md 5.2.1). A forgetting stream
// fences nothing, so the stream itself must say who owns the database: the
// process reads it from where it was acknowledged and resets as fenced if
// another writer claimed or wrote at its epoch or above after its claim
// (newerOwner); otherwise it claims one above the highest epoch written or
// claimed there. Reference: chapter "Owning a database through its
// stream", section "Claims the package makes on its own".
func (db *DB) claimForgotten(ctx context.Context) error {
	recs, err := db.recordsSinceAck(ctx)
	if err != nil {
		return err
	}
	own := db.Epoch()
	if r, ok := db.newerOwner(recs, own); ok {
		return db.reset(&ResetError{Kind: ResetFenced, Epoch: own, Current: r.E,
			Detail: "another process claimed or wrote while the stream forgot this process's producer state"})
	}
	for _, r := range recs {
		own = max(own, r.E)
	}
	return db.claimUnasked(ctx, "forgotten", own)
}

// noNewsAfterOwnClaim looks at stream records read from the copy's
// acknowledged offset. Only those after this copy's last claim there can be
// news: before its claim of its own epoch, the recovery after that claim
// read them (after a 412 the copy reads from the start of the new
// history); before a claim of this open whose answer was lost, they were
// there when this process took the database over, or that claim would
// have lost. That holds only for a record below the claim's epoch: a
// stream that forgot the producer takes a claim of any epoch, so a record
// of another writer at the claim's epoch or above, before it, was not
// fenced by it and may be an owner that opened meanwhile. A record of
// another writer after the claim, or such a one before it, resets the
// database as fenced (detail says why). Otherwise it returns the highest
// epoch of own, of the records and of those the copy read on the stream
// before (DB.read), above which the next claim goes: a claim at or below an
// epoch already used there would be taken by a stream that forgot the
// producer, and would hand that epoch back to its stale owner.
func (db *DB) noNewsAfterOwnClaim(recs []record, own uint64, detail string) (uint64, error) {
	db.mu.Lock()
	top := max(own, db.read)
	db.mu.Unlock()
	for _, r := range recs {
		top = max(top, r.E)
	}
	for i := len(recs) - 1; i >= 0; i-- {
		r := recs[i]
		ours := r.N == db.nonce || (own > 0 && r.E == own)
		if r.T == "claim" && r.W == db.id && ours {
			for _, o := range recs[:i] {
				if o.W != db.id && o.E >= r.E {
					return top, db.reset(&ResetError{Kind: ResetFenced, Epoch: own, Current: o.E, Detail: detail})
				}
			}
			recs = recs[i+1:]
			own = max(own, r.E)
			break
		}
	}
	for _, r := range recs {
		if r.W != db.id {
			return top, db.reset(&ResetError{Kind: ResetFenced, Epoch: own, Current: r.E, Detail: detail})
		}
	}
	return top, nil
}

// goLive ends an offline open. It reads the stream from where the copy was
// acknowledged and claims, above every epoch its copy read on the stream,
// only if no other copy has written or claimed after this copy's last claim
// there. Otherwise the database resets: someone
// opened it while this process was cut off, and a process returning from a
// partition must not take it back.
func (db *DB) goLive(ctx context.Context) error {
	if err := db.c.Create(ctx); err != nil {
		return err
	}
	db.mu.Lock()
	from, cur := db.ackOffset, db.inc
	db.mu.Unlock()
	data, _, inc, err := db.c.readAll(ctx, from, true)
	if (err == nil && inc != "" && cur != "" && inc != cur) ||
		(err != nil && !errors.Is(err, ErrUnreachable) && from != startOffset) {
		// The stream took a new history while this copy was away (its
		// offset may not even exist any more): settle that first, as
		// after a 412, then read the new history from its start.
		if err := db.newHistory(ctx, AppendResult{}); err != nil {
			return err
		}
		data, _, _, err = db.c.readAll(ctx, startOffset, true)
	}
	if err != nil {
		return err
	}
	recs, err := decode(data)
	if err != nil {
		return fmt.Errorf("stream %q: %v", db.c.Name, err)
	}
	own, err := db.noNewsAfterOwnClaim(recs, db.Epoch(), "another process wrote or claimed while this open was offline")
	if err != nil {
		return err
	}
	return db.claimUnasked(ctx, "live", own)
}

// ANCHOR_END: unasked

// ANCHOR: history

// newHistory handles a 412: the stream's incarnation changed, so bytes it
// served before may differ now. If the new history still contains each
// commit acknowledged to this copy, the copy adopts the new token; if any is
// missing, the copy's files move into salvage/ and the database resets.
// Reference: chapter "Owning a database through its stream", section "When the stream rewrites its history".
func (db *DB) newHistory(ctx context.Context, res AppendResult) error {
	data, _, inc, err := db.c.readAll(ctx, startOffset, true)
	if err != nil {
		return err
	}
	if res.Incarnation != "" {
		inc = res.Incarnation
	}
	recs, err := decode(data)
	if err != nil {
		return fmt.Errorf("stream %q: %v", db.c.Name, err)
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	kept := uint64(0)
	for _, r := range recs {
		if r.T == "commit" && r.I == kept+1 && kept < db.ackIndex && db.commits[kept] == r.commit() {
			kept++
		}
	}
	db.trace(Event{Kind: "new-history", Epoch: db.epoch, Landed: int(kept)})
	if kept == db.ackIndex {
		if inc != "" {
			db.inc = inc
		}
		db.ackOffset = startOffset // offsets of the old history mean nothing now
		return db.log.append(record{T: "inc", X: db.inc}, record{T: "ack", E: db.read, I: db.ackIndex, O: startOffset})
	}
	salvage, err := db.moveToSalvage()
	e := &ResetError{Dir: db.dir, Kind: ResetNewHistory, Epoch: db.epoch, Salvage: salvage,
		Detail: fmt.Sprintf("the stream keeps %d of %d acknowledged commits", kept, db.ackIndex)}
	if err != nil {
		e.Detail += "; salvage failed: " + err.Error()
	}
	db.mu.Unlock()
	rerr := db.reset(e)
	db.mu.Lock()
	return rerr
}

// ANCHOR_END: history

// moveToSalvage moves the copy's files into dir/salvage/<n>/. Call with mu
// held.
func (db *DB) moveToSalvage() (string, error) {
	var dst string
	for n := 1; ; n++ {
		dst = filepath.Join(db.dir, "salvage", fmt.Sprint(n))
		if _, err := os.Stat(dst); os.IsNotExist(err) {
			break
		}
	}
	if err := mkdirSynced(dst); err != nil {
		return "", err
	}
	db.log.close()
	for _, name := range []string{"log", "id"} {
		if err := os.Rename(filepath.Join(db.dir, name), filepath.Join(dst, name)); err != nil && !os.IsNotExist(err) {
			return dst, err
		}
	}
	// A rename changes two directories: both are fsynced.
	if err := syncDir(dst); err != nil {
		return dst, err
	}
	if err := syncDir(db.dir); err != nil {
		return dst, err
	}
	// Later log writes go nowhere useful; the DB is reset anyway.
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err == nil {
		db.log.f = f
	}
	return dst, nil
}
