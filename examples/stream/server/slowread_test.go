package server

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ownership-book/ownership/examples/stream"
)

// TestSlowReaderIsCut opens an SSE read of a 32 MiB stream and a catch-up
// read of it (at most MaxRead, 1 MiB) from clients that never read their
// socket. Once the kernel's buffers are full the SSE handler's writes
// block; without a write deadline it would block for ever. With
// WriteTimeout 300ms both handlers must end within a few seconds.
func TestSlowReaderIsCut(t *testing.T) {
	m := stream.NewMachine()
	s := &Server{M: m, A: Local{M: m}, MaxBody: 1 << 20, SSELifetime: 300 * time.Millisecond,
		WriteTimeout: 300 * time.Millisecond}
	done := make(chan string, 2)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.ServeHTTP(w, r)
		if r.Method == "GET" {
			done <- r.URL.RawQuery
		}
	}))
	defer hs.Close()
	req, _ := http.NewRequest("PUT", hs.URL+Prefix+"big", nil)
	req.Header.Set("Content-Type", "text/plain")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 201 {
		t.Fatalf("PUT: %v %v", resp, err)
	}
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	for range 32 {
		resp, err := http.Post(hs.URL+Prefix+"big", "text/plain", bytes.NewReader(chunk))
		if err != nil || resp.StatusCode != 204 {
			t.Fatalf("POST: %v %v", resp, err)
		}
	}
	for _, q := range []string{"offset=-1&live=sse", "offset=-1"} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(hs.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.(*net.TCPConn).SetReadBuffer(4096)
		io.WriteString(conn, "GET "+Prefix+"big?"+q+" HTTP/1.1\r\nHost: x\r\n\r\n")
	}
	select {
	case q := <-done:
		if !strings.Contains(q, "sse") {
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("SSE handler still blocked 5s after its lifetime, writing to a client that does not read")
			}
		}
	case <-time.After(5 * time.Second):
		t.Fatal("handlers still blocked 5s after the SSE lifetime, writing to clients that do not read")
	}
}
