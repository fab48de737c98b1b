package node

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ownership-book/ownership/examples/stream"
)

// TestSweepThroughTheLog: expired streams and idle producers leave every
// voter's state through the log (the leader commits an OpSweep), not only
// when a later command names them: 50 streams with Stream-TTL: 1 are gone
// from all three voters' snapshots a moment after they expire, and a
// producer idle for longer than ProducerTTL is forgotten, so its next
// sequence number is a gap (409) and it must claim anew. Reference:
// PROTOCOL.md 5.1 (Stream-TTL), 5.2.1 (producer state expiry).
func TestSweepThroughTheLog(t *testing.T) {
	c, err := Start(Options{Voters: 3, SweepInterval: 20 * time.Millisecond, ProducerTTL: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	leader, err := c.Leader(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, path string, h map[string]string, body string) int {
		t.Helper()
		req, _ := http.NewRequest(method, leader.URL+path, strings.NewReader(body))
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for i := range 50 {
		if s := do("PUT", fmt.Sprintf("/v1/stream/t%d", i), map[string]string{"Content-Type": "text/plain", "Stream-TTL": "1"}, ""); s != 201 {
			t.Fatalf("create t%d: %d", i, s)
		}
	}
	do("PUT", "/v1/stream/keep", map[string]string{"Content-Type": "text/plain"}, "")
	prod := func(seq int) int {
		return do("POST", "/v1/stream/keep", map[string]string{"Content-Type": "text/plain",
			"Producer-Id": "p", "Producer-Epoch": "1", "Producer-Seq": fmt.Sprint(seq)}, "x")
	}
	if s := prod(0); s != 200 {
		t.Fatalf("producer p seq 0: %d", s)
	}
	streams := func(nd *Node) int {
		b, err := nd.Machine.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		var st stream.State
		if err := json.Unmarshal(b, &st); err != nil {
			t.Fatal(err)
		}
		return len(st.Streams)
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, nd := range c.Nodes {
		for streams(nd) != 1 {
			if time.Now().After(deadline) {
				t.Fatalf("voter %s still holds %d streams 5s after 50 of them expired, want 1 (keep)", nd.ID, streams(nd))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	time.Sleep(600 * time.Millisecond) // p idle for longer than ProducerTTL, then swept
	if s := prod(1); s != http.StatusConflict {
		t.Fatalf("producer p's seq 1 after idling past ProducerTTL: %d, want 409 (forgotten: a gap)", s)
	}
	if s := prod(0); s != 200 {
		t.Fatalf("producer p starting again at seq 0: %d, want 200", s)
	}
}
