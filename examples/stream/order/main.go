// Command order races an append under epoch 7 against a claim of epoch 8
// through a real three-voter Raft group (replicatest: three replica.Groups
// on hashicorp/raft's in-memory transport, each applying the log to its own
// stream.Machine), for chapter "The epoch-fenced stream", section "Where the
// fence is checked". It plays both orders the log can give the two: the
// append first, then the claim; the claim first, then the append. After each
// run it prints, for each of the two entries in log order, the decision every
// voter's state machine made as it applied the entry.
//
// The two writers are proposed one after the other, so the order is the
// program's choice and the output is the same on every run: no index,
// term, time or leader's name appears in it. With -figure it prints the two
// runs as a D2 grid instead (see figure.go).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/ownership-book/ownership/examples/replica"
	"github.com/ownership-book/ownership/examples/replica/replicatest"
	"github.com/ownership-book/ownership/examples/stream"
)

// producerID is the one producer id both writers use: the old owner under
// epoch 7, the new owner claiming epoch 8.
const producerID = "orders-db"

// now is the leader's clock as every command carries it; the stream has no
// TTL, so any fixed value will do.
const now = 1_700_000_000_000_000_000

func main() {
	figure := flag.Bool("figure", false, "print both runs as a D2 grid (see figure.go)")
	flag.Parse()
	runs, err := playBoth()
	if err == nil {
		if *figure {
			err = writeFigure(os.Stdout, runs)
		} else {
			writeTranscript(os.Stdout, runs)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "order:", err)
		os.Exit(1)
	}
}

// entry is one of the two racing commands and what each voter decided.
type entry struct {
	Writer    string   // "old owner" or "new owner"
	Request   string   // "append epoch 7 seq 2" or "claim epoch 8 seq 0"
	Decisions []string // one per voter, in voter order A, B, C
}

// run is one order of the race.
type run struct {
	Title   string
	Voters  []string
	Entries []entry // in log order
}

// recorder is a stream.Machine that also keeps, for each producer append it
// applies, the result it gave, so that a follower's decision (which its
// Group throws away) can be shown.
type recorder struct {
	*stream.Machine
	mu      sync.Mutex
	results map[stream.Producer]stream.Result
}

func (r *recorder) Apply(cmd []byte) []byte {
	out := r.Machine.Apply(cmd)
	if c, err := stream.DecodeCommand(cmd); err == nil && c.Producer != nil {
		if res, err := stream.DecodeResult(out); err == nil {
			r.mu.Lock()
			r.results[*c.Producer] = res
			r.mu.Unlock()
		}
	}
	return out
}

func (r *recorder) result(p stream.Producer) (stream.Result, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	res, ok := r.results[p]
	return res, ok
}

// The racing pair. Before the race the old owner has claimed epoch 7 and
// appended seq 1 and 2; its next append is seq 3.
var (
	oldAppend = stream.Producer{ID: producerID, Epoch: 7, Seq: 3}
	newClaim  = stream.Producer{ID: producerID, Epoch: 8, Seq: 0}
)

// playBoth plays the two orders, each on a fresh group.
func playBoth() ([]run, error) {
	var runs []run
	for _, o := range []struct {
		title string
		first []stream.Producer
	}{
		{"order 1: the append reaches the log first", []stream.Producer{oldAppend, newClaim}},
		{"order 2: the claim reaches the log first", []stream.Producer{newClaim, oldAppend}},
	} {
		r, err := play(o.title, o.first)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.title, err)
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// play starts three voters, sets up the stream and epoch 7, proposes the
// pair in the given order and collects every voter's decisions.
func play(title string, order []stream.Producer) (run, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	machines := map[string]*recorder{}
	var mu sync.Mutex
	c, err := replicatest.Start(replicatest.Options{Voters: 3}, func(id string) replica.Machine {
		m := &recorder{Machine: stream.NewMachine(), results: map[stream.Producer]stream.Result{}}
		mu.Lock()
		machines[id] = m
		mu.Unlock()
		return m
	})
	if err != nil {
		return run{}, err
	}
	defer c.Close()
	propose := func(cmd stream.Command) (stream.Result, error) {
		cmd.Stream, cmd.Now = "orders", now
		b, err := c.Apply(ctx, cmd.Encode())
		if err != nil {
			return stream.Result{}, err
		}
		return stream.DecodeResult(b)
	}
	appendAs := func(p stream.Producer) stream.Command {
		return stream.Command{Op: stream.OpAppend, ContentType: "text/plain", Producer: &p,
			Messages: [][]byte{[]byte(fmt.Sprintf("epoch %d seq %d\n", p.Epoch, p.Seq))}}
	}
	if res, err := propose(stream.Command{Op: stream.OpCreate, ContentType: "text/plain"}); err != nil || res.Outcome != stream.Created {
		return run{}, fmt.Errorf("create: %v %v", res.Outcome, err)
	}
	for seq := uint64(0); seq <= 2; seq++ {
		res, err := propose(appendAs(stream.Producer{ID: producerID, Epoch: 7, Seq: seq}))
		if err != nil || res.Outcome != stream.Appended {
			return run{}, fmt.Errorf("epoch 7 seq %d: %v %v", seq, res.Outcome, err)
		}
	}
	for _, p := range order {
		if _, err := propose(appendAs(p)); err != nil {
			return run{}, err
		}
	}
	if err := c.WaitConverged(ctx); err != nil {
		return run{}, err
	}
	r := run{Title: title, Voters: c.IDs()}
	for _, p := range order {
		e := entry{Writer: "old owner", Request: fmt.Sprintf("append epoch %d seq %d", p.Epoch, p.Seq)}
		if p.Seq == 0 {
			e.Writer, e.Request = "new owner", fmt.Sprintf("claim epoch %d seq %d", p.Epoch, p.Seq)
		}
		for _, id := range r.Voters {
			mu.Lock()
			m := machines[id]
			mu.Unlock()
			res, ok := m.result(p)
			if !ok {
				return run{}, fmt.Errorf("voter %s did not apply %s", id, e.Request)
			}
			e.Decisions = append(e.Decisions, decision(res))
		}
		r.Entries = append(r.Entries, e)
	}
	return r, nil
}

// decision says in words what a voter's state machine did with an append.
func decision(r stream.Result) string {
	switch {
	case r.Outcome == stream.Appended && r.Claim != nil:
		return fmt.Sprintf("applied; closes epoch %d at seq %d", r.Claim.ClosedEpoch, r.Claim.LastSeq)
	case r.Outcome == stream.Appended:
		return "applied"
	case r.Outcome == stream.EpochFenced:
		return fmt.Sprintf("refused: epoch closed; current epoch %d", r.Epoch)
	}
	return r.Outcome.Text()
}

// writeTranscript prints the runs as text: a title line per run, then one
// line per entry and one indented line per voter.
func writeTranscript(w io.Writer, runs []run) {
	for i, r := range runs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, r.Title)
		for n, e := range r.Entries {
			fmt.Fprintf(w, "  entry %d  %s: %s\n", n+1, e.Writer, e.Request)
			for v, d := range e.Decisions {
				fmt.Fprintf(w, "    voter %s  %s\n", r.Voters[v], d)
			}
		}
	}
}
