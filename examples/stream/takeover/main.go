// Command takeover runs an epoch-fenced stream and four processes that own
// one database in turn, and prints what each of them does, for chapter
// "Owning a database through its stream". It plays three scenes:
//
//   - A takeover. A appends seq 41 under epoch 7; B opens, and its claim
//     closes epoch 7 at seq 41; B appends seq 1 under epoch 8; A's seq 42 is
//     refused with 403 epoch-closed; A resets, its listener runs once, and
//     its next read fails.
//   - Recovery that resends. The stream applies B's append of commits 43-44
//     but the answer is lost; B makes commit 45 locally and stops. Opened
//     again on its directory, B claims epoch 9, its leader read finds 43-44
//     landed, and it resends 45 unchanged under the new epoch.
//   - A claim race. C and D open at once, both read epochs up to 9 and both
//     claim 10. C's claim lands first; D's is a duplicate (204), D finds C's
//     claim record on the stream, and claims again at 11, which fences C,
//     the race's first winner, and B.
//
// The stream is a real HTTP server on the loopback interface. The race is
// staged by the server's front door, which holds C's claim until D's has
// arrived and D's until C has finished opening, so the interleaving, like the
// rest of the output, is the same on every run: no port, time or directory
// appears in it. With -figure it prints the first scene, up to the
// fenced process's reset, as a D2 sequence diagram instead; -figure -scene 3
// prints the claim race, up to the moment C learns that D fenced it.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/ownership-book/ownership/examples/stream"
	"github.com/ownership-book/ownership/examples/stream/owner"
	"github.com/ownership-book/ownership/examples/stream/server"
)

func main() {
	figure := flag.Bool("figure", false, "print one scene as a D2 sequence diagram (see figure.go)")
	scene := flag.Int("scene", 1, "with -figure, the scene to draw: 1 the takeover, 3 the claim race")
	flag.Parse()
	var transcript bytes.Buffer
	w := io.Writer(os.Stdout)
	if *figure {
		w = &transcript
	}
	err := run(w)
	if err == nil && *figure {
		err = writeFigure(os.Stdout, transcript.String(), *scene)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "takeover:", err)
		os.Exit(1)
	}
}

