package owner

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ownership-book/ownership/examples/stream"
	"github.com/ownership-book/ownership/examples/stream/server"
)

// TestStreamIsFenceRequired: the database creates its stream with
// Stream-Fence: required, so once it has claimed, a POST without producer
// headers is refused with 403 and Producer-Outcome: producer-required and
// is not in the stream, while the database's own appends (always with
// producer headers) and reads go on. A stream that already exists without
// the mode is opened as it is, also from a server whose default mode is
// required (where a PUT without Stream-Fence would ask for the mode again).
// Reference: chapter "The epoch-fenced stream", section "What the fence
// covers".
func TestStreamIsFenceRequired(t *testing.T) {
	ts := newTestStream(t)
	a, _ := ts.mustOpen(t.TempDir(), "A")
	if info, o := ts.m.Stat("db", 1e18); o != "" || info.Fence != stream.FenceRequired {
		t.Fatalf("the database's stream: %s, fence %q, want %q", o, info.Fence, stream.FenceRequired)
	}
	a.Put("a", "1")
	if err := a.Synced(bg); err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("POST", "http://stream.test/v1/stream/db", strings.NewReader(`{"intruder":true}`+"\n"))
	r.Header.Set("Content-Type", streamContentType)
	w := httptest.NewRecorder()
	ts.ServeHTTP(w, r)
	if w.Code != http.StatusForbidden || w.Header().Get(HeaderOutcome) != server.OutcomeProducerRequired {
		t.Fatalf("header-less POST after the claim: %d, %s %q", w.Code, HeaderOutcome, w.Header().Get(HeaderOutcome))
	}
	a.Put("b", "2")
	if err := a.Synced(bg); err != nil {
		t.Fatal(err)
	}
	if got := keys(ts.history()); got != "a=1 b=2" {
		t.Errorf("stream %q, want a=1 b=2", got)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	// Another copy opens the existing stream: the create repeated with
	// the mode is a 200.
	a2, _ := ts.mustOpen(t.TempDir(), "A2")
	a2.Close()

	for _, fenceDefault := range []string{"", stream.FenceRequired} {
		plain := newTestStream(t)
		plain.srv.FenceDefault = fenceDefault
		if res := plain.m.ApplyCommand(stream.Command{Op: stream.OpCreate, Stream: "db", Now: 1e18, ContentType: streamContentType}); res.Outcome != stream.Created {
			t.Fatalf("create plain stream: %s", res.Outcome)
		}
		b, _, err := plain.open(t.TempDir(), "B", nil)
		if err != nil {
			t.Fatalf("server default %q: open on a stream without the fence mode: %v", fenceDefault, err)
		}
		b.Put("x", "1")
		if err := b.Synced(bg); err != nil {
			t.Fatalf("server default %q: on a stream without the fence mode: %v", fenceDefault, err)
		}
		b.Close()
		if info, _ := plain.m.Stat("db", 1e18); info.Fence != "" {
			t.Errorf("server default %q: an existing plain stream became fence %q", fenceDefault, info.Fence)
		}
	}
}
