package owner

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ownership-book/ownership/examples/stream"
	"github.com/ownership-book/ownership/examples/stream/server"
)

// testStream is one stream machine served over HTTP in process (no ports).
// Front, if set, sees every request first and may answer it itself, which is
// how tests play a proxy in front of the stream (a lowered request limit) or
// a stream that forgot a producer.
type testStream struct {
	t     *testing.T
	m     *stream.Machine
	srv   *server.Server
	mu    sync.Mutex
	front func(w http.ResponseWriter, r *http.Request) bool
}

func newTestStream(t *testing.T) *testStream {
	m := stream.NewMachine()
	ts := &testStream{t: t, m: m}
	ts.srv = &server.Server{M: m, A: server.Local{M: m}, Now: func() time.Time { return time.Unix(1e9, 0) }}
	return ts
}

func (ts *testStream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ts.mu.Lock()
	front := ts.front
	ts.mu.Unlock()
	if front != nil && front(w, r) {
		return
	}
	ts.srv.ServeHTTP(w, r)
}

func (ts *testStream) setFront(f func(w http.ResponseWriter, r *http.Request) bool) {
	ts.mu.Lock()
	ts.front = f
	ts.mu.Unlock()
}

// fault decides, for one request of one process, whether the request is
// dropped before the stream sees it, or its answer is dropped after the
// stream applied it.
type fault func(r *http.Request) (dropRequest, dropAnswer bool)

// link is a process's connection to the stream: an http.RoundTripper that
// calls the stream's handler in process, through fault.
type link struct {
	h     http.Handler
	mu    sync.Mutex
	fault fault
	down  bool // partitioned: every request is dropped
	sent  int  // requests that reached the stream
}

var errDropped = errors.New("test: connection dropped")

func (l *link) RoundTrip(r *http.Request) (*http.Response, error) {
	l.mu.Lock()
	down, f := l.down, l.fault
	l.mu.Unlock()
	dropReq, dropAns := down, false
	if !down && f != nil {
		dropReq, dropAns = f(r)
	}
	if dropReq {
		return nil, errDropped
	}
	rec := httptest.NewRecorder()
	r = r.Clone(r.Context())
	r.RequestURI = r.URL.RequestURI()
	if r.Body == nil {
		r.Body = http.NoBody
	}
	l.h.ServeHTTP(rec, r)
	l.mu.Lock()
	l.sent++
	l.mu.Unlock()
	if dropAns {
		return nil, errDropped
	}
	res := rec.Result()
	res.Request = r
	return res, nil
}

func (l *link) setDown(v bool) {
	l.mu.Lock()
	l.down = v
	l.mu.Unlock()
}

func (l *link) setFault(f fault) {
	l.mu.Lock()
	l.fault = f
	l.mu.Unlock()
}

func (l *link) requests() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sent
}

// client returns a stream client for one process, with its own link.
func (ts *testStream) client() (*Client, *link) {
	l := &link{h: ts}
	return &Client{Base: "http://stream.test", Name: "db", ProducerID: "db-writer",
		HTTP: &http.Client{Transport: l}}, l
}

// open opens a Manual DB named id in dir against ts.
func (ts *testStream) open(dir, id string, trace func(Event)) (*DB, *link, error) {
	c, l := ts.client()
	db, err := Open(context.Background(), dir, Options{Stream: c, ID: id, Manual: true, Trace: trace})
	return db, l, err
}

func (ts *testStream) mustOpen(dir, id string) (*DB, *link) {
	ts.t.Helper()
	db, l, err := ts.open(dir, id, nil)
	if err != nil {
		ts.t.Fatalf("open %s: %v", id, err)
	}
	ts.t.Cleanup(func() { db.Close() })
	return db, l
}

// records reads the whole stream and decodes it.
func (ts *testStream) records() []record {
	ts.t.Helper()
	rr, o := ts.m.Read("db", 0, 1<<30, 0)
	if o != "" {
		ts.t.Fatalf("read stream: %s", o)
	}
	var data []byte
	for _, m := range rr.Messages {
		data = append(data, m...)
	}
	recs, err := decode(data)
	if err != nil {
		ts.t.Fatalf("decode stream: %v", err)
	}
	return recs
}

// history replays the stream's commits, checking that commit i+1 follows
// commit i, and returns them.
func (ts *testStream) history() []Commit {
	ts.t.Helper()
	var cs []Commit
	for _, r := range ts.records() {
		if r.T != "commit" {
			continue
		}
		if r.I != uint64(len(cs))+1 {
			ts.t.Fatalf("stream history: commit %d follows commit %d", r.I, len(cs))
		}
		cs = append(cs, r.commit())
	}
	return cs
}

// producer is the stream's producer state (epoch, last seq).
func (ts *testStream) producer() (uint64, uint64) {
	ts.t.Helper()
	snap, err := ts.m.Snapshot()
	if err != nil {
		ts.t.Fatal(err)
	}
	var st stream.State
	if err := json.Unmarshal(snap, &st); err != nil {
		ts.t.Fatal(err)
	}
	s := st.Streams["db"]
	if s == nil || s.Producers["db-writer"] == nil {
		return 0, 0
	}
	p := s.Producers["db-writer"]
	return p.Epoch, p.LastSeq
}

// closeBehind closes the database's stream behind its owners' backs, as an
// operator's tool would. The stream is fence-required, so the close names a
// producer of its own (an id the database never uses).
var closeBehind = stream.Command{Op: stream.OpAppend, Stream: "db", Close: true,
	Producer: &stream.Producer{ID: "operator", Epoch: 0, Seq: 0}}

func isAppend(r *http.Request) bool { return r.Method == http.MethodPost }

func headerIs(r *http.Request, name, v string) bool { return r.Header.Get(name) == v }

func commitsOf(t *testing.T, db *DB) []Commit {
	t.Helper()
	cs, err := db.Commits()
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func keys(cs []Commit) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString(c.Key + "=" + c.Value + " ")
	}
	return strings.TrimSpace(b.String())
}
