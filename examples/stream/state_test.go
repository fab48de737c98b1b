package stream

import (
	"bytes"
	"errors"
	"testing"
)

const t0 = int64(1_700_000_000) * 1e9

func create(name, ct string) Command {
	return Command{Op: OpCreate, Stream: name, Now: t0, ContentType: ct}
}

func appendP(name, id string, epoch, seq uint64, data string) Command {
	return Command{Op: OpAppend, Stream: name, Now: t0, ContentType: "text/plain",
		Producer: &Producer{ID: id, Epoch: epoch, Seq: seq}, Messages: [][]byte{[]byte(data)}}
}

// TestProducerRule checks each branch of the producer rule against the
// state kept for the producer id.
// Reference: PROTOCOL.md 5.2.1 "Validation Logic"; chapter "The epoch-fenced
// stream", section "The rule" (an unknown producer starts at 0).
func TestProducerRule(t *testing.T) {
	st := func(e, s uint64) *ProducerState { return &ProducerState{Epoch: e, LastSeq: s} }
	tests := []struct {
		name string
		cur  *ProducerState
		p    Producer
		want Result
	}{
		{"unknown producer starts at 0", nil, Producer{"a", 0, 0},
			Result{Outcome: Appended, Epoch: 0, Seq: 0}},
		{"unknown producer may start at any epoch", nil, Producer{"a", 7, 0},
			Result{Outcome: Appended, Epoch: 7, Seq: 0}},
		{"unknown producer, seq 5 is a gap expecting 0", nil, Producer{"a", 0, 5},
			Result{Outcome: SequenceGap, ExpectedSeq: 0, ReceivedSeq: 5}},
		{"older epoch is fenced, current epoch reported", st(8, 3), Producer{"a", 7, 42},
			Result{Outcome: EpochFenced, Epoch: 8}},
		{"older epoch is fenced even at seq 0", st(8, 0), Producer{"a", 7, 0},
			Result{Outcome: EpochFenced, Epoch: 8}},
		{"newer epoch at seq 0 is a claim naming the closed epoch", st(7, 41), Producer{"a", 8, 0},
			Result{Outcome: Appended, Epoch: 8, Seq: 0, Claim: &Claim{ClosedEpoch: 7, LastSeq: 41}}},
		{"newer epoch at seq 1 is refused", st(7, 41), Producer{"a", 8, 1},
			Result{Outcome: ClaimNotAtZero, Epoch: 7}},
		{"next seq is applied", st(7, 41), Producer{"a", 7, 42},
			Result{Outcome: Appended, Epoch: 7, Seq: 42}},
		{"repeated seq is a duplicate reporting the highest", st(7, 41), Producer{"a", 7, 41},
			Result{Outcome: Duplicate, Epoch: 7, Seq: 41}},
		{"older seq is a duplicate reporting the highest", st(7, 41), Producer{"a", 7, 3},
			Result{Outcome: Duplicate, Epoch: 7, Seq: 41}},
		{"gap reports expected and received", st(7, 41), Producer{"a", 7, 44},
			Result{Outcome: SequenceGap, Epoch: 7, ExpectedSeq: 42, ReceivedSeq: 44}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ProducerRule(tt.cur, tt.p)
			if got.Outcome != tt.want.Outcome || got.Epoch != tt.want.Epoch || got.Seq != tt.want.Seq ||
				got.ExpectedSeq != tt.want.ExpectedSeq || got.ReceivedSeq != tt.want.ReceivedSeq ||
				(got.Claim == nil) != (tt.want.Claim == nil) || (got.Claim != nil && *got.Claim != *tt.want.Claim) {
				t.Errorf("ProducerRule(%+v, %+v) = %+v (claim %+v), want %+v (claim %+v)",
					tt.cur, tt.p, got, got.Claim, tt.want, tt.want.Claim)
			}
		})
	}
}

