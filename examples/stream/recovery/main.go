// Command recovery plays the two ways the recovery after a claim ends, for
// chapter "Owning a database through its stream", section "Recovery after
// the claim", against a real stream served over HTTP on the loopback
// interface:
//
//   - Nobody else wrote. A syncs commits 1-2, sends commits 3-4 and loses
//     the answer (they landed), makes commit 5 locally and stops. Opened
//     again, its walk finds 3 and 4 landed and it resends 5.
//   - Someone else wrote. A syncs commit 1, makes commit 2 locally and
//     stops; B opens a copy of its own and syncs its commit 2. Opened
//     again, A's walk meets B's commit: A's commit 2 is discarded and B's
//     taken.
//
// For each it prints the copy's pending commits and what the walk decided
// for each, and the commits it took from the stream. With -figure it prints
// the same as a D2 grid (see figure.go). No port, time or directory appears
// in the output.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/ownership-book/ownership/examples/stream"
	"github.com/ownership-book/ownership/examples/stream/owner"
	"github.com/ownership-book/ownership/examples/stream/server"
)

func main() {
	figure := flag.Bool("figure", false, "print both walks as a D2 grid (see figure.go)")
	flag.Parse()
	walks, err := playBoth()
	if err == nil {
		if *figure {
			err = writeFigure(os.Stdout, walks)
		} else {
			writeTranscript(os.Stdout, walks)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "recovery:", err)
		os.Exit(1)
	}
}

// row is one commit the walk decided about.
type row struct {
	Commit owner.Commit
	Fate   string // "landed", "resent", "discarded" or "taken"
}

// walk is one recovery.
type walk struct {
	Title string
	Who   string // the copy that recovers
	Epoch uint64 // the epoch it claimed
	Rows  []row
}

// answerLoss drops the answer to the next POST once dropNext is set: the
// stream applied it, the sender never hears so.
type answerLoss struct {
	next     http.RoundTripper
	dropNext atomic.Bool
}

func (l *answerLoss) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(req)
	if err == nil && req.Method == http.MethodPost && l.dropNext.CompareAndSwap(true, false) {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return nil, errors.New("connection reset: the answer was lost")
	}
	return resp, err
}

// env is one stream and a way to open copies on it.
type env struct {
	ctx   context.Context
	tmp   string
	base  string
	lossy *answerLoss
}

func newEnv() (*env, func(), error) {
	m := stream.NewMachine()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	srv := &http.Server{Handler: &server.Server{M: m, A: server.Local{M: m}}}
	go srv.Serve(ln)
	tmp, err := os.MkdirTemp("", "recovery")
	if err != nil {
		srv.Close()
		return nil, nil, err
	}
	e := &env{ctx: context.Background(), tmp: tmp, base: "http://" + ln.Addr().String(),
		lossy: &answerLoss{next: &http.Transport{DialContext: (&net.Dialer{}).DialContext}}}
	return e, func() { srv.Close(); os.RemoveAll(tmp) }, nil
}

// open opens copy name (its directory is tmp/name); trace, if not nil,
// receives its events.
func (e *env) open(name string, trace func(owner.Event)) (*owner.DB, error) {
	c := &owner.Client{Base: e.base, Name: "orders", ProducerID: "orders-db", HTTP: &http.Client{Transport: e.lossy}}
	return owner.Open(e.ctx, filepath.Join(e.tmp, name), owner.Options{Stream: c, ID: name, Manual: true, Trace: trace})
}

func commit(ctx context.Context, db *owner.DB, i int) error {
	if err := db.Put(fmt.Sprintf("order-%d", i), fmt.Sprintf("commit %d", i)); err != nil {
		return err
	}
	return db.Synced(ctx)
}

