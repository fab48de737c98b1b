package server

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ownership-book/ownership/examples/stream"
)

// cursorEpoch and cursorInterval define the Stream-Cursor (PROTOCOL.md 10.1):
// the number of 20-second intervals since 2024-10-09T00:00:00Z.
var cursorEpoch = time.Date(2024, 10, 9, 0, 0, 0, 0, time.UTC)

const cursorInterval = 20 * time.Second

func (s *Server) cursor(client string) string {
	cur := int64(s.now().Sub(cursorEpoch) / cursorInterval)
	if c, err := strconv.ParseInt(client, 10, 64); err == nil && c >= cur {
		cur = c + 1 + rand.Int64N(180)
	}
	return strconv.FormatInt(cur, 10)
}

func (s *Server) read(w http.ResponseWriter, r *http.Request, name string) {
	q := r.URL.Query()
	offsets, hasOffset := q["offset"]
	live := q.Get("live")
	if len(offsets) > 1 {
		httpError(w, http.StatusBadRequest, "stream %q: give one offset, not %d", name, len(offsets))
		return
	}
	if live != "" && live != "long-poll" && live != "sse" {
		httpError(w, http.StatusBadRequest, "stream %q: live=%q: want long-poll or sse", name, live)
		return
	}
	if live != "" && !hasOffset {
		httpError(w, http.StatusBadRequest, "stream %q: live=%s needs an offset", name, live)
		return
	}
	// Malformed input is refused before anything reaches the log.
	var parsed int64
	if v := q.Get("offset"); hasOffset && v != "-1" && v != "now" {
		n, err := ParseOffset(v)
		if err != nil {
			httpError(w, http.StatusBadRequest, "stream %q: %v", name, err)
			return
		}
		parsed = n
	}
	// Every read is a leader read. For a stream with a sliding TTL the read
	// must also be recorded in the log (PROTOCOL.md 5.1: a read resets the
	// countdown); that write, applied here, is itself the leader read, since
	// the leader applies it after everything committed before it.
	if pre, o := s.M.Stat(name, s.now().UnixNano()); o == "" && pre.TTL >= 0 {
		// A read that is going to be refused must not restart the
		// countdown, so an explicit offset is first checked against the
		// current state (after a leader read of its own).
		if hasOffset && q.Get("offset") != "-1" && q.Get("offset") != "now" {
			if !s.leaderRead(w, r) {
				return
			}
			if _, ok := s.readAt(w, name, parsed, 1); !ok {
				return
			}
		}
		res, ok := s.apply(r.Context(), w, r, stream.Command{Op: stream.OpTouch, Stream: name}, nil)
		if !ok {
			return
		}
		if res.Outcome != stream.Touched {
			writeRefusal(w, res)
			return
		}
	} else if !s.leaderRead(w, r) {
		return
	}
	info, o := s.M.Stat(name, s.now().UnixNano())
	if o != "" {
		httpError(w, statusOf(o), "stream %q: %s", name, o.Text())
		return
	}
	var off int64
	atNow := false
	switch v := q.Get("offset"); {
	case !hasOffset || v == "-1":
		off = 0
	case v == "now":
		off, atNow = info.Tail, true
	default:
		off = parsed
	}
	switch live {
	case "sse":
		s.sse(w, r, name, off)
	case "long-poll":
		s.longPoll(w, r, name, off, atNow)
	default:
		s.catchUp(w, r, name, off, atNow)
	}
}

func (s *Server) maxRead() int {
	if s.MaxRead > 0 {
		return s.MaxRead
	}
	return 1 << 20
}

func body(rr stream.ReadResult) []byte {
	if rr.Info.ContentType != "" && stream.IsJSONType(rr.Info.ContentType) {
		var b []byte
		b = append(b, '[')
		for i, m := range rr.Messages {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, m...)
		}
		return append(b, ']')
	}
	var b []byte
	for _, m := range rr.Messages {
		b = append(b, m...)
	}
	return b
}