// TestApplyProducerSequence runs appends through the whole state machine and
// checks outcome, stream bytes and producer state after each: the data and
// the producer state change together or not at all.
// Reference: PROTOCOL.md 5.2.1 "Atomicity Requirements"; chapter "The
// epoch-fenced stream", section "The claim and its answer".
func TestApplyProducerSequence(t *testing.T) {
	steps := []struct {
		cmd       Command
		outcome   Outcome
		data      string // the stream's bytes after the step
		epoch     uint64 // producer "p" after the step
		lastSeq   uint64
		claim     *Claim
		answerSeq uint64
	}{
		{appendP("s", "p", 7, 0, "a"), Appended, "a", 7, 0, nil, 0},
		{appendP("s", "p", 7, 1, "b"), Appended, "ab", 7, 1, nil, 1},
		{appendP("s", "p", 7, 1, "b"), Duplicate, "ab", 7, 1, nil, 1},
		{appendP("s", "p", 7, 0, "a"), Duplicate, "ab", 7, 1, nil, 1},
		{appendP("s", "p", 7, 3, "d"), SequenceGap, "ab", 7, 1, nil, 0},
		{appendP("s", "p", 8, 2, "x"), ClaimNotAtZero, "ab", 7, 1, nil, 0},
		{appendP("s", "p", 8, 0, "B"), Appended, "abB", 8, 0, &Claim{7, 1}, 0},
		{appendP("s", "p", 7, 2, "c"), EpochFenced, "abB", 8, 0, nil, 0},
		{appendP("s", "p", 8, 1, "C"), Appended, "abBC", 8, 1, nil, 1},
		{appendP("s", "q", 0, 4, "Q"), SequenceGap, "abBC", 8, 1, nil, 0},
	}
	st := NewState()
	if r := st.Apply(create("s", "text/plain")); r.Outcome != Created {
		t.Fatalf("create: %+v", r)
	}
	for i, s := range steps {
		r := st.Apply(s.cmd)
		if r.Outcome != s.outcome {
			t.Fatalf("step %d (%+v): outcome %s (%s), want %s", i, *s.cmd.Producer, r.Outcome, r.Message, s.outcome)
		}
		if got := string(readAll(t, st, "s")); got != s.data {
			t.Errorf("step %d: stream holds %q, want %q", i, got, s.data)
		}
		p := st.Streams["s"].Producers["p"]
		if p.Epoch != s.epoch || p.LastSeq != s.lastSeq {
			t.Errorf("step %d: producer state %+v, want epoch %d seq %d", i, *p, s.epoch, s.lastSeq)
		}
		if (r.Claim == nil) != (s.claim == nil) || (r.Claim != nil && *r.Claim != *s.claim) {
			t.Errorf("step %d: claim %+v, want %+v", i, r.Claim, s.claim)
		}
		if (r.Outcome == Appended || r.Outcome == Duplicate) && r.Seq != s.answerSeq {
			t.Errorf("step %d: answered seq %d, want %d", i, r.Seq, s.answerSeq)
		}
		if r.Outcome == EpochFenced && r.Epoch != 8 {
			t.Errorf("step %d: fenced answer names epoch %d, want the current 8", i, r.Epoch)
		}
		if r.Outcome == SequenceGap && (r.ExpectedSeq == r.ReceivedSeq) {
			t.Errorf("step %d: gap answer expected=%d received=%d", i, r.ExpectedSeq, r.ReceivedSeq)
		}
		if err := r.Err(); (err != nil) != (s.outcome != Appended && s.outcome != Duplicate) {
			t.Errorf("step %d: Err() = %v", i, err)
		}
	}
	if r := st.Apply(appendP("s", "p", 7, 2, "c")); !errors.Is(r.Err(), ErrEpochFenced) {
		t.Errorf("Err() of a fenced append = %v, want ErrEpochFenced", r.Err())
	}
}

func readAll(t *testing.T, st *State, name string) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, ch := range st.Streams[name].Chunks {
		b.Write(ch.Data)
	}
	return b.Bytes()
}

