package server

import (
	"bytes"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ownership-book/ownership/examples/stream"
)

type req struct {
	method, path string
	h            map[string]string
	body         string
}

func prod(epoch, seq string) map[string]string {
	return map[string]string{"Content-Type": "text/plain", HeaderProducerID: "p",
		HeaderProducerEpoch: epoch, HeaderProducerSeq: seq}
}

func newServer() (*Server, *stream.Machine) {
	m := stream.NewMachine()
	return &Server{M: m, A: Local{M: m}, MaxBody: 64, LongPoll: 50 * time.Millisecond,
		Now: func() time.Time { return time.Unix(1_700_000_000, 0) }}, m
}

func do(t *testing.T, s *Server, r req) *httptest.ResponseRecorder {
	t.Helper()
	hr := httptest.NewRequest(r.method, "http://stream.test"+r.path, strings.NewReader(r.body))
	for k, v := range r.h {
		hr.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, hr)
	return w
}

// TestProducerStatuses sends, after a fixed history, one request per row and
// checks its status and the headers the protocol (or this book) promises
// with it; a refused request must leave the state as it was.
// Reference: PROTOCOL.md 5.2.1 "Response Codes (with Producer Headers)" and
// "Response Headers"; 5.2 (400, 404, 409, 413); chapter "The epoch-fenced
// stream", section "The HTTP surface" (Producer-Outcome on the 403, the
// claim's Producer-Closed-* headers, 412 on a stale Stream-Incarnation).
func TestProducerStatuses(t *testing.T) {
	history := []req{
		{"PUT", "/v1/stream/s", map[string]string{"Content-Type": "text/plain"}, ""},
		{"POST", "/v1/stream/s", prod("7", "0"), "a0"},
		{"POST", "/v1/stream/s", prod("7", "1"), "a1"},
		{"PUT", "/v1/stream/ttl", map[string]string{"Content-Type": "text/plain", HeaderTTL: "3600"}, ""},
	}
	tests := []struct {
		name   string
		r      req
		status int
		header map[string]string // "" value: header must be absent
	}{
		{"next seq", req{"POST", "/v1/stream/s", prod("7", "2"), "a2"}, 200,
			map[string]string{HeaderProducerEpoch: "7", HeaderProducerSeq: "2"}},
		{"duplicate reports highest accepted", req{"POST", "/v1/stream/s", prod("7", "0"), "a0"}, 204,
			map[string]string{HeaderProducerEpoch: "7", HeaderProducerSeq: "1"}},
		{"claim names the closed epoch", req{"POST", "/v1/stream/s", prod("8", "0"), "b0"}, 200,
			map[string]string{HeaderProducerEpoch: "8", HeaderProducerSeq: "0",
				HeaderProducerClosedEpoch: "7", HeaderProducerClosedSeq: "1"}},
		{"older epoch fenced", req{"POST", "/v1/stream/s", prod("6", "0"), "z"}, 403,
			map[string]string{HeaderProducerEpoch: "7", HeaderProducerOutcome: "epoch-closed", HeaderProducerSeq: ""}},
		{"gap", req{"POST", "/v1/stream/s", prod("7", "5"), "x"}, 409,
			map[string]string{HeaderProducerExpectedSeq: "2", HeaderProducerReceivedSeq: "5",
				HeaderProducerEpoch: "", HeaderProducerSeq: ""}},
		{"unknown producer gap expects 0", req{"POST", "/v1/stream/s",
			map[string]string{"Content-Type": "text/plain", HeaderProducerID: "q", HeaderProducerEpoch: "0",
				HeaderProducerSeq: "3"}, "x"}, 409,
			map[string]string{HeaderProducerExpectedSeq: "0", HeaderProducerReceivedSeq: "3"}},
		{"newer epoch not at seq 0", req{"POST", "/v1/stream/s", prod("8", "1"), "x"}, 400,
			map[string]string{HeaderProducerEpoch: "", HeaderProducerSeq: ""}},
		{"partial producer headers", req{"POST", "/v1/stream/s",
			map[string]string{"Content-Type": "text/plain", HeaderProducerID: "p", HeaderProducerEpoch: "7"}, "x"}, 400, nil},
		{"empty producer id", req{"POST", "/v1/stream/s",
			map[string]string{"Content-Type": "text/plain", HeaderProducerID: "", HeaderProducerEpoch: "7",
				HeaderProducerSeq: "2"}, "x"}, 400, nil},
		{"non-numeric epoch", req{"POST", "/v1/stream/s", prod("7x", "2"), "x"}, 400, nil},
		{"leading zero seq", req{"POST", "/v1/stream/s", prod("7", "02"), "x"}, 400, nil},
		{"negative seq", req{"POST", "/v1/stream/s", prod("7", "-1"), "x"}, 400, nil},
		{"epoch above 2^53-1", req{"POST", "/v1/stream/s", prod("9007199254740992", "0"), "x"}, 400, nil},
		{"epoch at 2^53-1", req{"POST", "/v1/stream/s", prod("9007199254740991", "0"), "x"}, 200,
			map[string]string{HeaderProducerClosedEpoch: "7"}},
		{"stale incarnation", req{"POST", "/v1/stream/s",
			map[string]string{"Content-Type": "text/plain", HeaderIncarnation: "not-it"}, "x"}, 412, nil},
		{"unknown stream", req{"POST", "/v1/stream/nope", prod("0", "0"), "x"}, 404, nil},
		{"content type mismatch", req{"POST", "/v1/stream/s",
			map[string]string{"Content-Type": "application/json"}, "1"}, 409, nil},
		{"body over the limit", req{"POST", "/v1/stream/s", prod("7", "2"), strings.Repeat("x", 65)}, 413, nil},
		{"empty body", req{"POST", "/v1/stream/s", prod("7", "2"), ""}, 400, nil},
		{"malformed offset", req{"GET", "/v1/stream/s?offset=12", nil, ""}, 400, nil},
		{"offset past the tail", req{"GET", "/v1/stream/s?offset=0000000000000000_0000000000000099", nil, ""}, 400, nil},
		{"malformed offset on a TTL stream", req{"GET", "/v1/stream/ttl?offset=x", nil, ""}, 400, nil},
		{"TTL with a plus sign", req{"PUT", "/v1/stream/u", map[string]string{HeaderTTL: "+5"}, ""}, 400, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, m := newServer()
			for _, r := range history {
				if w := do(t, s, r); w.Code >= 300 {
					t.Fatalf("history %s %s: %d %s", r.method, r.path, w.Code, w.Body)
				}
			}
			before, _ := m.Snapshot()
			w := do(t, s, tt.r)
			if w.Code != tt.status {
				t.Fatalf("status %d (%s), want %d", w.Code, strings.TrimSpace(w.Body.String()), tt.status)
			}
			for k, v := range tt.header {
				if got := w.Header().Get(k); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
			after, _ := m.Snapshot()
			if w.Code >= 400 && !bytes.Equal(before, after) {
				t.Errorf("a %d answer changed the state", w.Code)
			}
		})
	}
}

