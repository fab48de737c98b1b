package node

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// closedWithin reports whether the server closes conn (EOF or reset)
// within d.
func closedWithin(t *testing.T, conn net.Conn, d time.Duration) bool {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(d))
	_, err := io.ReadAll(conn)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	return true
}

// TestSlowHeadersAreCut opens a connection that sends half a request header
// and then nothing (a slowloris client). The voter's HTTP server must close
// it after ReadHeaderTimeout instead of holding a connection and a
// goroutine for ever.
// Reference: net/http Server.ReadHeaderTimeout.
func TestSlowHeadersAreCut(t *testing.T) {
	c, err := Start(Options{ReadHeaderTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	conn, err := net.Dial("tcp", strings.TrimPrefix(c.Nodes[0].URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "GET /v1/stream/s HTTP/1.1\r\nHost: x\r\n")
	if !closedWithin(t, conn, 3*time.Second) {
		t.Fatal("a connection with an unfinished header is still open after 3s (ReadHeaderTimeout 200ms)")
	}
}

// TestSlowBodyIsCut sends a whole header announcing a 100-byte body and
// then one byte: the server must give up on the body after BodyTimeout
// instead of waiting for the rest for ever.
// Reference: net/http ResponseController.SetReadDeadline.
func TestSlowBodyIsCut(t *testing.T) {
	c, err := Start(Options{BodyTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	conn, err := net.Dial("tcp", strings.TrimPrefix(c.Nodes[0].URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "POST /v1/stream/s HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\nx")
	if !closedWithin(t, conn, 3*time.Second) {
		t.Fatal("a request whose body stalls is still open after 3s (BodyTimeout 200ms)")
	}
}