// readAt reads at most about maxBytes from off, or answers the refusal
// (404, 410, or 400 naming the offset) and returns false.
func (s *Server) readAt(w http.ResponseWriter, name string, off int64, maxBytes int) (stream.ReadResult, bool) {
	rr, o := s.M.Read(name, off, maxBytes, s.now().UnixNano())
	switch {
	case o == stream.BadRequest && off > rr.Tail:
		httpError(w, statusOf(o), "stream %q: offset %s is past the tail %s", name, FormatOffset(off), FormatOffset(rr.Tail))
		return rr, false
	case o == stream.BadRequest:
		httpError(w, statusOf(o), "stream %q: offset %s falls inside a JSON message; read from a message boundary", name, FormatOffset(off))
		return rr, false
	case o != "":
		httpError(w, statusOf(o), "stream %q: %s", name, o.Text())
		return rr, false
	}
	return rr, true
}

// writeDeadline gives the writes that follow WriteTimeout to complete. A
// ResponseWriter that cannot set deadlines (a test's recorder) has none.
func (s *Server) writeDeadline(w http.ResponseWriter) {
	d := s.WriteTimeout
	if d <= 0 {
		d = 30 * time.Second
	}
	http.NewResponseController(w).SetWriteDeadline(time.Now().Add(d))
}