// TestApplyStatuses checks the refusals of the append path other than the
// producer rule, each of which must leave the stream unchanged.
// Reference: PROTOCOL.md 5.1, 5.2 (error precedence), 5.2.1 closure, 5.3.
func TestApplyStatuses(t *testing.T) {
	closeP := func(id string, e, s uint64) Command {
		c := appendP("s", id, e, s, "")
		c.Messages, c.Close = nil, true
		return c
	}
	tests := []struct {
		name  string
		setup []Command
		cmd   Command
		want  Outcome
	}{
		{"append to unknown stream", nil, appendP("nope", "p", 0, 0, "x"), NotFound},
		{"content type mismatch", nil,
			Command{Op: OpAppend, Stream: "s", Now: t0, ContentType: "application/json", Messages: [][]byte{[]byte("1")}},
			ContentTypeMismatch},
		{"empty append without close", nil, Command{Op: OpAppend, Stream: "s", Now: t0, ContentType: "text/plain"}, BadRequest},
		{"append to closed stream", []Command{closeP("p", 0, 0)}, appendP("s", "q", 0, 0, "x"), StreamClosed},
		{"close of closed stream is idempotent", []Command{closeP("p", 0, 0)},
			Command{Op: OpAppend, Stream: "s", Now: t0, Close: true}, ClosedNow},
		{"closing tuple again is a duplicate", []Command{closeP("p", 0, 0)}, closeP("p", 0, 0), Duplicate},
		{"other seq after close", []Command{closeP("p", 0, 0)}, appendP("s", "p", 0, 1, "x"), StreamClosed},
		{"stale incarnation", nil,
			Command{Op: OpAppend, Stream: "s", Now: t0, ContentType: "text/plain", Incarnation: "old",
				Messages: [][]byte{[]byte("x")}}, StaleIncarnation},
		{"Stream-Seq regression", []Command{{Op: OpAppend, Stream: "s", Now: t0, ContentType: "text/plain",
			StreamSeq: "b", Messages: [][]byte{[]byte("x")}}},
			Command{Op: OpAppend, Stream: "s", Now: t0, ContentType: "text/plain", StreamSeq: "a",
				Messages: [][]byte{[]byte("y")}}, StreamSeqRegression},
		{"create with other content type", nil, create("s", "application/json"), ConfigConflict},
		{"create with same config", nil, create("s", "text/plain"), Exists},
		{"delete unknown", nil, Command{Op: OpDelete, Stream: "nope", Now: t0}, NotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := NewState()
			st.Apply(create("s", "text/plain"))
			for _, c := range tt.setup {
				if r := st.Apply(c); r.Err() != nil {
					t.Fatalf("setup %+v: %v", c, r.Err())
				}
			}
			m1 := NewMachine()
			m1.st = st
			before, _ := m1.Snapshot()
			r := st.Apply(tt.cmd)
			if r.Outcome != tt.want {
				t.Fatalf("outcome %s (%s), want %s", r.Outcome, r.Message, tt.want)
			}
			after, _ := m1.Snapshot()
			changes := r.Outcome == Appended || r.Outcome == Created || r.Outcome == Deleted
			if !changes && !bytes.Equal(before, after) {
				t.Errorf("a %s answer changed the state:\n%s\n%s", r.Outcome, before, after)
			}
		})
	}
}

