// Command takeover runs an epoch-fenced stream and two processes, A and B,
// that own one database in turn, and prints the takeover of chapter "Taking a
// database over" step by step: A appends seq 41 under epoch 7; B opens, and
// its claim closes epoch 7 at seq 41; B appends seq 1 under epoch 8; A's seq
// 42 is refused with 403 epoch-closed; A resets, its listener runs once, and
// its next read fails.
//
// The stream is a real HTTP server on the loopback interface; the output
// names no port, no time and no directory, so it is the same on every run.
// With -figure it prints the same run as a D2 sequence diagram instead.
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

	"github.com/ownership-book/ownership/examples/stream"
	"github.com/ownership-book/ownership/examples/stream/owner"
	"github.com/ownership-book/ownership/examples/stream/server"
)

func main() {
	figure := flag.Bool("figure", false, "print the takeover as a D2 sequence diagram (see figure.go)")
	flag.Parse()
	var transcript bytes.Buffer
	w := io.Writer(os.Stdout)
	if *figure {
		w = &transcript
	}
	err := run(w)
	if err == nil && *figure {
		err = writeFigure(os.Stdout, transcript.String())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "takeover:", err)
		os.Exit(1)
	}
}

// run prints the takeover to w.
func run(w io.Writer) error {
	ctx := context.Background()
	m := stream.NewMachine()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: &server.Server{M: m, A: server.Local{M: m}}}
	go srv.Serve(ln)
	defer srv.Close()
	tmp, err := os.MkdirTemp("", "takeover")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	client := func() *owner.Client {
		return &owner.Client{Base: "http://" + ln.Addr().String(), Name: "orders", ProducerID: "orders-db"}
	}
	quiet := true
	trace := func(name string) func(owner.Event) {
		return func(e owner.Event) {
			if !quiet {
				printEvent(w, name, e)
			}
		}
	}
	open := func(name string) (*owner.DB, error) {
		return owner.Open(ctx, filepath.Join(tmp, name), owner.Options{
			Stream: client(), ID: name, Manual: true, Trace: trace(name)})
	}

	// A's history before the transcript starts: opened seven times (each
	// open claims the next epoch) and forty commits synced under epoch 7.
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
	fmt.Fprintf(w, "stream %q, producer id %q\n", "orders", "orders-db")
	fmt.Fprintf(w, "A  owns epoch %d; commits 1-40 synced as seq 1-40\n", a.Epoch())

	quiet = false
	if err := commit(ctx, a, 41); err != nil {
		return err
	}
	resets := 0
	a.OnReset(func(err error) {
		resets++
		fmt.Fprintf(w, "A  reset; the listener runs with:\n     %v\n", err)
	})

	b, err := open("B")
	if err != nil {
		return err
	}
	defer b.Close()
	if err := commit(ctx, b, 42); err != nil {
		return err
	}

	// A does not know yet: its commit 42 is local, and its append is fenced.
	if err := a.Put("order-42", "from A"); err != nil {
		return err
	}
	err = a.Synced(ctx)
	fmt.Fprintf(w, "A  Synced: fenced=%v reset=%v\n", errors.Is(err, owner.ErrFenced), errors.Is(err, owner.ErrReset))
	_, _, err = a.Get("order-41")
	fmt.Fprintf(w, "A  Get(order-41) fails:\n     %v\n", err)
	fmt.Fprintf(w, "A  reset listener ran %d time(s)\n", resets)

	v, _, err := b.Get("order-42")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "B  Get(order-42) = %q; the stream holds %d commits\n", v, b.Acknowledged())
	return nil
}

// commit puts order-i and waits for Synced.
func commit(ctx context.Context, db *owner.DB, i int) error {
	if err := db.Put(fmt.Sprintf("order-%d", i), fmt.Sprintf("commit %d", i)); err != nil {
		return err
	}
	return db.Synced(ctx)
}

// printEvent prints one replicator step of process name.
func printEvent(w io.Writer, name string, e owner.Event) {
	r := e.Result
	switch e.Kind {
	case "catch-up":
		fmt.Fprintf(w, "%s  open: reads the stream, takes %d commits, epochs up to %d\n", name, e.Taken, e.Epoch)
	case "claim":
		fmt.Fprintf(w, "%s  claim  epoch %d seq 0  -> %d %s", name, e.Epoch, r.Status, answer(r))
		if r.ClosedEpoch >= 0 {
			fmt.Fprintf(w, ", closed epoch %d at seq %d", r.ClosedEpoch, r.ClosedSeq)
		}
		fmt.Fprintln(w)
	case "recover":
		fmt.Fprintf(w, "%s  leader read up to the claim: %d pending landed, %d to resend, %d discarded\n",
			name, e.Landed, e.Kept, e.Discarded)
	case "append", "probe":
		fmt.Fprintf(w, "%s  %-6s epoch %d seq %-2d -> %d %s", name, e.Kind, e.Epoch, e.Seq, r.Status, answer(r))
		if r.Status == http.StatusForbidden {
			fmt.Fprintf(w, ", current epoch %d", r.Epoch)
		}
		fmt.Fprintln(w)
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