// run prints the three scenes to w.
func run(out io.Writer) error {
	w := &lockedWriter{w: out}
	ctx := context.Background()
	m := stream.NewMachine()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	race := newRace(10)
	srv := &http.Server{Handler: race.front(&server.Server{M: m, A: server.Local{M: m}})}
	go srv.Serve(ln)
	defer srv.Close()
	tmp, err := os.MkdirTemp("", "takeover")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	// The transport dials through package net, as on a host; in a page
	// (js/wasm) the default one would send requests through the browser.
	lossy := &answerLoss{next: &http.Transport{DialContext: (&net.Dialer{}).DialContext}}
	var quiet atomic.Bool
	quiet.Store(true)
	trace := func(name string) func(owner.Event) {
		return func(e owner.Event) {
			if !quiet.Load() {
				printEvent(w, name, e)
			}
		}
	}
	open := func(name string) (*owner.DB, error) {
		c := &owner.Client{Base: "http://" + ln.Addr().String(), Name: "orders", ProducerID: "orders-db",
			HTTP: &http.Client{Transport: lossy}}
		return owner.Open(ctx, filepath.Join(tmp, name), owner.Options{
			Stream: c, ID: name, Manual: true, Trace: trace(name)})
	}

	// Scene 1: a takeover. A's history before the transcript starts: opened
	// seven times (each open claims the next epoch) and forty commits synced
	// under epoch 7.
	var a *owner.DB
	for range 7 {
		if a != nil {
			a.Close()
		}
		if a, err = open("A"); err != nil {
			return err
		}
	}
	defer a.Close()
	for i := 1; i <= 40; i++ {
		if err := commit(ctx, a, i); err != nil {
			return err
		}
	}
	w.printf("stream %q, producer id %q\n", "orders", "orders-db")
	w.printf("A  owns epoch %d; commits 1-40 synced as seq 1-40\n", a.Epoch())

	quiet.Store(false)
	if err := commit(ctx, a, 41); err != nil {
		return err
	}
	resets := 0
	a.OnReset(func(err error) {
		resets++
		w.printf("A  reset; the listener runs with:\n     %v\n", err)
	})

	b, err := open("B")
	if err != nil {
		return err
	}
	if err := commit(ctx, b, 42); err != nil {
		return err
	}

	// A does not know yet: its commit 42 is local, and its append is fenced.
	if err := a.Put("order-42", "from A"); err != nil {
		return err
	}
	err = a.Synced(ctx)
	w.printf("A  Synced: fenced=%v reset=%v\n", errors.Is(err, owner.ErrFenced), errors.Is(err, owner.ErrReset))
	_, _, err = a.Get("order-41")
	w.printf("A  Get(order-41) fails:\n     %v\n", err)
	w.printf("A  reset listener ran %d time(s)\n", resets)

	v, _, err := b.Get("order-42")
	if err != nil {
		return err
	}
	w.printf("B  Get(order-42) = %q; the stream holds %d commits\n", v, b.Acknowledged())

	// Scene 2: recovery that resends. The stream applies B's next append
	// but its answer is lost; B commits once more locally and crashes.
	w.printf("\n")
	for _, i := range []int{43, 44} {
		if err := b.Put(fmt.Sprintf("order-%d", i), fmt.Sprintf("commit %d", i)); err != nil {
			return err
		}
	}
	lossy.dropNext.Store(true)
	err = b.Synced(ctx)
	w.printf("B  append epoch %s seq %-2s -> %d %s, the answer lost on its way back\n",
		lossy.epoch, lossy.seq, lossy.status, answer(owner.AppendResult{Status: lossy.status}))
	w.printf("B  Synced fails (unreachable=%v); commits 43-44 pending\n", errors.Is(err, owner.ErrUnreachable))
	if err := b.Put("order-45", "commit 45"); err != nil {
		return err
	}
	w.printf("B  commit 45 made locally; B stops before sending it and opens its copy again\n")
	b.Close()
	if b, err = open("B"); err != nil {
		return err
	}
	defer b.Close()
	if err := b.Synced(ctx); err != nil {
		return err
	}
	w.printf("B  Synced: the stream holds %d commits\n", b.Acknowledged())

	// Scene 3: C and D open at once and both claim epoch 10.
	w.printf("\n")
	var c, d *owner.DB
	var cErr, dErr error
	cDone, dDone := make(chan struct{}), make(chan struct{})
	go func() { c, cErr = open("C"); close(cDone) }()
	<-race.first // C has read the stream and sent its claim, held at the door
	go func() { d, dErr = open("D"); close(dDone) }()
	<-cDone // D's claim arrived, C's went through, and C finished opening
	close(race.release)
	<-dDone
	if cErr != nil {
		return cErr
	}
	if dErr != nil {
		return dErr
	}
	defer c.Close()
	defer d.Close()
	if err := c.Put("order-46", "from C"); err != nil {
		return err
	}
	err = c.Synced(ctx)
	w.printf("C  Synced: fenced=%v; fenced by D's re-claim:\n     %v\n", errors.Is(err, owner.ErrFenced), err)
	err = b.Synced(ctx)
	w.printf("B  Synced: fenced=%v\n", errors.Is(err, owner.ErrFenced))
	if err := commit(ctx, d, 46); err != nil {
		return err
	}
	v, _, err = d.Get("order-45")
	if err != nil {
		return err
	}
	w.printf("D  Get(order-45) = %q; the stream holds %d commits\n", v, d.Acknowledged())
	return nil
}

