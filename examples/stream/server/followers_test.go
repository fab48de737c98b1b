package server

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ownership-book/ownership/examples/stream"
)

// TestReadersFollowConcurrentAppends has eight writers append concurrently
// while four long-poll readers and four SSE readers follow the stream; a
// ninth request closes it. Every reader must end (on Stream-Closed or the
// SSE control event streamClosed) holding exactly the stream's bytes.
// Reference: PROTOCOL.md 5.6 and 5.7 (long-poll and SSE), 5.3 (closure).
func TestReadersFollowConcurrentAppends(t *testing.T) {
	m := stream.NewMachine()
	s := &Server{M: m, A: Local{M: m}, LongPoll: 2 * time.Second, SSELifetime: 10 * time.Second}
	hs := httptest.NewServer(s)
	defer hs.Close()
	url := hs.URL + Prefix + "s"
	req, _ := http.NewRequest("PUT", url, nil)
	req.Header.Set("Content-Type", "text/plain")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 201 {
		t.Fatalf("PUT: %v %v", resp, err)
	}
	const writers, each = 8, 100
	got := make([]string, 8)
	var readers, ws sync.WaitGroup
	for i := range 4 {
		readers.Add(2)
		go func() { // long-poll
			defer readers.Done()
			var b strings.Builder
			off := "-1"
			for {
				resp, err := http.Get(url + "?live=long-poll&offset=" + off)
				if err != nil {
					t.Error(err)
					return
				}
				data, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 && resp.StatusCode != 204 {
					t.Errorf("long-poll: %d %s", resp.StatusCode, data)
					return
				}
				b.Write(data)
				off = resp.Header.Get(HeaderNextOffset)
				if resp.Header.Get(HeaderClosed) == "true" {
					got[i] = b.String()
					return
				}
			}
		}()
		go func() { // SSE
			defer readers.Done()
			resp, err := http.Get(url + "?live=sse&offset=-1")
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			var b strings.Builder
			sc := bufio.NewScanner(resp.Body)
			event := ""
			for sc.Scan() {
				line := sc.Text()
				switch {
				case strings.HasPrefix(line, "event: "):
					event = line[len("event: "):]
				case strings.HasPrefix(line, "data:") && event == "data":
					b.WriteString(line[len("data:"):])
				case strings.HasPrefix(line, "data:") && strings.Contains(line, `"streamClosed":true`):
					got[4+i] = b.String()
					return
				}
			}
			t.Errorf("SSE reader %d: stream ended without streamClosed (%v)", i, sc.Err())
		}()
	}
	for w := range writers {
		ws.Add(1)
		go func() {
			defer ws.Done()
			for i := range each {
				resp, err := http.Post(url, "text/plain", strings.NewReader(fmt.Sprintf("w%d-%d;", w, i)))
				if err != nil || resp.StatusCode != 204 {
					t.Errorf("append: %v %v", resp, err)
					return
				}
				resp.Body.Close()
			}
		}()
	}
	ws.Wait()
	req, _ = http.NewRequest("POST", url, nil)
	req.Header.Set(HeaderClosed, "true")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 204 {
		t.Fatalf("close: %v %v", resp, err)
	}
	readers.Wait()
	rr, _ := m.Read("s", 0, 1<<30, time.Now().UnixNano())
	want := string(body(rr))
	if n := strings.Count(want, ";"); n != writers*each {
		t.Fatalf("stream holds %d appends, want %d", n, writers*each)
	}
	for i, g := range got {
		if g != want {
			t.Errorf("reader %d (%s) got %d bytes, the stream has %d", i, []string{"long-poll", "SSE"}[i/4], len(g), len(want))
		}
	}
}

// TestDeleteEndsWaitingReaders deletes a stream while a long-poll reader
// and an SSE reader wait on it: the long-poll answers 404 or 410 and the
// SSE response ends, at once rather than at their timeouts.
// Reference: PROTOCOL.md 5.4 (DELETE).
func TestDeleteEndsWaitingReaders(t *testing.T) {
	m := stream.NewMachine()
	s := &Server{M: m, A: Local{M: m}, LongPoll: 10 * time.Second, SSELifetime: 10 * time.Second}
	hs := httptest.NewServer(s)
	defer hs.Close()
	url := hs.URL + Prefix + "s"
	req, _ := http.NewRequest("PUT", url, nil)
	req.Header.Set("Content-Type", "text/plain")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 201 {
		t.Fatalf("PUT: %v %v", resp, err)
	}
	status := make(chan int, 2)
	for _, q := range []string{"live=long-poll&offset=now", "live=sse&offset=now"} {
		go func() {
			resp, err := http.Get(url + "?" + q)
			if err != nil {
				status <- 0
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			status <- resp.StatusCode
		}()
	}
	waitReaders(t, m, "s", 2)
	start := time.Now()
	req, _ = http.NewRequest("DELETE", url, nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 204 {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	for range 2 {
		st := <-status
		if st != 200 && st != 404 && st != 410 {
			t.Errorf("reader answered %d after the delete", st)
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("readers ended %v after the delete, want at once", d)
	}
}
