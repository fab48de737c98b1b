package server

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
)

// TestTinyJSONMessagesBounded: a JSON append of 500,000 one-byte values
// (1 MB of [1,1,…]) allocates at most 80 times its size (53× today) while it is
// split, put through the log encoding and applied. Each message is kept as
// a slice of one buffer (and one chunk header in the stream), not an
// allocation of its own; before, this append allocated about 270 MB.
// Reference: PROTOCOL.md 9.1.2 (an array append is one message per
// element).
func TestTinyJSONMessagesBounded(t *testing.T) {
	s, m := newServer()
	s.MaxBody = 2 << 20
	do(t, s, req{"PUT", "/v1/stream/j", map[string]string{"Content-Type": "application/json"}, ""})
	body := "[" + strings.Repeat("1,", 499_999) + "1]"
	hr := httptest.NewRequest("POST", "http://stream.test/v1/stream/j", strings.NewReader(body))
	hr.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s.ServeHTTP(w, hr)
	runtime.ReadMemStats(&after)
	if w.Code != http.StatusNoContent {
		t.Fatalf("append: %d %s", w.Code, w.Body)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("a %d-byte append of 500000 messages allocated %.1f MB (%.0f× its size)", len(body), float64(alloc)/1e6, float64(alloc)/float64(len(body)))
	if limit := uint64(80 * len(body)); alloc > limit {
		t.Errorf("allocated %d bytes, over %d (80× the body)", alloc, limit)
	}
	if got := do(t, s, req{"GET", "/v1/stream/j?offset=-1", nil, ""}); !strings.HasPrefix(got.Body.String(), "[1,1,") {
		t.Errorf("read back %.20q", got.Body.String())
	}
	runtime.KeepAlive(m)
}

// TestSplitArray: the elements of a compacted JSON array, strings with
// commas, brackets and escaped quotes included, and nested values kept
// whole (one level is flattened).
func TestSplitArray(t *testing.T) {
	for in, want := range map[string]string{
		`[]`:                        ``,
		`[1]`:                       `1`,
		`[1,"a,b",[2,3],{"k":[4]}]`: `1|"a,b"|[2,3]|{"k":[4]}`,
		`["q\"],[",{"a":"}"},null]`: `"q\"],["|{"a":"}"}|null`,
		`["\\",2]`:                  `"\\"|2`,
	} {
		var parts []string
		for _, m := range splitArray([]byte(in)) {
			parts = append(parts, string(m))
		}
		if got := strings.Join(parts, "|"); got != want {
			t.Errorf("splitArray(%s) = %s, want %s", in, got, want)
		}
	}
}
