package node

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ownership-book/ownership/examples/stream"
)

// TestFenceRequiredOnEveryVoter: on a fence-required stream of a group of
// three, a producer's appends and a POST and a close without producer
// headers are sent through the two followers. The header-less requests are
// refused (403, Producer-Outcome: producer-required) and, once every voter
// has applied the producer's next append, every voter holds the same
// state: the fence mode, the producer's two appends and nothing else. The
// refusal is made by the state machine as it applies the command, so no
// voter decides it alone.
// Reference: chapter "The epoch-fenced stream", section "What the fence
// covers"; Diego Ongaro and John Ousterhout, 2014, §5.3 (every voter
// applies the log in order).
func TestFenceRequiredOnEveryVoter(t *testing.T) {
	c, err := Start(Options{Voters: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	leader, err := c.Leader(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var fs []*Node
	for _, nd := range c.Nodes {
		if nd != leader {
			fs = append(fs, nd)
		}
	}
	resp, _, _ := retrying(t, func() *http.Request {
		req, _ := http.NewRequest("PUT", fs[0].URL+"/v1/stream/db", nil)
		req.Header.Set("Content-Type", "text/plain")
		req.Header.Set("Stream-Fence", "required")
		return req
	})
	if resp.StatusCode != http.StatusCreated || resp.Header.Get("Stream-Fence") != "required" {
		t.Fatalf("PUT with Stream-Fence: required via %s: %s, Stream-Fence %q", fs[0].ID, resp.Status, resp.Header.Get("Stream-Fence"))
	}
	appendOK(t, fs[1].URL, 1, 0, "a ")
	for i, h := range []map[string]string{{"Content-Type": "text/plain"}, {"Stream-Closed": "true"}} {
		f := fs[i%2]
		resp, body, _ := retrying(t, func() *http.Request {
			body := "intruder "
			if h["Stream-Closed"] != "" {
				body = ""
			}
			req, _ := http.NewRequest("POST", f.URL+"/v1/stream/db", strings.NewReader(body))
			for k, v := range h {
				req.Header.Set(k, v)
			}
			return req
		})
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Producer-Outcome") != "producer-required" {
			t.Fatalf("header-less POST %v via %s: %s, Producer-Outcome %q (%s); want 403 producer-required",
				h, f.ID, resp.Status, resp.Header.Get("Producer-Outcome"), body)
		}
	}
	appendOK(t, fs[0].URL, 1, 1, "b ")

	var first []byte
	for _, nd := range c.Nodes {
		waitApplied(t, nd, leader.Group.Status().Applied)
		now := time.Now().UnixNano()
		info, o := nd.Machine.Stat("db", now)
		if o != "" || info.Fence != stream.FenceRequired || info.Closed {
			t.Errorf("voter %s: stream db: %s, fence %q, closed %v; want fence-required and open", nd.ID, o, info.Fence, info.Closed)
		}
		rr, o := nd.Machine.Read("db", 0, 1<<20, now)
		if got := string(bytes.Join(rr.Messages, nil)); o != "" || got != "a b " {
			t.Errorf("voter %s holds %q (%s), want %q", nd.ID, got, o, "a b ")
		}
		snap, err := nd.Machine.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = snap
		} else if !bytes.Equal(first, snap) {
			t.Errorf("voter %s's state differs from voter %s's", nd.ID, c.Nodes[0].ID)
		}
	}
}

// TestFenceDefaultOption: Options.FenceDefault is checked before anything
// starts: an unknown mode is an error naming it, and required gives the
// mode to a stream created without the header.
func TestFenceDefaultOption(t *testing.T) {
	if c, err := Start(Options{Voters: 1, FenceDefault: "sometimes"}); err == nil || !strings.Contains(err.Error(), `"sometimes"`) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("Start with FenceDefault sometimes: %v, want an error naming it", err)
	}
	c, err := Start(Options{Voters: 1, FenceDefault: stream.FenceRequired})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	leader, err := c.Leader(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	createOK(t, leader.URL)
	if info, o := leader.Machine.Stat("db", time.Now().UnixNano()); o != "" || info.Fence != stream.FenceRequired {
		t.Errorf("stream created without Stream-Fence under FenceDefault required: %s, fence %q", o, info.Fence)
	}
}
