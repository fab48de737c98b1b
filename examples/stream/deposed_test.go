package stream_test

import (
	"bytes"
	"context"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ownership-book/ownership/examples/replica"
	"github.com/ownership-book/ownership/examples/replica/replicatest"
	"github.com/ownership-book/ownership/examples/stream"
)

// TestDeposedLeaderRead runs S3's check, porcupine over the recorded
// history, on the schedule a leader read exists for and that the random
// schedules of TestFaultSchedules did not produce: the leader is isolated,
// the other two elect a new one that acknowledges an append, and a reader
// asks the deposed leader, which still believes it leads. Its leader read
// must not answer (it cannot confirm its leadership with a quorum, Raft
// §8); one that answered would answer from before the acknowledged append,
// and the history would not be linearizable.
// Reference: Raft §8 (read-only operations); PROTOCOL.md 5.2.1.
func TestDeposedLeaderRead(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var restores atomic.Int64
	c := replicatest.New(t, replicatest.Options{Voters: 3}, func(string) replica.Machine {
		return countingMachine{stream.NewMachine(), &restores}
	})
	create := stream.Command{Op: stream.OpCreate, Stream: faultStream, Now: faultNow, ContentType: faultCT}
	if _, err := c.Apply(ctx, create.Encode()); err != nil {
		t.Fatal(err)
	}
	r := &run{t: t, c: c, h: &history{start: time.Now()}, acked: map[string]bool{},
		sent: map[string]bool{}, counts: map[string]int{}}
	appendUntilAcked := func(client int, in appendIn) {
		t.Helper()
		for ctx.Err() == nil {
			if out, ok := r.doAppend(client, in); ok {
				if out.Outcome != stream.Appended {
					t.Fatalf("append %+v: %+v", in, out)
				}
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("append %+v: not acknowledged before the deadline", in)
	}
	appendUntilAcked(0, appendIn{P: 0, Epoch: 1, Seq: 0, Data: chunkData(0, 1, 0, 0)})

	old, err := c.WaitLeader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c.Isolate(old)
	for next := old; next == old; {
		if next, err = c.WaitLeader(ctx); err != nil {
			t.Fatal(err)
		}
	}
	appendUntilAcked(1, appendIn{P: 1, Epoch: 2, Seq: 0, Data: chunkData(1, 2, 0, 1)})

	// The read: the deposed leader's leader read, then its machine.
	g, m := c.Voter(old)
	short, stop := context.WithTimeout(ctx, opTimeout)
	call := r.h.now()
	err = g.LeaderRead(short)
	stop()
	if err == nil {
		res, o := m.(countingMachine).Read(faultStream, 0, math.MaxInt32, faultNow)
		if o != "" {
			t.Fatalf("read on %s: %s", old, o)
		}
		content := string(bytes.Join(res.Messages, nil))
		r.h.add(writers, readIn{}, readOf(content), call, r.h.now())
		t.Logf("the deposed leader %s answered a leader read: %q", old, content)
	} else {
		t.Logf("the deposed leader %s refused the leader read: %v", old, err)
	}

	c.Heal()
	if err := c.WaitConverged(ctx); err != nil {
		t.Fatal(err)
	}
	call = r.h.now()
	final, err := r.read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r.h.add(writers+1, readIn{}, readOf(final), call, r.h.now())
	for _, p := range contentProblems(r.acked, r.sent, r.claims, final) {
		t.Error(p)
	}
	bounded, err := boundByLog(resolveUnknown(r.h.ops, final), final)
	if err != nil {
		t.Fatalf("not linearizable: %v", err)
	}
	checkLinearizable(t, bounded, final, 0)
}
