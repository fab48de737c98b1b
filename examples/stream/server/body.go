package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"time"
)

// readBody reads at most MaxBody bytes; ok is false (and the answer written)
// when the body is larger.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if r.ContentLength > s.maxBody() {
		httpError(w, http.StatusRequestEntityTooLarge, "body of %d bytes is over the limit of %d", r.ContentLength, s.maxBody())
		return nil, false
	}
	bodyTimeout := s.BodyTimeout
	if bodyTimeout <= 0 {
		bodyTimeout = 30 * time.Second
	}
	// A ResponseWriter that cannot set deadlines (a test's recorder) reads
	// without one.
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(bodyTimeout))
	b, err := io.ReadAll(io.LimitReader(r.Body, s.maxBody()+1))
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		// The deadline stays, so that net/http gives up draining the
		// rest of the body and closes the connection.
		w.Header().Set("Connection", "close")
		httpError(w, http.StatusRequestTimeout, "reading body: not complete after %v", bodyTimeout)
		return nil, false
	}
	// Cleared at once: a deadline left behind would end the request's
	// context while the append is in the log.
	rc.SetReadDeadline(time.Time{})
	if err != nil {
		httpError(w, http.StatusBadRequest, "reading body: %v", err)
		return nil, false
	}
	if int64(len(b)) > s.maxBody() {
		httpError(w, http.StatusRequestEntityTooLarge, "body is over the limit of %d bytes", s.maxBody())
		return nil, false
	}
	return b, true
}

// jsonMessages splits a JSON body into messages, flattening one level of
// array (PROTOCOL.md 9.1.2). allowEmpty permits [] (a PUT).
// bodyMessages splits a create or append body into the stream's messages:
// with asJSON, one message per element of a JSON array (or the one JSON
// value), else the body as one message. Invalid JSON is answered 400 naming
// the stream, and ok is false.
func bodyMessages(w http.ResponseWriter, name string, body []byte, asJSON, allowEmpty bool) (msgs [][]byte, ok bool) {
	if !asJSON {
		return [][]byte{body}, true
	}
	msgs, err := jsonMessages(body, allowEmpty)
	if err != nil {
		httpError(w, http.StatusBadRequest, "stream %q: %v", name, err)
		return nil, false
	}
	return msgs, true
}

func jsonMessages(b []byte, allowEmpty bool) ([][]byte, error) {
	if !json.Valid(b) {
		return nil, errors.New("body is not valid JSON")
	}
	// One compacted copy of the body; the messages are slices of it, so a
	// body of many tiny values costs one buffer and one slice header per
	// message, not an allocation per message.
	var buf bytes.Buffer
	buf.Grow(len(b))
	if err := json.Compact(&buf, b); err != nil {
		return nil, err
	}
	c := buf.Bytes()
	if len(c) == 0 || c[0] != '[' {
		return [][]byte{c}, nil // not an array: one message
	}
	msgs := splitArray(c)
	if len(msgs) == 0 && !allowEmpty {
		return nil, errors.New("an append of an empty JSON array has no messages")
	}
	return msgs, nil
}

// splitArray returns the elements of a compacted, valid JSON array as
// slices of it.
func splitArray(c []byte) [][]byte {
	inner := c[1 : len(c)-1]
	if len(inner) == 0 {
		return [][]byte{}
	}
	n := 1
	depth, inStr, esc := 0, false, false
	for _, ch := range inner {
		switch {
		case esc:
			esc = false
		case inStr:
			esc, inStr = ch == '\\', ch != '"'
		case ch == '"':
			inStr = true
		case ch == '[' || ch == '{':
			depth++
		case ch == ']' || ch == '}':
			depth--
		case ch == ',' && depth == 0:
			n++
		}
	}
	msgs := make([][]byte, 0, n)
	start := 0
	depth, inStr, esc = 0, false, false
	for i, ch := range inner {
		switch {
		case esc:
			esc = false
		case inStr:
			esc, inStr = ch == '\\', ch != '"'
		case ch == '"':
			inStr = true
		case ch == '[' || ch == '{':
			depth++
		case ch == ']' || ch == '}':
			depth--
		case ch == ',' && depth == 0:
			msgs = append(msgs, inner[start:i:i])
			start = i + 1
		}
	}
	return append(msgs, inner[start:len(inner):len(inner)])
}
