package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ownership-book/ownership/examples/stream"
)

func plainText() map[string]string { return map[string]string{"Content-Type": "text/plain"} }

// TestFenceRequiredOverHTTP: a stream created with Stream-Fence: required
// says so in the answers to the create, HEAD and GET; after writer A's
// appends and writer B's claim, a POST without producer headers is refused
// with 403, Producer-Outcome: producer-required and a message naming the
// stream, and the stream is unchanged; the same POST to a stream created
// without the header is applied (204). A second PUT with another mode is
// 409, and an unknown mode 400.
// Reference: chapter "The epoch-fenced stream", section "What the fence
// covers"; PROTOCOL.md 9.1 "Protocol Extensions", 5.1 (409 on another
// configuration).
func TestFenceRequiredOverHTTP(t *testing.T) {
	s, m := newServer()
	fenced := map[string]string{"Content-Type": "text/plain", HeaderFence: "required"}
	if w := do(t, s, req{"PUT", "/v1/stream/f", fenced, ""}); w.Code != http.StatusCreated || w.Header().Get(HeaderFence) != "required" {
		t.Fatalf("PUT fenced: %d, %s %q", w.Code, HeaderFence, w.Header().Get(HeaderFence))
	}
	if w := do(t, s, req{"PUT", "/v1/stream/p", plainText(), ""}); w.Code != http.StatusCreated || w.Header().Get(HeaderFence) != "" {
		t.Fatalf("PUT plain: %d, %s %q", w.Code, HeaderFence, w.Header().Get(HeaderFence))
	}
	for _, name := range []string{"f", "p"} {
		for _, r := range []req{
			{"POST", "/v1/stream/" + name, prod("1", "0"), "a0 "},
			{"POST", "/v1/stream/" + name, prod("2", "0"), "b0 "},
		} {
			if w := do(t, s, r); w.Code != http.StatusOK {
				t.Fatalf("%s %s epoch %s: %d %s", r.method, r.path, r.h[HeaderProducerEpoch], w.Code, w.Body)
			}
		}
	}
	for _, tc := range []struct {
		method, name string
		want         string // Stream-Fence in the answer
	}{{"HEAD", "f", "required"}, {"GET", "f", "required"}, {"HEAD", "p", ""}, {"GET", "p", ""}} {
		w := do(t, s, req{tc.method, "/v1/stream/" + tc.name + "?offset=-1", nil, ""})
		if w.Code != http.StatusOK || w.Header().Get(HeaderFence) != tc.want {
			t.Errorf("%s %s: %d, %s %q, want %q", tc.method, tc.name, w.Code, HeaderFence, w.Header().Get(HeaderFence), tc.want)
		}
	}

	before, _ := m.Snapshot()
	w := do(t, s, req{"POST", "/v1/stream/f", plainText(), "intruder "})
	if w.Code != http.StatusForbidden || w.Header().Get(HeaderProducerOutcome) != "producer-required" {
		t.Fatalf("header-less POST to fenced stream: %d, %s %q; want 403 producer-required",
			w.Code, HeaderProducerOutcome, w.Header().Get(HeaderProducerOutcome))
	}
	if !strings.Contains(w.Body.String(), `stream "f"`) {
		t.Errorf("refusal %q does not name the stream", w.Body)
	}
	if w := do(t, s, req{"POST", "/v1/stream/f", map[string]string{HeaderClosed: "true"}, ""}); w.Code != http.StatusForbidden {
		t.Errorf("header-less close of fenced stream: %d, want 403", w.Code)
	}
	if after, _ := m.Snapshot(); string(after) != string(before) {
		t.Fatal("refused header-less POSTs changed the state")
	}
	if w := do(t, s, req{"POST", "/v1/stream/p", plainText(), "intruder "}); w.Code != http.StatusNoContent {
		t.Fatalf("header-less POST to plain stream: %d %s, want 204", w.Code, w.Body)
	}
	if w := do(t, s, req{"GET", "/v1/stream/p?offset=-1", nil, ""}); w.Body.String() != "a0 b0 intruder " {
		t.Errorf("plain stream holds %q", w.Body)
	}
	if w := do(t, s, req{"GET", "/v1/stream/f?offset=-1", nil, ""}); w.Body.String() != "a0 b0 " {
		t.Errorf("fenced stream holds %q", w.Body)
	}

	for _, tc := range []struct {
		name string
		h    map[string]string
		code int
	}{
		{"fenced again", fenced, http.StatusOK},
		{"fenced, no mode", plainText(), http.StatusConflict},
		{"fenced, mode none", map[string]string{"Content-Type": "text/plain", HeaderFence: "none"}, http.StatusConflict},
		{"unknown mode", map[string]string{"Content-Type": "text/plain", HeaderFence: "sometimes"}, http.StatusBadRequest},
	} {
		w := do(t, s, req{"PUT", "/v1/stream/f", tc.h, ""})
		if w.Code != tc.code {
			t.Errorf("PUT %s: %d %s, want %d", tc.name, w.Code, w.Body, tc.code)
		}
		if tc.code == http.StatusBadRequest && !strings.Contains(w.Body.String(), "Stream-Fence") {
			t.Errorf("PUT %s: message %q does not name Stream-Fence", tc.name, w.Body)
		}
	}
}

// TestFenceDefault: with Server.FenceDefault required, a stream created
// without Stream-Fence is fence-required, one created with Stream-Fence:
// none is not, and a fork without the header takes its source's mode.
func TestFenceDefault(t *testing.T) {
	s, _ := newServer()
	s.FenceDefault = stream.FenceRequired
	for _, tc := range []struct {
		name string
		h    map[string]string
		want string
	}{
		{"d", plainText(), "required"},
		{"n", map[string]string{"Content-Type": "text/plain", HeaderFence: "none"}, ""},
		{"fork-of-n", map[string]string{HeaderForkedFrom: "n"}, ""},
		{"fork-of-d", map[string]string{HeaderForkedFrom: "d"}, "required"},
	} {
		w := do(t, s, req{"PUT", "/v1/stream/" + tc.name, tc.h, ""})
		if w.Code != http.StatusCreated {
			t.Fatalf("PUT %s: %d %s", tc.name, w.Code, w.Body)
		}
		if h := do(t, s, req{"HEAD", "/v1/stream/" + tc.name, nil, ""}); h.Header().Get(HeaderFence) != tc.want {
			t.Errorf("HEAD %s: %s %q, want %q", tc.name, HeaderFence, h.Header().Get(HeaderFence), tc.want)
		}
	}
}

// TestFenceHeaderExposed: browsers may read Stream-Fence (CORS).
func TestFenceHeaderExposed(t *testing.T) {
	s, _ := newServer()
	w := do(t, s, req{"OPTIONS", "/v1/stream/s", map[string]string{"Access-Control-Request-Headers": "Stream-Fence"}, ""})
	if !strings.Contains(w.Header().Get("Access-Control-Expose-Headers"), HeaderFence) {
		t.Errorf("Access-Control-Expose-Headers %q lacks %s", w.Header().Get("Access-Control-Expose-Headers"), HeaderFence)
	}
	if !strings.Contains(w.Header().Get("Access-Control-Allow-Headers"), HeaderFence) {
		t.Errorf("Access-Control-Allow-Headers %q lacks %s", w.Header().Get("Access-Control-Allow-Headers"), HeaderFence)
	}
}