// TestClosedStreamAnswers checks the HTTP answers around a closed stream: a
// fenced writer and an older duplicate get 409 with Stream-Closed and the
// final offset (not 403 or 204), a repeat of the closing append gets 204
// with Stream-Closed and its producer numbers, and a closed stream is judged
// before the content type.
// Reference: PROTOCOL.md 5.2 "Error Precedence" and "Response Headers (on
// 409 Conflict due to closed stream)"; 5.2.1 "Stream Closure with Idempotent
// Producers".
func TestClosedStreamAnswers(t *testing.T) {
	closing := prod("8", "1")
	closing[HeaderClosed] = "true"
	history := []req{
		{"PUT", "/v1/stream/s", map[string]string{"Content-Type": "text/plain"}, ""},
		{"POST", "/v1/stream/s", prod("7", "0"), "a0"},
		{"POST", "/v1/stream/s", prod("7", "1"), "a1"},
		{"POST", "/v1/stream/s", prod("8", "0"), "b0"},
		{"POST", "/v1/stream/s", closing, "b1"},
	}
	final := FormatOffset(8)
	json := prod("7", "2")
	json["Content-Type"] = "application/json"
	tests := []struct {
		name   string
		r      req
		status int
		header map[string]string // "" value: header must be absent
	}{
		{"fenced epoch", req{"POST", "/v1/stream/s", prod("7", "2"), "a2"}, 409,
			map[string]string{HeaderClosed: "true", HeaderNextOffset: final,
				HeaderProducerOutcome: "", HeaderProducerEpoch: ""}},
		{"older duplicate", req{"POST", "/v1/stream/s", prod("8", "0"), "b0"}, 409,
			map[string]string{HeaderClosed: "true", HeaderNextOffset: final, HeaderProducerSeq: ""}},
		{"repeat of the closing append", req{"POST", "/v1/stream/s", closing, "b1"}, 204,
			map[string]string{HeaderClosed: "true", HeaderProducerEpoch: "8", HeaderProducerSeq: "1"}},
		{"closed before content type", req{"POST", "/v1/stream/s", json, "1"}, 409,
			map[string]string{HeaderClosed: "true"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, m := newServer()
			for _, r := range history {
				if w := do(t, s, r); w.Code >= 300 {
					t.Fatalf("history %s %s: %d %s", r.method, r.path, w.Code, w.Body)
				}
			}
			before, _ := m.Snapshot()
			w := do(t, s, tt.r)
			if w.Code != tt.status {
				t.Fatalf("status %d (%s), want %d", w.Code, strings.TrimSpace(w.Body.String()), tt.status)
			}
			for k, v := range tt.header {
				if got := w.Header().Get(k); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
			if after, _ := m.Snapshot(); !bytes.Equal(before, after) {
				t.Errorf("a %d answer changed the state", w.Code)
			}
		})
	}
}

// TestRepeatedHeaders checks that a producer header, Stream-Seq or
// Stream-Incarnation given twice is refused with 400 naming the header, and
// changes nothing: with two epochs in one request the fence could not know
// which one to judge.
// Reference: PROTOCOL.md 5.2.1 "Request Headers" (400 for invalid producer
// headers); chapter "The epoch-fenced stream" (a refusal changes nothing).
func TestRepeatedHeaders(t *testing.T) {
	for _, k := range []string{HeaderProducerID, HeaderProducerEpoch, HeaderProducerSeq, HeaderSeq, HeaderIncarnation} {
		t.Run(k, func(t *testing.T) {
			s, m := newServer()
			do(t, s, req{"PUT", "/v1/stream/s", map[string]string{"Content-Type": "text/plain"}, ""})
			do(t, s, req{"POST", "/v1/stream/s", prod("7", "0"), "a0"})
			before, _ := m.Snapshot()
			hr := httptest.NewRequest("POST", "http://stream.test/v1/stream/s", strings.NewReader("a1"))
			for h, v := range prod("7", "1") {
				hr.Header.Set(h, v)
			}
			hr.Header.Add(k, "9")
			hr.Header.Add(k, "10")
			w := httptest.NewRecorder()
			s.ServeHTTP(w, hr)
			if w.Code != 400 || !strings.Contains(w.Body.String(), k) {
				t.Fatalf("got %d %q, want 400 naming %s", w.Code, w.Body, k)
			}
			if after, _ := m.Snapshot(); !bytes.Equal(before, after) {
				t.Error("the refused append changed the state")
			}
		})
	}
}

// TestRefusalMessages checks that refusals name the stream and say what was
// wrong in words a reader can act on, not an internal outcome name.
// Reference: chapter "The epoch-fenced stream", section "The HTTP surface".
func TestRefusalMessages(t *testing.T) {
	s, _ := newServer()
	do(t, s, req{"PUT", "/v1/stream/s", map[string]string{"Content-Type": "text/plain"}, ""})
	do(t, s, req{"POST", "/v1/stream/s", map[string]string{"Content-Type": "text/plain"}, "abc"})
	do(t, s, req{"PUT", "/v1/stream/j", map[string]string{"Content-Type": "application/json"}, `["ab","cd"]`})
	tests := []struct {
		r      req
		status int
		want   string
	}{
		{req{"GET", "/v1/stream/nope", nil, ""}, 404, `stream "nope": not found`},
		{req{"POST", "/v1/stream/nope", map[string]string{"Content-Type": "text/plain"}, "x"}, 404, `stream "nope": not found`},
		{req{"DELETE", "/v1/stream/nope", nil, ""}, 404, `stream "nope": not found`},
		{req{"GET", "/v1/stream/s?offset=" + FormatOffset(9), nil, ""}, 400,
			`stream "s": offset 0000000000000000_0000000000000009 is past the tail 0000000000000000_0000000000000003`},
		{req{"GET", "/v1/stream/j?offset=" + FormatOffset(1), nil, ""}, 400,
			`stream "j": offset 0000000000000000_0000000000000001 falls inside a JSON message`},
	}
	for _, tt := range tests {
		w := do(t, s, tt.r)
		if w.Code != tt.status || !strings.Contains(w.Body.String(), tt.want) {
			t.Errorf("%s %s: %d %q, want %d containing %q", tt.r.method, tt.r.path, w.Code, w.Body, tt.status, tt.want)
		}
	}
}

// TestRefusedReadKeepsTTL checks that a read of a stream with a sliding TTL
// that is refused (offset past the tail, or inside a JSON message) does not
// restart the countdown: only a read that is answered counts as one.
// Reference: PROTOCOL.md 5.1 Stream-TTL (a read resets the countdown);
// chapter "The epoch-fenced stream", section "The HTTP surface" (a refused
// request changes nothing).
func TestRefusedReadKeepsTTL(t *testing.T) {
	s, m := newServer()
	now := time.Unix(1_700_000_000, 0)
	s.Now = func() time.Time { return now }
	do(t, s, req{"PUT", "/v1/stream/t", map[string]string{"Content-Type": "application/json", HeaderTTL: "60"}, `["ab"]`})
	now = now.Add(10 * time.Second)
	before, _ := m.Snapshot()
	for _, off := range []int64{99, 1} {
		w := do(t, s, req{"GET", "/v1/stream/t?offset=" + FormatOffset(off), nil, ""})
		if w.Code != 400 {
			t.Fatalf("offset %d: %d %q, want 400", off, w.Code, w.Body)
		}
	}
	if after, _ := m.Snapshot(); !bytes.Equal(before, after) {
		t.Errorf("a refused read changed the state:\n%s\n%s", before, after)
	}
	// An answered read does restart it.
	if w := do(t, s, req{"GET", "/v1/stream/t?offset=" + FormatOffset(0), nil, ""}); w.Code != 200 {
		t.Fatalf("read at 0: %d %q", w.Code, w.Body)
	}
	if after, _ := m.Snapshot(); bytes.Equal(before, after) {
		t.Error("an answered read of a TTL stream did not record the read")
	}
}

// TestLongPollWakes checks that a long-poll waiting at the tail returns the
// data of an append applied while it waits, and 204 when none comes.
// Reference: PROTOCOL.md 5.7.
func TestLongPollWakes(t *testing.T) {
	s, _ := newServer()
	s.LongPoll = 5 * time.Second
	do(t, s, req{"PUT", "/v1/stream/s", map[string]string{"Content-Type": "text/plain"}, ""})
	done := make(chan *httptest.ResponseRecorder)
	go func() {
		done <- do(t, s, req{"GET", "/v1/stream/s?offset=now&live=long-poll", nil, ""})
	}()
	// Append only once the reader waits at the tail (a fixed sleep would
	// let a slow machine append first, and the reader then wait at the
	// new tail until its timeout).
	waitReaders(t, s.M, "s", 1)
	do(t, s, req{"POST", "/v1/stream/s", map[string]string{"Content-Type": "text/plain"}, "hi"})
	w := <-done
	if w.Code != 200 || w.Body.String() != "hi" {
		t.Fatalf("long-poll: %d %q, want 200 \"hi\"", w.Code, w.Body)
	}
	s.LongPoll = 10 * time.Millisecond
	w = do(t, s, req{"GET", "/v1/stream/s?offset=" + FormatOffset(2) + "&live=long-poll", nil, ""})
	if w.Code != 204 || w.Header().Get(HeaderUpToDate) != "true" {
		t.Fatalf("idle long-poll: %d, want 204 with %s", w.Code, HeaderUpToDate)
	}
}

func TestOffsetRoundTrip(t *testing.T) {
	for _, n := range []int64{0, 1, 41, 1 << 40} {
		got, err := ParseOffset(FormatOffset(n))
		if err != nil || got != n {
			t.Errorf("ParseOffset(FormatOffset(%d)) = %d, %v", n, got, err)
		}
	}
	for _, bad := range []string{"", "0", "-1", "now", "0000000000000000_000000000000000x", "0000000000000001_0000000000000000"} {
		if _, err := ParseOffset(bad); err == nil {
			t.Errorf("ParseOffset(%q) succeeded", bad)
		}
	}
}

// FuzzParseOffset checks that ParseOffset accepts exactly what FormatOffset
// makes.
func FuzzParseOffset(f *testing.F) {
	f.Add("0000000000000000_0000000000000042")
	f.Add("-1")
	f.Add("0000000000000000_000000000000004")
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseOffset(s)
		if err == nil && FormatOffset(n) != s {
			t.Fatalf("ParseOffset(%q) = %d, which formats as %q", s, n, FormatOffset(n))
		}
	})
}

// waitReaders waits until n readers wait on stream name of m (at most
// 20 s), so that a test acts on waiting readers without a fixed sleep.
func waitReaders(t *testing.T, m *stream.Machine, name string, n int) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); m.Readers(name) < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d readers wait on %s after 20s", m.Readers(name), n, name)
		}
	}
}
