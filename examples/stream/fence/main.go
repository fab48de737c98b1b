// Command fence plays a takeover (chapter "The epoch-fenced stream", section
// "The claim and its answer") against a real streamd voter: one Raft voter,
// in memory, HTTP on a loopback port. Process A appends under epoch 7;
// process B claims epoch 8 and learns where epoch 7 stopped; B appends; A's
// next append is refused 403 epoch-closed. It prints only facts that do not
// depend on ports, timing or clocks.
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

	"github.com/ownership-book/ownership/examples/stream"
	"github.com/ownership-book/ownership/examples/stream/node"
)

// producerID is the id every owner of the database writes under; each owner
// has an epoch of its own.
const producerID = "db-7f3a"

type client struct {
	name, base string
}

// httpClient sends every request through package net's dialer. On a host
// that is what http.DefaultClient does; in a browser page (js/wasm) the
// default transport would hand requests to the browser's fetch instead,
// which cannot reach a voter listening inside the page, while a transport
// with its own dialer uses the page's in-process network.
var httpClient = &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{}).DialContext}}

// do sends one request and returns the status and the response headers.
func (c client) do(method, path string, h map[string]string, body string) (*http.Response, string) {
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		log.Fatal(err)
	}
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// ANCHOR: append
// appendAs sends one append of the producer under epoch and seq.
func (c client) appendAs(epoch, seq int, data string) *http.Response {
	resp, _ := c.do("POST", "/v1/stream/db", map[string]string{
		"Content-Type":   "text/plain",
		"Producer-Id":    producerID,
		"Producer-Epoch": fmt.Sprint(epoch),
		"Producer-Seq":   fmt.Sprint(seq),
	}, data)
	return resp
}

// ANCHOR_END: append

func show(out io.Writer, who, what string, resp *http.Response, headers ...string) {
	fmt.Fprintf(out, "%-2s %-28s -> %s", who, what, resp.Status)
	for _, h := range headers {
		if v := resp.Header.Get(h); v != "" {
			fmt.Fprintf(out, ", %s: %s", h, v)
		}
	}
	fmt.Fprintln(out)
}

func main() {
	if err := run(os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run plays the diagram and writes the transcript to out.
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
	a := client{"A", leader.URL}
	b := client{"B", leader.URL}

	resp, _ := a.do("PUT", "/v1/stream/db", map[string]string{"Content-Type": "text/plain"}, "")
	show(out, "A", "create /v1/stream/db", resp)

	// Process A owns the database under epoch 7: seq 0 claims, 1..41 follow.
	for seq := 0; seq <= 41; seq++ {
		resp = a.appendAs(7, seq, fmt.Sprintf("a%d ", seq))
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("producer A, seq %d: %s", seq, resp.Status)
		}
	}
	show(out, "A", "append epoch 7, seq 0..41", resp, "Producer-Epoch", "Producer-Seq")

	// Process B opens the database: a claim is seq 0 under a newer epoch.
	resp = b.appendAs(8, 0, "b0 ")
	show(out, "B", "claim: epoch 8, seq 0", resp, "Producer-Epoch", "Producer-Closed-Epoch", "Producer-Closed-Seq")

	// B reads what the stream holds after its claim (every read is a leader
	// read, so no acknowledged append can be missing from it).
	_, body := b.do("GET", "/v1/stream/db?offset=-1", nil, "")
	recs := strings.Fields(body)
	fmt.Fprintf(out, "B  read after the claim         -> %d records, A's last: %s, then: %s\n",
		len(recs), recs[len(recs)-2], recs[len(recs)-1])

	resp = b.appendAs(8, 1, "b1 ")
	show(out, "B", "append epoch 8, seq 1", resp, "Producer-Epoch", "Producer-Seq")

	// A does not know yet: its next append is fenced.
	resp = a.appendAs(7, 42, "a42 ")
	show(out, "A", "append epoch 7, seq 42", resp, "Producer-Epoch", "Producer-Outcome")
	if resp.Header.Get("Producer-Outcome") == "epoch-closed" {
		fmt.Fprintln(out, "A  reset: fenced (stop)")
	}

	// A retry of B's last append is acknowledged, not appended again.
	resp = b.appendAs(8, 1, "b1 ")
	show(out, "B", "retry epoch 8, seq 1", resp, "Producer-Seq")

	// The stream takes a new history (an accepted loss): its incarnation
	// changes, and an append naming the old one is refused.
	resp, _ = b.do("HEAD", "/v1/stream/db", nil, "")
	old := resp.Header.Get("Stream-Incarnation")
	if _, err := leader.Group.Apply(context.Background(),
		stream.Command{Op: stream.OpReincarnate, Stream: "db", Now: time.Now().UnixNano()}.Encode()); err != nil {
		return err
	}
	resp, _ = b.do("POST", "/v1/stream/db", map[string]string{
		"Content-Type": "text/plain", "Producer-Id": producerID, "Producer-Epoch": "8",
		"Producer-Seq": "2", "Stream-Incarnation": old}, "b2 ")
	show(out, "B", "append with old incarnation", resp)

	_, body = b.do("GET", "/v1/stream/db?offset=-1", nil, "")
	recs = strings.Fields(body)
	fmt.Fprintf(out, "   the stream holds %d records: a0..a%d, then %s\n", len(recs), 41, strings.Join(recs[42:], " "))
	return nil
}