// race stages a claim race at the stream's front door: the first claim of
// epoch it sees is held until a second claim of that epoch arrives; then the
// first goes through, and the second waits until release is closed.
type race struct {
	epoch   string
	mu      sync.Mutex
	seen    int
	first   chan struct{} // closed when the first claim arrives
	second  chan struct{} // closed when the second claim arrives
	release chan struct{} // closed by the program to let the second through
}

func newRace(epoch int) *race {
	return &race{epoch: fmt.Sprint(epoch), first: make(chan struct{}),
		second: make(chan struct{}), release: make(chan struct{})}
}

func (r *race) front(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodPost && req.Header.Get(owner.HeaderProducerSeq) == "0" &&
			req.Header.Get(owner.HeaderProducerEpoch) == r.epoch {
			r.mu.Lock()
			r.seen++
			n := r.seen
			r.mu.Unlock()
			switch n {
			case 1:
				close(r.first)
				<-r.second
			case 2:
				close(r.second)
				<-r.release
			}
		}
		next.ServeHTTP(w, req)
	})
}

// answerLoss is a RoundTripper that, when dropNext is set, delivers the next
// append to the stream and then loses its answer.
// It keeps the lost answer's status and the append's epoch and seq.
type answerLoss struct {
	next       http.RoundTripper
	dropNext   atomic.Bool
	status     int
	epoch, seq string
}

func (l *answerLoss) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(req)
	if err == nil && req.Method == http.MethodPost && l.dropNext.CompareAndSwap(true, false) {
		l.status = resp.StatusCode
		l.epoch, l.seq = req.Header.Get(owner.HeaderProducerEpoch), req.Header.Get(owner.HeaderProducerSeq)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return nil, errors.New("connection reset: the answer was lost")
	}
	return resp, err
}

// lockedWriter serializes the lines of processes that run at once.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format, args...)
}

// commit puts order-i and waits for Synced.
func commit(ctx context.Context, db *owner.DB, i int) error {
	if err := db.Put(fmt.Sprintf("order-%d", i), fmt.Sprintf("commit %d", i)); err != nil {
		return err
	}
	return db.Synced(ctx)
}

// printEvent prints one replicator step of process name.
func printEvent(w *lockedWriter, name string, e owner.Event) {
	r := e.Result
	switch e.Kind {
	case "catch-up":
		w.printf("%s  open: reads the stream, takes %d commits, epochs up to %d\n", name, e.Taken, e.Epoch)
	case "claim":
		line := fmt.Sprintf("%s  claim  epoch %d seq 0  -> %d %s", name, e.Epoch, r.Status, answer(r))
		if r.ClosedEpoch >= 0 {
			line += fmt.Sprintf(", closed epoch %d at seq %d", r.ClosedEpoch, r.ClosedSeq)
		}
		w.printf("%s\n", line)
	case "lost":
		if r.Status == http.StatusNoContent {
			w.printf("%s  reads the stream: the claim of epoch %d there is not its own; race lost\n", name, e.Epoch)
		} else {
			w.printf("%s  race lost: epoch %d is current\n", name, r.Epoch)
		}
	case "recover":
		w.printf("%s  leader read up to the claim: %d pending landed, %d to resend, %d discarded\n",
			name, e.Landed, e.Kept, e.Discarded)
	case "append", "probe":
		line := fmt.Sprintf("%s  %-6s epoch %d seq %-2d -> %d %s", name, e.Kind, e.Epoch, e.Seq, r.Status, answer(r))
		if r.Status == http.StatusForbidden {
			line += fmt.Sprintf(", current epoch %d", r.Epoch)
		}
		w.printf("%s\n", line)
	}
}

// answer names an append's outcome.
func answer(r owner.AppendResult) string {
	switch {
	case r.Outcome != "":
		return r.Outcome
	case r.Status == http.StatusOK:
		return "applied"
	case r.Status == http.StatusNoContent:
		return "duplicate"
	}
	return http.StatusText(r.Status)
}