// TestClosedStreamComesFirst checks the order of an append's checks around a
// closed stream, which follows the protocol rather than putting the fence
// first: a closed stream refuses every append with 409 and Stream-Closed,
// a fenced writer's and an older duplicate's included, and acknowledges only
// a repeat of the exact (producer id, epoch, seq) that closed it, with 204.
// The content type comes next, and only then the producer rule. Each refusal
// leaves the state as it was.
// Reference: PROTOCOL.md 5.2 "Error Precedence" and "Stream-Closed"; 5.2.1
// "Stream Closure with Idempotent Producers".
func TestClosedStreamComesFirst(t *testing.T) {
	closeP := func(id string, e, s uint64, data string) Command {
		c := appendP("s", id, e, s, data)
		c.Close = true
		if data == "" {
			c.Messages = nil
		}
		return c
	}
	json := func(c Command) Command { c.ContentType = "application/json"; return c }
	// p owns epoch 2 (after a claim closed epoch 1 at seq 1), appends seq 1
	// and 2, and closes the stream with its append of seq 3.
	closed := []Command{appendP("s", "p", 1, 0, "a"), appendP("s", "p", 1, 1, "b"),
		appendP("s", "p", 2, 0, "c"), appendP("s", "p", 2, 1, "d"), appendP("s", "p", 2, 2, "e"),
		closeP("p", 2, 3, "f")}
	open := closed[:5]
	tests := []struct {
		name   string
		setup  []Command
		cmd    Command
		want   Outcome
		closed bool // the answer says the stream is closed
	}{
		{"fenced epoch on a closed stream", closed, appendP("s", "p", 1, 2, "x"), StreamClosed, true},
		{"fenced epoch at a seq it already used", closed, appendP("s", "p", 1, 1, "b"), StreamClosed, true},
		{"older duplicate of the closing epoch", closed, appendP("s", "p", 2, 1, "d"), StreamClosed, true},
		{"next seq of the closing epoch", closed, appendP("s", "p", 2, 4, "g"), StreamClosed, true},
		{"claim of a newer epoch", closed, appendP("s", "p", 3, 0, "g"), StreamClosed, true},
		{"another producer", closed, appendP("s", "q", 0, 0, "g"), StreamClosed, true},
		{"repeat of the closing append", closed, closeP("p", 2, 3, "f"), Duplicate, true},
		{"closing seq without Stream-Closed", closed, appendP("s", "p", 2, 3, "f"), Duplicate, true},
		{"close-only naming another tuple", closed, closeP("p", 2, 4, ""), StreamClosed, true},
		{"close-only without producer", closed,
			Command{Op: OpAppend, Stream: "s", Now: t0, Close: true}, ClosedNow, true},
		{"closed before content type", closed, json(appendP("s", "p", 2, 4, "1")), StreamClosed, true},
		{"content type before the fence", open, json(appendP("s", "p", 1, 2, "1")), ContentTypeMismatch, false},
		{"content type before a duplicate", open, json(appendP("s", "p", 2, 1, "1")), ContentTypeMismatch, false},
		{"open stream: the fence", open, appendP("s", "p", 1, 2, "x"), EpochFenced, false},
		{"open stream: a duplicate", open, appendP("s", "p", 2, 1, "d"), Duplicate, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := NewState()
			st.Apply(create("s", "text/plain"))
			for _, c := range tt.setup {
				if r := st.Apply(c); r.Outcome != Appended && r.Outcome != ClosedNow {
					t.Fatalf("setup %+v: %s %s", *c.Producer, r.Outcome, r.Message)
				}
			}
			m := NewMachine()
			m.st = st
			before, _ := m.Snapshot()
			r := st.Apply(tt.cmd)
			if r.Outcome != tt.want {
				t.Fatalf("outcome %s (%s), want %s", r.Outcome, r.Message, tt.want)
			}
			if r.Closed != tt.closed {
				t.Errorf("answer says closed=%v, want %v", r.Closed, tt.closed)
			}
			if r.Outcome == Duplicate && tt.closed && (r.Epoch != 2 || r.Seq != 3) {
				t.Errorf("duplicate of the closing append answers epoch %d seq %d, want 2 and 3", r.Epoch, r.Seq)
			}
			after, _ := m.Snapshot()
			if !bytes.Equal(before, after) {
				t.Errorf("a %s answer changed the state:\n%s\n%s", r.Outcome, before, after)
			}
		})
	}
}

// TestExpiry checks that a stream with a TTL or Expires-At disappears at the
// command's Now, and that a touch slides the TTL.
// Reference: PROTOCOL.md 5.1 Stream-TTL and Stream-Expires-At.
func TestExpiry(t *testing.T) {
	st := NewState()
	st.Apply(Command{Op: OpCreate, Stream: "ttl", Now: t0, HasTTL: true, TTL: 10})
	st.Apply(Command{Op: OpCreate, Stream: "abs", Now: t0, ExpiresAt: t0 + 5e9})
	if r := st.Apply(Command{Op: OpTouch, Stream: "ttl", Now: t0 + 9e9}); r.Outcome != Touched {
		t.Fatalf("touch at 9s: %s", r.Outcome)
	}
	if r := st.Apply(Command{Op: OpTouch, Stream: "ttl", Now: t0 + 18e9}); r.Outcome != Touched {
		t.Fatalf("touch at 18s (TTL slid to 19s): %s", r.Outcome)
	}
	if r := st.Apply(Command{Op: OpTouch, Stream: "abs", Now: t0 + 5e9}); r.Outcome != NotFound {
		t.Fatalf("abs at 5s: %s, want not-found", r.Outcome)
	}
	if r := st.Apply(Command{Op: OpTouch, Stream: "ttl", Now: t0 + 28e9 + 1}); r.Outcome != NotFound {
		t.Fatalf("ttl at 28s: %s, want not-found", r.Outcome)
	}
	if len(st.Streams) != 0 {
		t.Errorf("expired streams left in state: %d", len(st.Streams))
	}
}

