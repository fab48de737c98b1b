package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ownership-book/ownership/examples/stream"
)

// TestNamesSurviveExactly: a stream name or a producer id that is not valid
// UTF-8, or that holds a control character, is refused with 400 before
// anything is applied. The log encodes commands as JSON, which would turn
// the byte 0xff into U+FFFD: without the check, PUT /v1/stream/%ff created
// the stream %EF%BF%BD, and producer "\xfe" was fenced by producer "\xff"'s
// epoch. Reference: RFC 8259 section 8.1 (JSON text is UTF-8).
func TestNamesSurviveExactly(t *testing.T) {
	s, m := newServer()
	for _, path := range []string{"/v1/stream/%ff", "/v1/stream/a%00b", "/v1/stream/a%0Ab", "/v1/stream/%c2%85"} {
		if w := do(t, s, req{"PUT", path, map[string]string{"Content-Type": "text/plain"}, ""}); w.Code != http.StatusBadRequest {
			t.Errorf("PUT %s: %d, want 400", path, w.Code)
		}
	}
	if w := do(t, s, req{"PUT", "/v1/stream/%ef%bf%bd", map[string]string{"Content-Type": "text/plain"}, ""}); w.Code != http.StatusCreated {
		t.Errorf("PUT /v1/stream/%%ef%%bf%%bd after the refused %%ff: %d, want 201 (nothing was created before)", w.Code)
	}
	fork := map[string]string{"Content-Type": "text/plain", HeaderForkedFrom: "/v1/stream/\xff"}
	if w := do(t, s, req{"PUT", "/v1/stream/f", fork, ""}); w.Code != http.StatusBadRequest {
		t.Errorf("fork from a non-UTF-8 name: %d, want 400", w.Code)
	}

	do(t, s, req{"PUT", "/v1/stream/p", map[string]string{"Content-Type": "text/plain"}, ""})
	as := func(id, epoch, seq string) int {
		h := prod(epoch, seq)
		h[HeaderProducerID] = id
		return do(t, s, req{"POST", "/v1/stream/p", h, "x"}).Code
	}
	if c := as("\xff", "5", "0"); c != http.StatusBadRequest {
		t.Errorf("producer \\xff: %d, want 400", c)
	}
	if c := as("\xfe", "1", "0"); c != http.StatusBadRequest {
		t.Errorf("producer \\xfe: %d, want 400", c)
	}
	if c := as("a\x00b", "1", "0"); c != http.StatusBadRequest {
		t.Errorf("producer a\\x00b: %d, want 400", c)
	}
	// A valid id that is the replacement character is its own producer,
	// at epoch 1: nothing of the refused \xff at epoch 5 was kept.
	if c := as("\uFFFD", "1", "0"); c != http.StatusOK {
		t.Errorf("producer U+FFFD at epoch 1 after the refused \\xff at epoch 5: %d, want 200", c)
	}
	snap, _ := m.Snapshot()
	if strings.Contains(string(snap), `a\u0000b`) {
		t.Error("state holds the name a\x00b after refused requests")
	}
	if w := do(t, s, req{"GET", "/v1/stream/p?offset=-1", nil, ""}); w.Body.String() != "x" {
		t.Errorf("stream p = %q, want only the one accepted append", w.Body.String())
	}
}

// TestProducerIDCap: a Producer-Id longer than MaxProducerID bytes (default
// stream.DefaultMaxProducerIDBytes) is refused with 400 and not kept.
func TestProducerIDCap(t *testing.T) {
	s, m := newServer()
	s.MaxBody = 1 << 20
	do(t, s, req{"PUT", "/v1/stream/p", map[string]string{"Content-Type": "text/plain"}, ""})
	post := func(id string) int {
		h := prod("1", "0")
		h[HeaderProducerID] = id
		return do(t, s, req{"POST", "/v1/stream/p", h, "x"}).Code
	}
	long := strings.Repeat("p", stream.DefaultMaxProducerIDBytes)
	if c := post(long); c != http.StatusOK {
		t.Errorf("producer id of %d bytes: %d, want 200", len(long), c)
	}
	if c := post(long + "q"); c != http.StatusBadRequest {
		t.Errorf("producer id of %d bytes: %d, want 400", len(long)+1, c)
	}
	snap, _ := m.Snapshot()
	if strings.Contains(string(snap), long+"q") {
		t.Error("the refused long producer id is in the state")
	}
	s.MaxProducerID = 8
	if c := post("ninebytes"); c != http.StatusBadRequest {
		t.Errorf("MaxProducerID 8, id of 9 bytes: %d, want 400", c)
	}
}

// TestLocationIgnoresHost: a 201's Location is BaseURL and the stream's
// escaped path, or the path alone without a BaseURL, never built from the
// Host header the client sent. Reference: RFC 9110 section 10.2.2
// (Location may be a relative reference).
func TestLocationIgnoresHost(t *testing.T) {
	s, _ := newServer()
	h := map[string]string{"Content-Type": "text/plain"}
	hr := do(t, s, req{"PUT", "/v1/stream/a%20b", h, ""})
	if got := hr.Header().Get("Location"); got != "/v1/stream/a%20b" {
		t.Errorf("Location without BaseURL = %q, want /v1/stream/a%%20b", got)
	}
	s.BaseURL = "http://10.0.0.1:4437/"
	w := do(t, s, req{"PUT", "/v1/stream/c", h, ""}) // do sends Host: stream.test
	if got := w.Header().Get("Location"); got != "http://10.0.0.1:4437/v1/stream/c" {
		t.Errorf("Location = %q, want http://10.0.0.1:4437/v1/stream/c (not the client's Host)", got)
	}
}
