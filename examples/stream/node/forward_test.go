package node

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestForwardKeepsRequest sends requests whose meaning lies in headers and
// bodies to a follower, which forwards them to the leader: a stale
// Stream-Incarnation (412), a content type that differs from the stream's
// (409), a chunked JSON body (split into messages by the leader), a chunked
// body over the limit (413, from the follower, with nothing appended), an
// Expect: 100-continue body, and a claim whose answer headers come back.
func TestForwardKeepsRequest(t *testing.T) {
	c, err := Start(Options{Voters: 3, MaxBody: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	leader, err := c.Leader(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var f *Node
	for _, nd := range c.Nodes {
		if nd != leader {
			f = nd
			break
		}
	}
	send := func(method, path string, h map[string]string, body io.Reader) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, f.URL+"/v1/stream/"+path, body)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	resp, _ := send("PUT", "j", map[string]string{"Content-Type": "application/json"}, nil)
	if resp.StatusCode != 201 {
		t.Fatalf("PUT j via follower: %s", resp.Status)
	}
	inc := resp.Header.Get("Stream-Incarnation")
	resp, _ = send("POST", "j", map[string]string{"Content-Type": "application/json", "Stream-Incarnation": inc + "x"}, strings.NewReader(`{"a":1}`))
	if resp.StatusCode != 412 || resp.Header.Get("Stream-Incarnation") != inc {
		t.Errorf("stale incarnation via follower: %s %q, want 412 naming %q", resp.Status, resp.Header.Get("Stream-Incarnation"), inc)
	}
	resp, _ = send("POST", "j", map[string]string{"Content-Type": "text/plain"}, strings.NewReader("x"))
	if resp.StatusCode != 409 {
		t.Errorf("content-type mismatch via follower: %s, want 409", resp.Status)
	}
	resp, _ = send("POST", "j", map[string]string{"Content-Type": "application/json; charset=utf-8", "Stream-Incarnation": inc,
		"Producer-Id": "p", "Producer-Epoch": "3", "Producer-Seq": "0"}, chunked{strings.NewReader(`[{"a":1}, {"b":2}]`)})
	if resp.StatusCode != 200 || resp.Header.Get("Producer-Epoch") != "3" {
		t.Errorf("chunked JSON append via follower: %s epoch %q", resp.Status, resp.Header.Get("Producer-Epoch"))
	}
	resp, _ = send("POST", "j", map[string]string{"Content-Type": "application/json", "Expect": "100-continue",
		"Producer-Id": "p", "Producer-Epoch": "3", "Producer-Seq": "1"}, strings.NewReader(`{"c":3}`))
	if resp.StatusCode != 200 {
		t.Errorf("Expect: 100-continue via follower: %s", resp.Status)
	}
	resp, _ = send("POST", "j", map[string]string{"Content-Type": "application/json",
		"Producer-Id": "p", "Producer-Epoch": "4", "Producer-Seq": "0"}, chunked{strings.NewReader(`{"d":4}`)})
	if resp.StatusCode != 200 || resp.Header.Get("Producer-Closed-Epoch") != "3" || resp.Header.Get("Producer-Closed-Seq") != "1" {
		t.Errorf("claim via follower: %s closed %q/%q, want 200 closing epoch 3 at seq 1", resp.Status,
			resp.Header.Get("Producer-Closed-Epoch"), resp.Header.Get("Producer-Closed-Seq"))
	}
	resp, _ = send("POST", "j", map[string]string{"Content-Type": "application/json"}, chunked{strings.NewReader("[" + strings.Repeat(`1,`, 600) + "1]")})
	if resp.StatusCode != 413 {
		t.Errorf("chunked body over the limit via follower: %s, want 413", resp.Status)
	}
	resp, body := send("GET", "j?offset=-1", nil, nil)
	if want := `[{"a":1},{"b":2},{"c":3},{"d":4}]`; resp.StatusCode != 200 || body != want {
		t.Errorf("read via follower: %s %s, want %s", resp.Status, body, want)
	}
}
