package node

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestDurableStreamKeepsProducers is the paused-owner case against a voter
// that keeps its data on disk: A writes at epoch 7, B claims epoch 8 (which
// closes 7), and A, idle for longer than the producer TTL, sends its next
// append again. A durable stream keeps producer state for as long as its
// data exists (PROTOCOL.md 5.2.1, persistent stores), so the fence still
// stands: 403, never the 409 of a forgotten producer after which A's
// re-claim at 8 would be accepted next to B's (two writers under epoch 8).
// The same schedule with ForgetProducers, the operator's explicit choice,
// forgets A: that is the documented risk. Reference: PROTOCOL.md 5.2.1;
// chapter "The epoch-fenced stream".
func TestDurableStreamKeepsProducers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		forget bool
		want   int // A's epoch-7 append after idling
	}{
		{"durable", false, http.StatusForbidden},
		{"durable, ForgetProducers", true, http.StatusConflict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Start(Options{Dir: t.TempDir(), SweepInterval: 20 * time.Millisecond,
				ProducerTTL: 300 * time.Millisecond, ForgetProducers: tc.forget})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			url := c.Nodes[0].URL + "/v1/stream/db"
			do := func(method string, epoch, seq int, body string) int {
				t.Helper()
				req, _ := http.NewRequest(method, url, strings.NewReader(body))
				req.Header.Set("Content-Type", "text/plain")
				if epoch >= 0 {
					req.Header.Set("Producer-Id", "db-writer")
					req.Header.Set("Producer-Epoch", fmt.Sprint(epoch))
					req.Header.Set("Producer-Seq", fmt.Sprint(seq))
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			if s := do("PUT", -1, 0, ""); s != http.StatusCreated {
				t.Fatalf("create: %d", s)
			}
			for i, st := range []struct{ epoch, seq, want int }{
				{7, 0, 200}, // A's claim
				{7, 1, 200}, // A's write
				{8, 0, 200}, // B's claim closes 7 at seq 1
				{7, 2, 403}, // A is fenced
			} {
				if s := do("POST", st.epoch, st.seq, fmt.Sprint("x", i)); s != st.want {
					t.Fatalf("append epoch %d seq %d: %d, want %d", st.epoch, st.seq, s, st.want)
				}
			}
			time.Sleep(800 * time.Millisecond) // idle for longer than ProducerTTL, sweeps every 20 ms
			if s := do("POST", 7, 2, "late"); s != tc.want {
				t.Fatalf("A's epoch 7 seq 2 after idling past the producer TTL: %d, want %d", s, tc.want)
			}
		})
	}
}

// TestProducerTTLOptions: a durable group never forgets producers unless
// asked; asking needs a TTL; an in-memory group defaults to 7 days.
func TestProducerTTLOptions(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		want time.Duration
		err  bool
	}{
		{Options{}, DefaultProducerTTL, false},
		{Options{ProducerTTL: time.Second}, time.Second, false},
		{Options{ProducerTTL: -1}, 0, false},
		{Options{Dir: "d"}, 0, false},
		{Options{Dir: "d", ProducerTTL: time.Second}, 0, false},
		{Options{Dir: "d", ProducerTTL: time.Second, ForgetProducers: true}, time.Second, false},
		{Options{Dir: "d", ForgetProducers: true}, 0, true},
	} {
		got, err := producerTTL(tc.opts)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("producerTTL(%+v) = %v, %v; want %v, error %v", tc.opts, got, err, tc.want, tc.err)
		}
	}
}
