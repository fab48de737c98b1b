// Command fencemode shows what the fence-required mode covers (chapter "The
// epoch-fenced stream", section "What the fence covers") against a real
// streamd voter: one Raft voter, in memory, HTTP on a loopback port. A
// stream is created with Stream-Fence: required; process X, which takes no
// part in the claims, appends without producer headers before and after
// two owners' claims, and then under a producer id of its own. It prints
// only facts that do not depend on ports, timing or clocks.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/ownership-book/ownership/examples/stream/node"
)

// httpClient dials through package net, so that in a browser page
// (js/wasm) requests reach the voter listening inside the page rather than
// going to the browser's fetch (see examples/stream/fence).
var httpClient = &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{}).DialContext}}

type client struct{ base string }

// do sends one request to path and returns the answer, its body read.
func (c client) do(method, path string, h map[string]string, body string) (*http.Response, string, error) {
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		return nil, "", err
	}
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, "", err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b), nil
}

// producer returns the headers of an append by producer id under epoch
// and seq.
func producer(id string, epoch, seq int) map[string]string {
	return map[string]string{"Content-Type": "text/plain", "Producer-Id": id,
		"Producer-Epoch": fmt.Sprint(epoch), "Producer-Seq": fmt.Sprint(seq)}
}

var plain = map[string]string{"Content-Type": "text/plain"}

func main() {
	if err := run(os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// step is one request of the play and the answer headers it shows.
type step struct {
	who, what    string
	method, path string
	h            map[string]string
	body         string
	show         []string
}

// run plays the requests and writes the transcript to out.
func run(out io.Writer) error {
	c, err := node.Start(node.Options{Voters: 1, HeartbeatTimeout: 50 * time.Millisecond,
		ElectionTimeout: 50 * time.Millisecond, LeaderLeaseTimeout: 50 * time.Millisecond})
	if err != nil {
		return err
	}
	defer c.Close()
	leader, err := c.Leader(context.Background())
	if err != nil {
		return err
	}
	cl := client{leader.URL}
	const db = "/v1/stream/db"
	claim := []string{"Producer-Epoch", "Producer-Closed-Epoch", "Producer-Closed-Seq"}
	steps := []step{
		{"", "create, Stream-Fence: required", "PUT", db,
			map[string]string{"Content-Type": "text/plain", "Stream-Fence": "required"}, "", []string{"Stream-Fence"}},
		{"X", "append, no producer headers", "POST", db, plain, "x-early ", nil},
		{"A", "claim: epoch 7, seq 0", "POST", db, producer("db-7f3a", 7, 0), "a0 ", []string{"Producer-Epoch"}},
		{"B", "claim: epoch 8, seq 0", "POST", db, producer("db-7f3a", 8, 0), "b0 ", claim},
		{"A", "append epoch 7, seq 1", "POST", db, producer("db-7f3a", 7, 1), "a1 ", []string{"Producer-Epoch", "Producer-Outcome"}},
		{"X", "append, no producer headers", "POST", db, plain, "x-late ", []string{"Producer-Outcome"}},
		{"X", "close, no producer headers", "POST", db, map[string]string{"Stream-Closed": "true"}, "", []string{"Producer-Outcome"}},
		{"X", "append as producer x, seq 0", "POST", db, producer("x", 0, 0), "x0 ", []string{"Producer-Seq"}},
		{"", "create again, no Stream-Fence", "PUT", db, plain, "", nil},
	}
	for _, s := range steps {
		resp, _, err := cl.do(s.method, s.path, s.h, s.body)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%-2s %-30s -> %s", s.who, s.what, resp.Status)
		for _, h := range s.show {
			if v := resp.Header.Get(h); v != "" {
				fmt.Fprintf(out, ", %s: %s", h, v)
			}
		}
		fmt.Fprintln(out)
	}
	_, body, err := cl.do("GET", db+"?offset=-1", nil, "")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "   the stream holds: %s\n", strings.TrimSpace(body))
	return nil
}
