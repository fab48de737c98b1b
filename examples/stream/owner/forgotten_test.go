package owner

import (
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
