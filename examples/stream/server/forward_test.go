package server

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ownership-book/ownership/examples/stream"
)

// follower is an Applier that is never the leader.
type follower struct{}

var errFollower = errors.New("not the leader")

func (follower) Apply(context.Context, []byte) ([]byte, error) { return nil, errFollower }
func (follower) LeaderRead(context.Context) error              { return errFollower }

// TestForwardedAnswerCutShortIsAnError forwards a read from a follower to
// a leader that dies halfway through its answer (headers and part of a
// chunked body sent). The follower must not end its own answer as if it
// were complete: the client already holds Stream-Next-Offset for the whole
// answer and would skip the bytes it never got. The client must see an
// error instead.
func TestForwardedAnswerCutShortIsAnError(t *testing.T) {
	leader := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set(HeaderNextOffset, FormatOffset(10000))
		w.WriteHeader(200)
		io.WriteString(w, strings.Repeat("x", 5000))
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // the leader dies mid-answer
	}))
	defer leader.Close()
	s := &Server{M: stream.NewMachine(), A: follower{}, Forward: true,
		Redirect: func(error) (string, bool) { return leader.URL, true }}
	hs := httptest.NewServer(s)
	defer hs.Close()
	resp, err := http.Get(hs.URL + Prefix + "s?offset=-1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil {
		t.Fatalf("forwarded answer cut short after %d of 10000 bytes ended cleanly (%s %s: %s)",
			len(b), resp.Status, HeaderNextOffset, resp.Header.Get(HeaderNextOffset))
	}
	t.Logf("client saw %v after %d bytes", err, len(b))
}