// reopen reopens copy name, whose pending commits are pending, and says
// what its recovery decided for each, and which commits it took.
func (e *env) reopen(title, name string, pending []owner.Commit) (walk, error) {
	var rec *owner.Event
	db, err := e.open(name, func(ev owner.Event) {
		if ev.Kind == "recover" {
			rec = &ev
		}
	})
	if err != nil {
		return walk{}, err
	}
	defer db.Close()
	if rec == nil {
		return walk{}, fmt.Errorf("%s: no recovery after the claim", name)
	}
	if rec.Landed+rec.Kept+rec.Discarded != len(pending) {
		return walk{}, fmt.Errorf("%s: recovery %+v does not account for %d pending commits", name, *rec, len(pending))
	}
	w := walk{Title: title, Who: name, Epoch: rec.Epoch}
	for i, c := range pending {
		fate := "landed"
		switch {
		case i >= rec.Landed+rec.Kept:
			fate = "discarded"
		case i >= rec.Landed:
			fate = "resent"
		}
		w.Rows = append(w.Rows, row{c, fate})
	}
	if err := db.Synced(e.ctx); err != nil {
		return walk{}, err
	}
	all, err := db.Commits()
	if err != nil {
		return walk{}, err
	}
	for _, c := range all {
		if c.Writer != name {
			w.Rows = append(w.Rows, row{c, "taken"})
		}
	}
	if len(w.Rows)-len(pending) != rec.Taken {
		return walk{}, fmt.Errorf("%s: %d commits by others, recovery took %d", name, len(w.Rows)-len(pending), rec.Taken)
	}
	return w, nil
}

// pendingOf returns db's commits after its acknowledged prefix.
func pendingOf(db *owner.DB) ([]owner.Commit, error) {
	all, err := db.Commits()
	if err != nil {
		return nil, err
	}
	return all[db.Acknowledged():], nil
}

func playBoth() ([]walk, error) {
	var walks []walk
	for _, play := range []func() (walk, error){nobodyElse, someoneElse} {
		w, err := play()
		if err != nil {
			return nil, err
		}
		walks = append(walks, w)
	}
	return walks, nil
}

// nobodyElse: commits 3-4 land unacknowledged, 5 is never sent.
func nobodyElse() (walk, error) {
	e, done, err := newEnv()
	if err != nil {
		return walk{}, err
	}
	defer done()
	a, err := e.open("A", nil)
	if err != nil {
		return walk{}, err
	}
	for i := 1; i <= 2; i++ {
		if err := commit(e.ctx, a, i); err != nil {
			return walk{}, err
		}
	}
	for i := 3; i <= 4; i++ {
		if err := a.Put(fmt.Sprintf("order-%d", i), fmt.Sprintf("commit %d", i)); err != nil {
			return walk{}, err
		}
	}
	e.lossy.dropNext.Store(true)
	if err := a.Synced(e.ctx); !errors.Is(err, owner.ErrUnreachable) {
		return walk{}, fmt.Errorf("a sync whose answer was lost returned %v, want ErrUnreachable", err)
	}
	if err := a.Put("order-5", "commit 5"); err != nil {
		return walk{}, err
	}
	pending, err := pendingOf(a)
	if err != nil {
		return walk{}, err
	}
	a.Close()
	return e.reopen("nobody else wrote", "A", pending)
}

// someoneElse: A's commit 2 is never sent; B writes its own commit 2.
func someoneElse() (walk, error) {
	e, done, err := newEnv()
	if err != nil {
		return walk{}, err
	}
	defer done()
	a, err := e.open("A", nil)
	if err != nil {
		return walk{}, err
	}
	if err := commit(e.ctx, a, 1); err != nil {
		return walk{}, err
	}
	if err := a.Put("order-2", "from A"); err != nil {
		return walk{}, err
	}
	pending, err := pendingOf(a)
	if err != nil {
		return walk{}, err
	}
	a.Close()
	b, err := e.open("B", nil)
	if err != nil {
		return walk{}, err
	}
	if err := b.Put("order-2", "from B"); err != nil {
		return walk{}, err
	}
	if err := b.Synced(e.ctx); err != nil {
		return walk{}, err
	}
	b.Close()
	return e.reopen("someone else wrote", "A", pending)
}

// text says what happened to a row's commit, in words.
func (r row) text(w walk) string {
	switch r.Fate {
	case "resent":
		return fmt.Sprintf("resent under epoch %d", w.Epoch)
	case "discarded":
		return "discarded: made on a state that no longer exists"
	case "taken":
		return "taken from the stream"
	}
	return "landed before the stop"
}

func writeTranscript(out io.Writer, walks []walk) {
	for i, w := range walks {
		if i > 0 {
			fmt.Fprintln(out)
		}
		fmt.Fprintf(out, "%s: %s reopens and claims epoch %d\n", w.Title, w.Who, w.Epoch)
		for _, r := range w.Rows {
			fmt.Fprintf(out, "  commit %d by %s (%s=%s)  %s\n", r.Commit.Index, r.Commit.Writer, r.Commit.Key, r.Commit.Value, r.text(w))
		}
	}
}
