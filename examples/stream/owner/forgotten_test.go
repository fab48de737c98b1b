package owner

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/ownership-book/ownership/examples/stream/node"
)

// TestForgottenByTheRealServer runs "the stream forgot the producer"
// against streamd's own voter (package node) instead of an edited snapshot:
// the voter's ProducerTTL is 300 ms, so after A idles past it the leader's
// OpSweep forgets A's producer id; A's next append finds a gap, and A claims
// one epoch above its own (reason "forgotten") and carries on, with nothing
// lost. Reference: PROTOCOL.md 5.2.1 (producer state expiry); chapter
// "Owning a database through its stream", section "Claims the package makes
// on its own".
func TestForgottenByTheRealServer(t *testing.T) {
	c, err := node.Start(node.Options{SweepInterval: 20 * time.Millisecond, ProducerTTL: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cl := &Client{Base: c.Nodes[0].URL, Name: "db", ProducerID: "db-writer", HTTP: http.DefaultClient}
	var evs []Event
	a, err := Open(bg, t.TempDir(), Options{Stream: cl, ID: "A", Manual: true, Trace: func(e Event) {
		if e.Kind == "claim" {
			evs = append(evs, e)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.Put("a", "1"); err != nil {
		t.Fatal(err)
	}
	if err := a.Synced(bg); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond) // idle past ProducerTTL; swept through the log
	if err := a.Put("b", "2"); err != nil {
		t.Fatal(err)
	}
	if err := a.Synced(bg); err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].Reason != "open" || evs[1].Reason != "forgotten" || evs[1].Epoch != evs[0].Epoch+1 {
		t.Fatalf("claims = %+v, want open, then forgotten one epoch above", evs)
	}
	if v, ok, err := a.Get("b"); err != nil || !ok || v != "2" {
		t.Fatalf("b = %q, %v, %v after the claim", v, ok, err)
	}
}

// TestForgettingServerLosesNoSyncedCommit: A owns the database at epoch 1,
// B opens it (epoch 2, which fences A), and both idle until the stream, an
// in-memory voter with a 300 ms producer TTL, forgets the shared producer
// id. Then A commits and calls Synced, and B (which has sent nothing but
// its claim) does the same. Re-claiming
// one epoch above its own would put A at epoch 2 next to B, and B's next
// append would be taken as a duplicate of A's: acknowledged, never
// appended. A reads the stream before it claims after "forgotten", sees
// B's newer claim, and resets as fenced; B's commit is in the stream.
// Reference: PROTOCOL.md 5.2.1 (producer state expiry); chapter "Owning a
// database through its stream", section "Claims the package makes on its
// own".
func TestForgettingServerLosesNoSyncedCommit(t *testing.T) {
	c, err := node.Start(node.Options{SweepInterval: 20 * time.Millisecond, ProducerTTL: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cl := func() *Client {
		return &Client{Base: c.Nodes[0].URL, Name: "db", ProducerID: "db-writer", HTTP: http.DefaultClient}
	}
	open := func(id string) *DB {
		db, err := Open(bg, t.TempDir(), Options{Stream: cl(), ID: id, Manual: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	a := open("A")
	if err := a.Put("k", "A1"); err != nil {
		t.Fatal(err)
	}
	if err := a.Synced(bg); err != nil {
		t.Fatal(err)
	}
	b := open("B")                     // its claim is all it has sent
	time.Sleep(700 * time.Millisecond) // both idle past the producer TTL; swept
	var acked []Commit
	for _, db := range []*DB{a, b} {
		if err := db.Put("k", db.opts.ID+"2"); err != nil {
			t.Fatal(err)
		}
		before, err := db.Commits()
		if err != nil {
			t.Fatal(err)
		}
		err = db.Synced(bg)
		switch {
		case err == nil:
			acked = append(acked, before...)
		case db == b:
			t.Errorf("B's Synced: %v", err)
		}
		if db == a && !errors.Is(err, ErrReset) {
			t.Errorf("A's Synced after B had fenced it: %v, want a reset", err)
		}
	}
	data, _, _, err := cl().readAll(bg, startOffset, true)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := decode(data)
	if err != nil {
		t.Fatal(err)
	}
	var history []Commit
	for _, r := range recs {
		if r.T == "commit" {
			history = append(history, r.commit())
		}
	}
	for _, x := range acked {
		if x.Index > uint64(len(history)) || history[x.Index-1] != x {
			t.Errorf("acknowledged commit %+v lost; the stream holds %+v", x, history)
		}
	}
}

// TestReopenAfterForgettingClaimsAboveTheStream is the schedule TestSchedules
// found (its fail file is kept in testdata/rapid/TestSchedules): A owns the
// database at epoch 1 and B at 2; the stream forgets its producer; C claims
// 3, which closes nothing; A's next append is refused (403, current epoch
// 3) and A resets; the stream forgets again; an operator reopens A, whose
// copy has seen epochs up to 1 only, and the answer to its claim is lost, so
// A opens offline. Had A claimed one above what its copy had seen (2), the
// forgetting stream would have taken that claim and handed epoch 2 back to
// B, whose stale append (epoch 2, sequence 1) would follow it as the next
// append of that epoch: a fenced owner's commit applied, and acknowledged
// by Synced, after C's epoch 3. A reads the stream after its acknowledged
// offset before it claims, and claims above epoch 3, so B's append is
// refused and B resets. Reference: PROTOCOL.md 5.2.1 (producer state
// expiry); chapter "Owning a database through its stream", section "The
// claim".
func TestReopenAfterForgettingClaimsAboveTheStream(t *testing.T) {
	ts := newTestStream(t)
	dirA := t.TempDir()
	a, _ := ts.mustOpen(dirA, "A")
	b, _ := ts.mustOpen(t.TempDir(), "B")
	ts.forgetProducer()
	ts.mustOpen(t.TempDir(), "C")
	if err := a.Put("k", "A1"); err != nil {
		t.Fatal(err)
	}
	var re *ResetError
	if err := a.Push(bg); !errors.As(err, &re) || re.Kind != ResetFenced || re.Current != 3 {
		t.Fatalf("A's push after C's claim: %v, want a reset fenced by epoch 3", err)
	}
	a.Close()
	ts.forgetProducer()

	c, l := ts.client()
	lost := false
	l.setFault(func(r *http.Request) (bool, bool) {
		if isClaim(r) && !lost {
			lost = true
			return false, true // applied, answer lost
		}
		return false, false
	})
	a, err := Open(bg, dirA, Options{Stream: c, ID: "A", Manual: true})
	if err != nil {
		t.Fatalf("reopen A: %v", err)
	}
	defer a.Close()
	if !lost {
		t.Fatal("A's reopen sent no claim")
	}
	if epoch, _ := ts.producer(); epoch <= 3 {
		t.Errorf("the stream's producer epoch after A's reopen is %d, want above 3 (C's claim)", epoch)
	}

	if err := b.Put("k", "B1"); err != nil {
		t.Fatal(err)
	}
	if err := b.Synced(bg); !errors.Is(err, ErrReset) {
		t.Errorf("B's Synced at epoch 2, after C's claim of 3: %v, want a reset", err)
	}
	var top uint64
	for i, r := range ts.records() {
		if r.T == "commit" && r.E < top {
			t.Errorf("record %d (%+v) has epoch %d after epoch %d: a fenced append applied", i, r, r.E, top)
		}
		top = max(top, r.E)
	}
}

// offlineAfterCatchUp opens B fresh against ts after A claimed epoch 1 and
// C epoch 2 and the stream forgot its producer: B's catch-up reads both
// claims, and the request of B's claim (3) is lost, so B opens offline,
// having never won a claim.
func offlineAfterCatchUp(t *testing.T, ts *testStream, dirB string) (b, c *DB) {
	t.Helper()
	ts.mustOpen(t.TempDir(), "A")
	c, _ = ts.mustOpen(t.TempDir(), "C")
	ts.forgetProducer()
	cl, l := ts.client()
	dropped := false
	l.setFault(func(r *http.Request) (bool, bool) {
		if isClaim(r) && !dropped {
			dropped = true
			return true, false // the claim's request is lost
		}
		return false, false
	})
	b, err := Open(bg, dirB, Options{Stream: cl, ID: "B", Manual: true})
	if err != nil {
		t.Fatalf("open B: %v", err)
	}
	if !dropped || b.Live() {
		t.Fatalf("B's open: claim dropped %v, live %v; want an offline open after a lost claim", dropped, b.Live())
	}
	return b, c
}

// checkGoLiveAboveTheStream has B go live (Push) and checks that its claim
// went above C's epoch 2 and that no commit follows a newer epoch on the
// stream; then C's Synced must reset.
func checkGoLiveAboveTheStream(t *testing.T, ts *testStream, b, c *DB) {
	t.Helper()
	if err := b.Put("k", "B1"); err != nil {
		t.Fatal(err)
	}
	if err := b.Push(bg); err != nil {
		t.Fatalf("B's push (going live): %v", err)
	}
	if e := b.Epoch(); e <= 2 {
		t.Errorf("B went live at epoch %d, want above 2 (C's claim)", e)
	}
	var top uint64
	for i, r := range ts.records() {
		if r.E < top {
			t.Errorf("record %d (%+v) has epoch %d after epoch %d: a claim or append applied below a newer owner", i, r, r.E, top)
		}
		top = max(top, r.E)
	}
	if err := c.Synced(bg); !errors.Is(err, ErrReset) {
		t.Errorf("C's Synced at epoch 2 after B went live: %v, want a reset", err)
	}
}

// TestGoLiveAfterCatchUpClaimsAboveTheStream is the schedule TestSchedules
// found (its second fail file in testdata/rapid/TestSchedules): A claims
// epoch 1 and C epoch 2; the stream forgets its producer; B opens a new
// copy, whose catch-up reads both claims, and B's claim is lost on the way,
// so B opens offline with no epoch of its own. Going live, B claimed one
// above its own epoch (0): the forgetting stream took a claim of epoch 1
// after C's 2, and B's commit at epoch 1 followed it. B claims above the
// epochs its copy read on the stream instead, and C is fenced. Reference:
// PROTOCOL.md 5.2.1 (producer state expiry); chapter "Owning a database
// through its stream", section "Claims the package makes on its own".
func TestGoLiveAfterCatchUpClaimsAboveTheStream(t *testing.T) {
	ts := newTestStream(t)
	b, c := offlineAfterCatchUp(t, ts, t.TempDir())
	defer b.Close()
	checkGoLiveAboveTheStream(t, ts, b, c)
}

// TestGoLiveAfterOfflineReopenClaimsAboveTheStream is the schedule of
// TestGoLiveAfterCatchUpClaimsAboveTheStream with B closed after its
// offline open and reopened while the stream is unreachable: the epochs B's
// catch-up read must survive in the local log, because the reopened copy
// reads the stream only after its acknowledged offset, past C's claim.
// Reference: PROTOCOL.md 5.2.1 (producer state expiry); chapter "Owning a
// database through its stream", section "Claims the package makes on its
// own".
func TestGoLiveAfterOfflineReopenClaimsAboveTheStream(t *testing.T) {
	ts := newTestStream(t)
	dirB := t.TempDir()
	b, c := offlineAfterCatchUp(t, ts, dirB)
	b.Close()
	cl, l := ts.client()
	l.setDown(true)
	b, err := Open(bg, dirB, Options{Stream: cl, ID: "B", Manual: true})
	if err != nil {
		t.Fatalf("reopen B: %v", err)
	}
	defer b.Close()
	if b.Live() {
		t.Fatal("B's reopen went live through a partitioned link")
	}
	l.setDown(false)
	checkGoLiveAboveTheStream(t, ts, b, c)
}

// TestGoLiveAfterAClaimTheStreamShouldHaveRefused: A claims epoch 1; B
// opens a new copy and, while its claim of epoch 2 is on the way, C opens
// and claims 2 and the stream forgets its producer, so B's claim of 2 is
// applied after C's (a stream that remembers would have taken it for a
// duplicate), and its answer is lost: B opens offline. B's claim is the
// last one on the stream, but it fenced nothing: C, which opened while B's
// open was under way, owns the database. Going live, B must not take it
// back: a record of another writer at B's claim's epoch or above before
// that claim counts like one after it, and B resets. Reference: PROTOCOL.md
// 5.2.1 (producer state expiry); chapter "Owning a database through its
// stream", section "Claims the package makes on its own".
func TestGoLiveAfterAClaimTheStreamShouldHaveRefused(t *testing.T) {
	ts := newTestStream(t)
	ts.mustOpen(t.TempDir(), "A")
	var c *DB
	cl, l := ts.client()
	l.setFault(func(r *http.Request) (bool, bool) {
		if !isClaim(r) || c != nil {
			return false, false
		}
		c, _ = ts.mustOpen(t.TempDir(), "C")
		ts.forgetProducer()
		return false, true // B's claim applies after C's; its answer is lost
	})
	b, err := Open(bg, t.TempDir(), Options{Stream: cl, ID: "B", Manual: true})
	if err != nil {
		t.Fatalf("open B: %v", err)
	}
	defer b.Close()
	if c == nil || b.Live() {
		t.Fatalf("B's open: C opened during B's claim %v, B live %v; want C's open, then B offline", c != nil, b.Live())
	}
	if c.Epoch() != 2 {
		t.Fatalf("C's epoch is %d, want 2", c.Epoch())
	}
	recs := ts.records()
	if n := len(recs); n != 3 || recs[1].W != "C" || recs[2].W != "B" || recs[2].E != 2 {
		t.Fatalf("stream %+v, want A's claim, C's claim of 2, B's claim of 2", recs)
	}

	if err := b.Put("k", "B1"); err != nil {
		t.Fatal(err)
	}
	var re *ResetError
	if err := b.Push(bg); !errors.As(err, &re) || re.Kind != ResetFenced || re.Current != 2 {
		t.Errorf("B's push (going live): %v, want a reset fenced by C's epoch 2", err)
	}
	if n := len(ts.records()); n != 3 {
		t.Errorf("B went live: the stream has %d records, want the 3 it had", n)
	}
	if err := c.Put("k", "C1"); err != nil {
		t.Fatal(err)
	}
	if err := c.Synced(bg); err != nil {
		t.Errorf("C's Synced: %v, want C still the owner", err)
	}
}