func (s *Server) writeRead(w http.ResponseWriter, r *http.Request, rr stream.ReadResult, atNow bool, cursor bool) {
	s.writeDeadline(w)
	h := w.Header()
	h.Set("Content-Type", rr.ContentType)
	h.Set(HeaderNextOffset, FormatOffset(rr.Next))
	h.Set(HeaderIncarnation, rr.Incarnation)
	setFence(h, rr.Fence)
	if rr.UpToDate {
		h.Set(HeaderUpToDate, "true")
	}
	closedAtEnd := rr.Closed && rr.Next == rr.Tail
	if closedAtEnd {
		h.Set(HeaderClosed, "true")
	} else if cursor {
		h.Set(HeaderCursor, s.cursor(r.URL.Query().Get("cursor")))
	}
	if atNow {
		h.Set("Cache-Control", "no-store")
	} else {
		etag := fmt.Sprintf(`"%s:%s:%s`, rr.Incarnation, FormatOffset(rr.Start), FormatOffset(rr.Next))
		if closedAtEnd {
			etag += ":c"
		}
		etag += `"`
		h.Set("ETag", etag)
		h.Set("Cache-Control", "public, max-age=60, stale-while-revalidate=300")
		if inm := r.Header.Get("If-None-Match"); inm != "" && (inm == etag || inm == "*") {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	w.WriteHeader(http.StatusOK)
	w.Write(body(rr))
}

func (s *Server) catchUp(w http.ResponseWriter, r *http.Request, name string, off int64, atNow bool) {
	rr, ok := s.readAt(w, name, off, s.maxRead())
	if !ok {
		return
	}
	s.writeRead(w, r, rr, atNow, false)
}

func (s *Server) longPollTimeout() time.Duration {
	if s.LongPoll > 0 {
		return s.LongPoll
	}
	return 20 * time.Second
}

func (s *Server) longPoll(w http.ResponseWriter, r *http.Request, name string, off int64, atNow bool) {
	deadline := time.NewTimer(s.longPollTimeout())
	defer deadline.Stop()
	// Each round's Changed channel is released when the next round takes
	// one and when the reader leaves, so no waiter entry outlives it.
	release := func() {}
	defer func() { release() }()
	for {
		release()
		var changed <-chan struct{}
		changed, release = s.M.Changed(name)
		rr, ok := s.readAt(w, name, off, s.maxRead())
		if !ok {
			return
		}
		if len(rr.Messages) > 0 {
			s.writeRead(w, r, rr, false, true)
			return
		}
		if rr.Closed {
			h := w.Header()
			h.Set(HeaderNextOffset, FormatOffset(rr.Tail))
			h.Set(HeaderUpToDate, "true")
			h.Set(HeaderIncarnation, rr.Incarnation)
			h.Set(HeaderClosed, "true")
			h.Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		expiry, stop := s.expiry(rr.Info)
		select {
		case <-changed:
		case <-expiry:
		case <-deadline.C:
			stop()
			h := w.Header()
			h.Set(HeaderNextOffset, FormatOffset(rr.Tail))
			h.Set(HeaderUpToDate, "true")
			h.Set(HeaderIncarnation, rr.Incarnation)
			h.Set(HeaderCursor, s.cursor(r.URL.Query().Get("cursor")))
			h.Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusNoContent)
			return
		case <-r.Context().Done():
			stop()
			return
		}
		stop()
	}
}

// expiry returns a channel that fires when the stream of info expires (nil
// for one that never does) and a func that stops its timer. A waiting
// reader selects on it because expiry, unlike a delete, is no command and
// closes no Changed channel.
func (s *Server) expiry(info stream.Info) (<-chan time.Time, func()) {
	if info.ExpiresBy == 0 {
		return nil, func() {}
	}
	t := time.NewTimer(time.Duration(info.ExpiresBy-s.now().UnixNano()) + time.Millisecond)
	return t.C, func() { t.Stop() }
}

func (s *Server) sse(w http.ResponseWriter, r *http.Request, name string, off int64) {
	lifetime := s.SSELifetime
	if lifetime <= 0 {
		lifetime = 60 * time.Second
	}
	end := time.NewTimer(lifetime)
	defer end.Stop()
	flusher, _ := w.(http.Flusher)
	started, sentControl := false, false
	var binary bool
	// Every round of writes gets a fresh deadline, and so does the final
	// flush net/http makes after the handler returns.
	defer s.writeDeadline(w)
	// Each round's Changed channel is released when the next round takes
	// one and when the reader leaves, so no waiter entry outlives it.
	release := func() {}
	defer func() { release() }()
	for {
		release()
		var changed <-chan struct{}
		changed, release = s.M.Changed(name)
		rr, o := s.M.Read(name, off, s.maxRead(), s.now().UnixNano())
		s.writeDeadline(w)
		if o != "" {
			if !started {
				httpError(w, statusOf(o), "stream %q: %s", name, o.Text())
			}
			return
		}
		if !started {
			started = true
			h := w.Header()
			h.Set("Content-Type", "text/event-stream")
			h.Set(HeaderIncarnation, rr.Incarnation)
			h.Set("Cache-Control", "no-cache")
			ct := stream.MediaType(rr.ContentType)
			binary = !(strings.HasPrefix(ct, "text/") || ct == "application/json")
			if binary {
				h.Set(HeaderSSEEncoding, "base64")
			}
			w.WriteHeader(http.StatusOK)
		}
		if len(rr.Messages) > 0 {
			writeSSEData(w, rr, binary)
		}
		closedAtEnd := rr.Closed && rr.Next == rr.Tail
		ctl := map[string]any{"streamNextOffset": FormatOffset(rr.Next)}
		if rr.UpToDate {
			ctl["upToDate"] = true
		}
		if closedAtEnd {
			ctl["streamClosed"] = true
		} else {
			ctl["streamCursor"] = s.cursor(r.URL.Query().Get("cursor"))
		}
		// A control event follows every data event; with no data, only the
		// first one (where the reader stands) and the closing one are sent,
		// so a change that added nothing here (a TTL touch) stays silent.
		if len(rr.Messages) > 0 || !sentControl || closedAtEnd {
			cb, _ := json.Marshal(ctl)
			fmt.Fprintf(w, "event: control\ndata:%s\n\n", cb)
			sentControl = true
		}
		if flusher != nil {
			flusher.Flush()
		}
		if closedAtEnd {
			return
		}
		off = rr.Next
		if !rr.UpToDate {
			continue
		}
		expiry, stop := s.expiry(rr.Info)
		select {
		case <-changed:
		case <-expiry:
		case <-end.C:
			stop()
			return
		case <-r.Context().Done():
			stop()
			return
		}
		stop()
	}
}

func writeSSEData(w io.Writer, rr stream.ReadResult, binary bool) {
	var text string
	if binary {
		text = base64.StdEncoding.EncodeToString(body(rr))
	} else {
		text = string(body(rr))
	}
	var b strings.Builder
	b.WriteString("event: data\n")
	// Every line of the payload gets its own data: field, so that no byte
	// of the payload can end the event (CR, LF and CRLF all end an SSE line).
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	for _, line := range strings.Split(text, "\n") {
		b.WriteString("data:")
		if strings.HasPrefix(line, " ") {
			b.WriteString(" ") // the reader strips one leading space
		}
		b.WriteString(line)
		b.WriteString("\n")
	}
	b.WriteString("\n")
	io.WriteString(w, b.String())
}
