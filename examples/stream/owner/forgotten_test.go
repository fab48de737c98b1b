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
// "Taking a database over", section on the stream forgetting a producer.
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
// Reference: PROTOCOL.md 5.2.1 (producer state expiry); chapter "Taking a
// database over", section on the stream forgetting a producer.
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
