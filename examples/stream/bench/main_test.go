package main

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ownership-book/ownership/examples/stream"
	"github.com/ownership-book/ownership/examples/stream/server"
)

// TestLoadCountsAcknowledgedAppends runs the load briefly against a local
// machine and checks that every counted append is in the stream exactly
// once: the stream's length is the count times the append size.
func TestLoadCountsAcknowledgedAppends(t *testing.T) {
	m := stream.NewMachine()
	ts := httptest.NewServer(&server.Server{M: m, A: server.Local{M: m}})
	defer ts.Close()
	r, err := load("local", ts.URL, 3, 10, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if r.n == 0 || r.errs != 0 || r.p50 > r.p99 {
		t.Fatalf("result %+v", r)
	}
	info, o := m.Stat("bench", time.Now().UnixNano())
	if o != "" || info.Tail != int64(r.n*10) {
		t.Fatalf("stream holds %d bytes (%s), want %d appends of 10", info.Tail, o, r.n)
	}
	t.Logf("%d appends in %s", r.n, r.elapsed)
}