// TestForkAndSoftDelete checks copy-on-fork reads and the soft-delete of a
// source with forks.
// Reference: PROTOCOL.md 4.2.
func TestForkAndSoftDelete(t *testing.T) {
	m := NewMachine()
	m.ApplyCommand(create("src", "text/plain"))
	m.ApplyCommand(appendP("src", "p", 0, 0, "hello"))
	m.ApplyCommand(appendP("src", "p", 0, 1, "world"))
	if r := m.ApplyCommand(Command{Op: OpCreate, Stream: "f", Now: t0, ForkFrom: "src", ForkOffset: 3}); r.Outcome != Created {
		t.Fatalf("fork: %+v", r)
	}
	m.ApplyCommand(appendP("f", "p", 0, 0, "!"))
	rr, o := m.Read("f", 0, 1<<20, t0)
	if o != "" || string(bytes.Join(rr.Messages, nil)) != "hel!" {
		t.Fatalf("fork read: %q %s", bytes.Join(rr.Messages, nil), o)
	}
	if r := m.ApplyCommand(Command{Op: OpDelete, Stream: "src", Now: t0}); r.Outcome != Deleted {
		t.Fatalf("delete src: %s", r.Outcome)
	}
	if _, o := m.Stat("src", t0); o != Gone {
		t.Fatalf("src after delete: %s, want gone", o)
	}
	m.ApplyCommand(Command{Op: OpDelete, Stream: "f", Now: t0})
	if _, o := m.Stat("src", t0); o != NotFound {
		t.Fatalf("src after its last fork went: %s, want not-found", o)
	}
}

// TestSnapshotRestore checks that a restored machine answers like the
// original.
func TestSnapshotRestore(t *testing.T) {
	m := NewMachine()
	m.ApplyCommand(create("s", "text/plain"))
	m.ApplyCommand(appendP("s", "p", 7, 0, "a"))
	snap, err := m.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	m2 := NewMachine()
	if err := m2.Restore(snap); err != nil {
		t.Fatal(err)
	}
	r := m2.ApplyCommand(appendP("s", "p", 6, 0, "z"))
	if r.Outcome != EpochFenced || r.Epoch != 7 {
		t.Errorf("restored machine: %+v, want fenced at epoch 7", r)
	}
	if err := m2.Restore([]byte("{not json")); err == nil {
		t.Error("Restore of garbage succeeded")
	}
	if r, _ := DecodeResult(m2.Apply([]byte("garbage"))); r.Outcome != BadRequest {
		t.Errorf("Apply(garbage) = %s, want bad-request", r.Outcome)
	}
}

// TestReincarnate checks the incarnation token: an append naming the
// current token is applied, one naming an older token is refused.
func TestReincarnate(t *testing.T) {
	st := NewState()
	r := st.Apply(create("s", "text/plain"))
	old := r.Incarnation
	a := appendP("s", "p", 0, 0, "x")
	a.Incarnation = old
	if r := st.Apply(a); r.Outcome != Appended {
		t.Fatalf("append with current token: %s", r.Outcome)
	}
	nr := st.Apply(Command{Op: OpReincarnate, Stream: "s", Now: t0})
	if nr.Incarnation == old || nr.Incarnation == "" {
		t.Fatalf("new incarnation %q, old %q", nr.Incarnation, old)
	}
	a = appendP("s", "p", 0, 1, "y")
	a.Incarnation = old
	if r := st.Apply(a); r.Outcome != StaleIncarnation || r.Incarnation != nr.Incarnation {
		t.Fatalf("append with old token: %+v", r)
	}
}

// TestChangedRelease checks the waiter bookkeeping: readers of one stream
// share a channel, the entry stays while any of them holds it, a command
// closes it, and it goes when the last reader releases it without a change
// (the case of a stream that expires while readers wait).
func TestChangedRelease(t *testing.T) {
	m := NewMachine()
	a, releaseA := m.Changed("s")
	b, releaseB := m.Changed("s")
	if a != b || m.Waiting() != 1 {
		t.Fatalf("two readers of one stream: same channel %v, %d entries; want true, 1", a == b, m.Waiting())
	}
	releaseA()
	releaseA() // a second call changes nothing
	if m.Waiting() != 1 {
		t.Fatalf("after one of two readers left: %d entries, want 1", m.Waiting())
	}
	m.ApplyCommand(create("s", "text/plain"))
	select {
	case <-b:
	default:
		t.Fatal("a command on the stream did not close its channel")
	}
	releaseB() // after the close: no effect on a newer entry
	c, releaseC := m.Changed("s")
	if c == b || m.Waiting() != 1 {
		t.Fatalf("after the close: new channel %v, %d entries; want true, 1", c != b, m.Waiting())
	}
	releaseB()
	if m.Waiting() != 1 {
		t.Fatal("a stale release removed a newer reader's entry")
	}
	releaseC()
	if m.Waiting() != 0 {
		t.Fatalf("after the last reader left: %d entries, want 0", m.Waiting())
	}
}
