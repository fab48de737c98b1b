package server

import (
	"strconv"
	"testing"

	"github.com/ownership-book/ownership/examples/stream"
)

// TestNumbersAtTheirLimits drives producer epochs and sequence numbers to
// 2^53-1 (the largest the protocol allows, PROTOCOL.md 5.2.1) and one past
// it, and offsets to the tail and past it: the largest values work, the
// next are refused with 400 and change nothing.
func TestNumbersAtTheirLimits(t *testing.T) {
	s, m := newServer()
	max := strconv.FormatUint(stream.MaxProducerNumber, 10)
	over := strconv.FormatUint(stream.MaxProducerNumber+1, 10)
	huge := "18446744073709551616" // 2^64
	steps := []struct {
		r      req
		status int
	}{
		{req{"PUT", "/v1/stream/s", map[string]string{"Content-Type": "text/plain"}, ""}, 201},
		{req{"POST", "/v1/stream/s", prod(max, "0"), "a"}, 200},
		{req{"POST", "/v1/stream/s", prod(over, "0"), "b"}, 400},
		{req{"POST", "/v1/stream/s", prod(huge, "0"), "b"}, 400},
		{req{"POST", "/v1/stream/s", prod(max, "1"), "c"}, 200},
		{req{"POST", "/v1/stream/s", prod(max, over), "d"}, 400},
		{req{"POST", "/v1/stream/s", map[string]string{"Content-Type": "text/plain", HeaderProducerID: "q",
			HeaderProducerEpoch: "0", HeaderProducerSeq: max}, "e"}, 409}, // unknown producer: a gap
		{req{"POST", "/v1/stream/s", map[string]string{"Content-Type": "text/plain", HeaderSeq: huge + huge}, "f"}, 204},
		{req{"GET", "/v1/stream/s?offset=" + FormatOffset(3), nil, ""}, 200},
		{req{"GET", "/v1/stream/s?offset=" + FormatOffset(4), nil, ""}, 400},
		{req{"GET", "/v1/stream/s?offset=" + "0000000000000000_9999999999999999", nil, ""}, 400},
		{req{"GET", "/v1/stream/s?offset=" + FormatOffset(3) + "&live=long-poll", nil, ""}, 204},
	}
	for i, st := range steps {
		before, _ := m.Snapshot()
		w := do(t, s, st.r)
		if w.Code != st.status {
			t.Errorf("step %d %s %s %v: %d %q, want %d", i, st.r.method, st.r.path, st.r.h, w.Code, w.Body, st.status)
		}
		if after, _ := m.Snapshot(); st.status >= 400 && string(after) != string(before) {
			t.Errorf("step %d: refused with %d but the state changed", i, w.Code)
		}
	}
	w := do(t, s, req{"GET", "/v1/stream/s?offset=-1", nil, ""})
	if w.Body.String() != "acf" {
		t.Errorf("stream holds %q, want \"acf\"", w.Body)
	}
}
