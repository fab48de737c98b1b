package stream_test

// Fault tests of the epoch-fenced stream replicated by Raft: three voters on
// raft's in-memory transport (replicatest), producers that append and claim
// concurrently, and a seeded schedule that kills leaders and partitions
// voters. After each schedule the test checks, on the recovered stream:
//
//   - every acknowledged append is present exactly once, and nothing is
//     present that no producer sent (Raft §5.4 Leader Completeness; the
//     producer sequence numbers of PROTOCOL.md 5.2.1 make retries
//     idempotent, as Raft §8 asks of client commands);
//   - no append of an epoch is applied after the claim that closed it
//     (PROTOCOL.md 5.2.1: an older epoch is fenced), and each claim's answer
//     names exactly where the closed epoch stopped;
//   - the recorded client history is linearizable (porcupine), against a
//     model of one stream with idempotent producers, after each window is
//     narrowed to what the final stream's order implies (boundByLog, an
//     exact rule that keeps porcupine's search near linear);
//   - every voter holds the same state (Raft §5.4, State Machine Safety).
//
// "Raft" is Diego Ongaro and John Ousterhout, "In Search of an Understandable
// Consensus Algorithm", 2014.
//
// Environment: STREAM_FAULT_SCHEDULES=n runs n schedules (default 2, about
// 4 s: the default run is on the path of every first "bookgen build", and
// no chapter depends on more; .ci/run runs 6); STREAM_FAULT_SEED=s runs
// the schedules from seed s on.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/ownership-book/ownership/examples/replica"
	"github.com/ownership-book/ownership/examples/replica/replicatest"
	"github.com/ownership-book/ownership/examples/stream"
)

const (
	faultStream = "s"
	faultCT     = "application/octet-stream"
	faultNow    = int64(1_700_000_000) * 1e9 // the streams have no TTL: Now only has to be fixed
	producers   = 2                          // producer ids "p0", "p1"
	writers     = 4                          // writer w uses producer id w%producers
	opTimeout   = 300 * time.Millisecond     // one attempt of one client operation
)

// appendIn is an append as a producer sends it: producer index, epoch,
// sequence number, and the data, unique per (producer, epoch, seq).
type appendIn struct {
	P          int
	Epoch, Seq uint64
	Data       string
}

// appendOut is what the stream answered; Unknown marks an attempt whose
// outcome the client never learned (its Return is then +∞).
type appendOut struct {
	Unknown     bool
	Outcome     stream.Outcome
	Epoch, Seq  uint64
	Claim       bool
	ClosedEpoch uint64
	LastSeq     uint64
}

// readOut is the content of the stream as a linearizable read saw it, with
// its length and sum as the model compares them (readOf makes one).
type readOut struct {
	Content string
	Len     int
	Sum     uint64
}

func readOf(content string) readOut {
	return readOut{Content: content, Len: len(content), Sum: extendSum(sumBasis, content)}
}

// sumBasis and extendSum are 64-bit FNV-1a, kept open so that the model
// extends the sum of the stream by each append instead of hashing the
// whole stream at each step of porcupine's search.
const sumBasis uint64 = 14695981039346656037

func extendSum(h uint64, data string) uint64 {
	for i := 0; i < len(data); i++ {
		h ^= uint64(data[i])
		h *= 1099511628211
	}
	return h
}

type readIn struct{}

// producerState is the model's per-producer state (PROTOCOL.md 5.2.1).
type producerState struct {
	Known          bool
	Epoch, LastSeq uint64
}

// modelState is one stream with idempotent producers: the length and the
// FNV-1a sum of its bytes (a read matches when both do; two different
// contents of one length collide with odds of about 2^-64), and the state
// of each producer id. It is comparable and small: porcupine compares and
// hashes a state at every step of its search, and the stream reaches
// tens of kilobytes.
type modelState struct {
	Len int
	Sum uint64
	P   [producers]producerState
}

// decide is the producer rule of PROTOCOL.md 5.2.1, written here from the
// protocol text (not from the package under test): the answer to an append
// and whether it is applied.
func decide(cur producerState, in appendIn) (out appendOut, apply bool) {
	switch {
	case !cur.Known && in.Seq != 0:
		return appendOut{Outcome: stream.SequenceGap}, false
	case !cur.Known:
		return appendOut{Outcome: stream.Appended, Epoch: in.Epoch}, true
	case in.Epoch < cur.Epoch:
		return appendOut{Outcome: stream.EpochFenced, Epoch: cur.Epoch}, false
	case in.Epoch > cur.Epoch && in.Seq != 0:
		return appendOut{Outcome: stream.ClaimNotAtZero, Epoch: cur.Epoch}, false
	case in.Epoch > cur.Epoch:
		return appendOut{Outcome: stream.Appended, Epoch: in.Epoch, Claim: true,
			ClosedEpoch: cur.Epoch, LastSeq: cur.LastSeq}, true
	case in.Seq <= cur.LastSeq:
		return appendOut{Outcome: stream.Duplicate, Epoch: in.Epoch, Seq: cur.LastSeq}, false
	case in.Seq == cur.LastSeq+1:
		return appendOut{Outcome: stream.Appended, Epoch: in.Epoch, Seq: in.Seq}, true
	default:
		return appendOut{Outcome: stream.SequenceGap, Epoch: in.Epoch}, false
	}
}

// after is a producer's state once in is applied.
func after(in appendIn) producerState {
	return producerState{Known: true, Epoch: in.Epoch, LastSeq: in.Seq}
}

// hashProducers folds the producers' state into a state's hash.
func hashProducers(h uint64, ps [producers]producerState) uint64 {
	for _, p := range ps {
		h = h*31 + p.Epoch<<20 + p.LastSeq
	}
	return h
}

func step(s modelState, in appendIn) (modelState, appendOut) {
	out, apply := decide(s.P[in.P], in)
	if apply {
		s.Len += len(in.Data)
		s.Sum = extendSum(s.Sum, in.Data)
		s.P[in.P] = after(in)
	}
	return s, out
}

// sameAnswer compares the fields of an answer that the protocol defines for
// its outcome.
func sameAnswer(want, got appendOut) bool {
	if want.Outcome != got.Outcome {
		return false
	}
	switch want.Outcome {
	case stream.Appended:
		return want.Epoch == got.Epoch && want.Seq == got.Seq && want.Claim == got.Claim &&
			(!want.Claim || want.ClosedEpoch == got.ClosedEpoch && want.LastSeq == got.LastSeq)
	case stream.Duplicate, stream.EpochFenced:
		return want.Epoch == got.Epoch && want.Seq == got.Seq
	}
	return true
}

// streamModel is the porcupine model. An append whose outcome the client
// never learned is in the history only if it took effect: resolveUnknown
// drops the attempts whose data is not in the final stream and merges the
// copies of one that is. So the model takes such an append only where the
// producer rule applies it; taking it as refused anywhere would let
// porcupine try it at every step of the search as a no-op, which is both
// wrong and, on a long history, a search that does not end.
var streamModel = porcupine.Model{
	Init: func() interface{} { return modelState{Sum: sumBasis} },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		s := state.(modelState)
		switch in := input.(type) {
		case readIn:
			out := output.(readOut)
			return out.Len == s.Len && out.Sum == s.Sum, s
		case appendIn:
			next, want := step(s, in)
			out := output.(appendOut)
			if out.Unknown {
				return want.Outcome == stream.Appended, next
			}
			return sameAnswer(want, out), next
		}
		panic(fmt.Sprintf("unknown input %T", input))
	},
	Hash: func(state interface{}) uint64 {
		s := state.(modelState)
		return hashProducers(s.Sum^uint64(s.Len)<<32, s.P)
	},
	DescribeOperation: func(input, output interface{}) string {
		switch in := input.(type) {
		case readIn:
			return fmt.Sprintf("read() -> %d bytes", output.(readOut).Len)
		case appendIn:
			return fmt.Sprintf("append(p%d, epoch %d, seq %d) -> %+v", in.P, in.Epoch, in.Seq, output)
		}
		return "?"
	},
	DescribeState: func(state interface{}) string {
		s := state.(modelState)
		return fmt.Sprintf("%d bytes, producers %+v", s.Len, s.P)
	},
}

// logModel is streamModel with the order of the final stream built in, for
// a history that ends with a read of final (as every schedule's does).
// Its state is how many of final's chunks have been applied, and the
// producers' state; an append is taken as applied only if it is the next
// chunk of final, and a read only if it returned exactly the chunks
// applied so far.
//
// It accepts exactly the histories streamModel accepts: in any
// linearization streamModel accepts, the final read returns the appends
// applied, in linearization order, and each chunk ends with the only "|"
// it holds, so the applied appends are final's chunks in final's order;
// the stream only grows, so every read returned a prefix of final. What
// changes is the search. With streamModel, porcupine learns that two
// appends of different producers were taken in the wrong order only at
// the next read, and every interleaving of concurrent appends between
// two reads is a different state: on a loaded machine, with reads
// hundreds of milliseconds apart, that search did not end in minutes.
// With logModel a wrong order is refused at the append itself.
func logModel(final string) porcupine.Model {
	chunks := chunksOf(final)
	ends, sums := []int{0}, []uint64{sumBasis}
	for _, d := range chunks {
		ends = append(ends, ends[len(ends)-1]+len(d))
		sums = append(sums, extendSum(sums[len(sums)-1], d))
	}
	m := streamModel
	m.Init = func() interface{} { return logState{} }
	m.Step = func(state, input, output interface{}) (bool, interface{}) {
		s := state.(logState)
		switch in := input.(type) {
		case readIn:
			out := output.(readOut)
			return out.Len == ends[s.K] && out.Sum == sums[s.K], s
		case appendIn:
			want, apply := decide(s.P[in.P], in)
			out := output.(appendOut)
			if apply {
				if s.K == len(chunks) || chunks[s.K] != in.Data || !out.Unknown && !sameAnswer(want, out) {
					return false, s
				}
				s.K++
				s.P[in.P] = after(in)
				return true, s
			}
			return !out.Unknown && sameAnswer(want, out), s
		}
		panic(fmt.Sprintf("unknown input %T", input))
	}
	m.Hash = func(state interface{}) uint64 {
		return hashProducers(uint64(state.(logState).K), state.(logState).P)
	}
	m.DescribeState = func(state interface{}) string {
		s := state.(logState)
		return fmt.Sprintf("%d chunks, %d bytes, producers %+v", s.K, ends[s.K], s.P)
	}
	return m
}

// logState is logModel's state: K chunks of the final stream applied.
type logState struct {
	K int
	P [producers]producerState
}

// history records client operations with monotonic timestamps.
type history struct {
	start time.Time
	mu    sync.Mutex
	ops   []porcupine.Operation
}

func (h *history) now() int64 { return time.Since(h.start).Nanoseconds() }

func (h *history) add(client int, in, out interface{}, call, ret int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ops = append(h.ops, porcupine.Operation{ClientId: client, Input: in, Output: out, Call: call, Return: ret})
}

// resolveUnknown settles the appends whose outcome the client never
// learned, using the final stream, read after recovery when no command is in
// flight any more: an append whose data is absent changed nothing (it never
// reached the log, or it was refused), so it is dropped; one whose data is
// present took effect after its call, so it stays, and it took effect
// before the first read that saw its data returned: that read's Return
// becomes its own (+∞ when only the final read saw it). This keeps
// porcupine's search small without weakening the check: an operation
// without effect constrains no linearization, and an operation's
// linearization point is still anywhere between its call and a moment it
// is known to have passed. Without the bound, every unknown append of a
// schedule with partitions stays concurrent with the rest of the history
// and the search can run for minutes.
//
// Copies of one unknown append that stay (the client retried unchanged
// and never learned of either) become one operation: exactly one of them
// took effect, somewhere between the earliest call and the earliest of
// their bounds, and the others were refused as duplicates and changed
// nothing.
func resolveUnknown(ops []porcupine.Operation, final string) []porcupine.Operation {
	var out []porcupine.Operation
	kept := map[appendIn]int{} // an unknown append -> its index in out
	for _, op := range ops {
		o, ok := op.Output.(appendOut)
		if !ok || !o.Unknown {
			out = append(out, op)
			continue
		}
		in := op.Input.(appendIn)
		data := in.Data
		if !strings.Contains(final, data) {
			continue
		}
		// The client retries an unknown attempt unchanged. A later copy
		// answered Appended means this one never took effect (had it, the
		// copy would have been a duplicate; after the copy, it is one): it
		// is dropped. A copy answered Duplicate means this one (or another
		// copy) took effect before the copy returned: that bounds it.
		dropped := false
		for _, r := range ops {
			ro, ok := r.Output.(appendOut)
			if !ok || ro.Unknown || r.Input.(appendIn) != in || r.Call < op.Call {
				continue
			}
			switch ro.Outcome {
			case stream.Appended:
				dropped = true
			case stream.Duplicate:
				if r.Return > op.Call && r.Return < op.Return {
					op.Return = r.Return
				}
			}
		}
		if dropped {
			continue
		}
		for _, r := range ops {
			if ro, ok := r.Output.(readOut); ok && r.Return > op.Call && r.Return < op.Return && strings.Contains(ro.Content, data) {
				op.Return = r.Return
			}
		}
		if i, ok := kept[in]; ok {
			out[i].Call, out[i].Return = min(out[i].Call, op.Call), min(out[i].Return, op.Return)
			continue
		}
		kept[in] = len(out)
		out = append(out, op)
	}
	return out
}

// boundByLog narrows every operation's window to what the final stream's
// order implies, so that porcupine's search stays near linear however
// long the windows of unknown appends and slow operations are.
//
// The rule is exact, not a heuristic. In every linearization the model
// accepts, the appends that took effect are ordered as their data is in
// the final stream (the model's stream is the appends in linearization
// order, and the final read must match it), and a read that returned the
// first k of them is linearized after the k-th and before the (k+1)-th.
// That chains appends and reads into groups: reads of nothing, append 1,
// reads of 1, append 2, and so on. An operation's linearization point
// follows every point of an earlier group, so it is at or after the
// latest Call there, and precedes every point of a later group, so it is
// at or before the earliest Return there. Narrowing each window to that
// keeps every linearization the model accepts and adds none. Appends that
// were refused, and reads that are not a prefix of the final stream, keep
// their windows (porcupine judges them as before).
//
// An error means the narrowed window of some operation is empty: an
// operation that the stream orders after another returned before that
// one was called. No linearization exists then, and the error names the
// two operations.
func boundByLog(ops []porcupine.Operation, final string) ([]porcupine.Operation, error) {
	// ends[k] is the length of the first k chunks; at maps a chunk to k.
	chunks := chunksOf(final)
	n := len(chunks)
	ends := []int{0}
	at := map[string]int{}
	for _, d := range chunks {
		if _, dup := at[d]; dup {
			return ops, nil // contentProblems reports it; nothing is ordered
		}
		at[d] = len(ends)
		ends = append(ends, ends[len(ends)-1]+len(d))
	}

	// Each operation's group: 2k-1 for the append at position k, 2k for a
	// read of the first k appends, -1 when the final stream does not order
	// it.
	group := make([]int, len(ops))
	applied := map[string]bool{}
	for i, op := range ops {
		group[i] = -1
		switch o := op.Output.(type) {
		case appendOut:
			d := op.Input.(appendIn).Data
			if k, ok := at[d]; ok && (o.Unknown || o.Outcome == stream.Appended) {
				if applied[d] {
					return ops, nil // one chunk applied twice (or unmerged copies): contentProblems reports it
				}
				applied[d] = true
				group[i] = 2*k - 1
			}
		case readOut:
			if k, ok := slices.BinarySearch(ends, o.Len); ok && strings.HasPrefix(final, o.Content) {
				group[i] = 2 * k
			}
		}
	}
	out := slices.Clone(ops)

	// latestCall[g] is the latest Call in groups before g, earliestReturn[g]
	// the earliest Return in groups after g.
	groups := 2*n + 1
	maxCall := make([]int64, groups)
	minRet := make([]int64, groups)
	for g := range groups {
		maxCall[g], minRet[g] = math.MinInt64, math.MaxInt64
	}
	for i, g := range group {
		if g >= 0 {
			maxCall[g] = max(maxCall[g], out[i].Call)
			minRet[g] = min(minRet[g], out[i].Return)
		}
	}
	latestCall := make([]int64, groups)
	earliestReturn := make([]int64, groups)
	for g, acc := 0, int64(math.MinInt64); g < groups; g++ {
		latestCall[g] = acc
		acc = max(acc, maxCall[g])
	}
	for g, acc := groups-1, int64(math.MaxInt64); g >= 0; g-- {
		earliestReturn[g] = acc
		acc = min(acc, minRet[g])
	}
	calls := make([]int64, len(out))
	returns := make([]int64, len(out))
	for i, g := range group {
		calls[i], returns[i] = out[i].Call, out[i].Return
		if g < 0 {
			continue
		}
		calls[i], returns[i] = max(calls[i], latestCall[g]), min(returns[i], earliestReturn[g])
		if calls[i] > returns[i] {
			return nil, emptyWindow(out, group)
		}
	}
	for i := range out {
		out[i].Call, out[i].Return = calls[i], returns[i]
	}
	return out, nil
}

// emptyWindow names two operations that the final stream orders one after
// the other although the second returned before the first was called.
func emptyWindow(ops []porcupine.Operation, group []int) error {
	describe := func(j int) string {
		return streamModel.DescribeOperation(ops[j].Input, ops[j].Output) +
			fmt.Sprintf(" (called at %d, returned at %d)", ops[j].Call, ops[j].Return)
	}
	for a, ga := range group {
		for b, gb := range group {
			if ga >= 0 && ga < gb && ops[a].Call > ops[b].Return {
				return fmt.Errorf("the final stream orders %s before %s, which returned before it was called", describe(a), describe(b))
			}
		}
	}
	return errors.New("an operation's window is empty in the final stream's order") // not reached: some pair is out of order
}

// chunkData names an append uniquely: "p<producer>.e<epoch>.s<seq>.w<writer>|".
func chunkData(p int, epoch, seq uint64, w int) string {
	return fmt.Sprintf("p%d.e%d.s%d.w%d|", p, epoch, seq, w)
}

// chunksOf splits a stream's content into the data of its appends, in
// order, each ending with its one "|" (anything after the last "|" is a
// piece of its own, which parseChunk refuses).
func chunksOf(content string) []string {
	c := strings.SplitAfter(content, "|")
	if c[len(c)-1] == "" {
		c = c[:len(c)-1]
	}
	return c
}

type chunk struct {
	P          int
	Epoch, Seq uint64
	Data       string
}

func parseChunk(d string) (chunk, error) {
	var c chunk
	var w int
	if _, err := fmt.Sscanf(d, "p%d.e%d.s%d.w%d|", &c.P, &c.Epoch, &c.Seq, &w); err != nil {
		return c, fmt.Errorf("chunk %q: %v", d, err)
	}
	c.Data = d
	return c, nil
}

func appendCmd(in appendIn) []byte {
	return stream.Command{Op: stream.OpAppend, Stream: faultStream, Now: faultNow, ContentType: faultCT,
		Messages: [][]byte{[]byte(in.Data)},
		Producer: &stream.Producer{ID: "p" + strconv.Itoa(in.P), Epoch: in.Epoch, Seq: in.Seq}}.Encode()
}

// run is one schedule's shared state.
type run struct {
	t     *testing.T
	c     *replicatest.Cluster
	h     *history
	epoch atomic.Uint64 // the sequencer that hands out epochs to claimants
	stop  atomic.Bool

	mu     sync.Mutex
	acked  map[string]bool // data of appends answered Appended or Duplicate
	sent   map[string]bool // data of every append attempted
	claims []claimAck      // acknowledged claims
	counts map[string]int  // outcome counts, for the log
}

type claimAck struct {
	P                    int
	Epoch                uint64
	Data                 string
	ClosedEpoch, LastSeq uint64
}

func (r *run) count(k string) {
	r.mu.Lock()
	r.counts[k]++
	r.mu.Unlock()
}

// doAppend sends one attempt of an append through the current leader and
// records it. ok is false when the attempt certainly had no effect (no
// leader, not leader) or its outcome is unknown; then the caller retries the
// same append, which the producer rule makes idempotent.
func (r *run) doAppend(client int, in appendIn) (out appendOut, ok bool) {
	r.mu.Lock()
	r.sent[in.Data] = true
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	call := r.h.now()
	res, err := r.c.Apply(ctx, appendCmd(in))
	ret := r.h.now()
	switch {
	case errors.Is(err, replica.ErrOutcomeUnknown):
		r.h.add(client, in, appendOut{Unknown: true}, call, math.MaxInt64)
		r.count("unknown")
		return appendOut{}, false
	case err != nil:
		r.count("not-proposed")
		return appendOut{}, false // nothing was appended: not an operation
	}
	sr, err := stream.DecodeResult(res)
	if err != nil {
		r.t.Errorf("append %+v: %v", in, err)
		return appendOut{}, false
	}
	out = appendOut{Outcome: sr.Outcome, Epoch: sr.Epoch, Seq: sr.Seq}
	if sr.Claim != nil {
		out.Claim, out.ClosedEpoch, out.LastSeq = true, sr.Claim.ClosedEpoch, sr.Claim.LastSeq
	}
	r.h.add(client, in, out, call, ret)
	r.count(string(sr.Outcome))
	r.mu.Lock()
	defer r.mu.Unlock()
	if sr.Outcome == stream.Appended || sr.Outcome == stream.Duplicate {
		r.acked[in.Data] = true
	}
	if out.Claim && sr.Outcome == stream.Appended {
		r.claims = append(r.claims, claimAck{P: in.P, Epoch: in.Epoch, Data: in.Data,
			ClosedEpoch: out.ClosedEpoch, LastSeq: out.LastSeq})
	}
	return out, true
}

// writer claims an epoch from the sequencer, appends in it until it is
// fenced (or, now and then, claims a newer one on its own), and claims
// again. An attempt with an unknown outcome is retried unchanged.
func (r *run) writer(w int, rng *rand.Rand) {
	p := w % producers
	epoch, seq := r.epoch.Add(1), uint64(0)
	for !r.stop.Load() {
		in := appendIn{P: p, Epoch: epoch, Seq: seq, Data: chunkData(p, epoch, seq, w)}
		out, ok := r.doAppend(w, in)
		if !ok {
			time.Sleep(time.Duration(rng.IntN(10)) * time.Millisecond)
			continue
		}
		switch out.Outcome {
		case stream.Appended, stream.Duplicate:
			seq++
			if rng.IntN(8) == 0 {
				epoch, seq = r.epoch.Add(1), 0
			}
		case stream.EpochFenced:
			epoch, seq = r.epoch.Add(1), 0
		default:
			r.t.Errorf("writer %d: append %+v answered %+v", w, in, out)
			return
		}
		time.Sleep(time.Duration(rng.IntN(4)) * time.Millisecond)
	}
}

// read returns the stream's content by a linearizable read on the leader.
func (r *run) read(ctx context.Context) (string, error) {
	id, err := r.c.WaitLeader(ctx)
	if err != nil {
		return "", err
	}
	g, m := r.c.Voter(id)
	if g == nil {
		return "", replica.ErrClosed
	}
	if err := g.LeaderRead(ctx); err != nil {
		return "", err
	}
	res, o := m.(countingMachine).Read(faultStream, 0, math.MaxInt32, faultNow)
	if o != "" {
		return "", fmt.Errorf("read %q: %s", faultStream, o)
	}
	return string(bytes.Join(res.Messages, nil)), nil
}

func (r *run) reader(client int, rng *rand.Rand) {
	for !r.stop.Load() {
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		call := r.h.now()
		content, err := r.read(ctx)
		ret := r.h.now()
		cancel()
		if err == nil {
			r.h.add(client, readIn{}, readOf(content), call, ret)
			r.count("read")
		}
		time.Sleep(time.Duration(5+rng.IntN(10)) * time.Millisecond)
	}
}

// faults runs the seeded fault schedule for d: each round repairs the last
// fault (restart, heal), waits, then kills or isolates one voter, the leader
// more often than not, so that a quorum can always form again. It returns
// the faults injected, in order.
func (r *run) faults(rng *rand.Rand, d time.Duration) []string {
	var log []string
	killed := ""
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if killed != "" {
			if err := r.c.Restart(killed); err != nil {
				r.t.Errorf("restart %s: %v", killed, err)
			}
			killed = ""
		}
		r.c.Heal()
		time.Sleep(time.Duration(50+rng.IntN(150)) * time.Millisecond)
		target, ok := r.c.Leader()
		if !ok || rng.IntN(3) == 0 {
			ids := r.c.IDs()
			target = ids[rng.IntN(len(ids))]
		}
		switch rng.IntN(3) {
		case 0:
			if err := r.c.Kill(target); err != nil {
				r.t.Errorf("kill %s: %v", target, err)
			}
			killed = target
			log = append(log, "kill "+target)
		case 1:
			r.c.Isolate(target)
			log = append(log, "isolate "+target)
		case 2:
			// A partition that leaves the target with a minority of one,
			// and the other two cut from each other as well: no quorum
			// until the next round heals it.
			ids := r.c.IDs()
			var groups [][]string
			for _, id := range ids {
				groups = append(groups, []string{id})
			}
			r.c.Partition(groups...)
			log = append(log, "split all")
		}
		time.Sleep(time.Duration(100+rng.IntN(250)) * time.Millisecond)
	}
	if killed != "" {
		if err := r.c.Restart(killed); err != nil {
			r.t.Errorf("restart %s: %v", killed, err)
		}
	}
	r.c.Heal()
	return log
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s=%q: not an integer", name, v)
	}
	return n
}

// TestFaultSchedules runs the seeded schedules; see the file comment.
// Reference: Raft §5.3, §5.4, §8; PROTOCOL.md 5.2.1.
func TestFaultSchedules(t *testing.T) {
	n := envInt(t, "STREAM_FAULT_SCHEDULES", 2)
	seed0 := envInt(t, "STREAM_FAULT_SEED", 1)
	var ops, faults int
	for i := range n {
		seed := uint64(seed0 + i)
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			o, f := runSchedule(t, seed)
			ops += o
			faults += f
		})
	}
	t.Logf("ran %d schedules (seeds %d..%d): %d client operations, %d faults", n, seed0, seed0+n-1, ops, faults)
}

// countingMachine is a stream.Machine that counts its restores from
// snapshots, to show that the schedules exercise Raft §7's InstallSnapshot.
type countingMachine struct {
	*stream.Machine
	restores *atomic.Int64
}

func (m countingMachine) Restore(b []byte) error {
	m.restores.Add(1)
	return m.Machine.Restore(b)
}

func runSchedule(t *testing.T, seed uint64) (ops, nfaults int) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// Small snapshot threshold and trailing log, so that a voter restarted
	// or healed after a while catches up from a snapshot; every third
	// schedule keeps its voters on disk (raft-boltdb and file snapshots).
	opts := replicatest.Options{Voters: 3, SnapshotThreshold: 64,
		SnapshotInterval: 50 * time.Millisecond, TrailingLogs: 16}
	if seed%3 == 0 {
		opts.Dir = t.TempDir()
	}
	var restores atomic.Int64
	c := replicatest.New(t, opts, func(string) replica.Machine {
		return countingMachine{stream.NewMachine(), &restores}
	})
	create := stream.Command{Op: stream.OpCreate, Stream: faultStream, Now: faultNow, ContentType: faultCT}
	res, err := c.Apply(ctx, create.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if sr, _ := stream.DecodeResult(res); sr.Outcome != stream.Created {
		t.Fatalf("create %q: %+v", faultStream, sr)
	}

	r := &run{t: t, c: c, h: &history{start: time.Now()}, acked: map[string]bool{},
		sent: map[string]bool{}, counts: map[string]int{}}
	rng := rand.New(rand.NewPCG(seed, 0))
	var wg sync.WaitGroup
	for w := range writers {
		wrng := rand.New(rand.NewPCG(seed, uint64(w+1)))
		wg.Go(func() { r.writer(w, wrng) })
	}
	rrng := rand.New(rand.NewPCG(seed, 100))
	wg.Go(func() { r.reader(writers, rrng) })
	faultLog := r.faults(rng, 1500*time.Millisecond)
	r.stop.Store(true)
	wg.Wait()

	// Recovery: every voter runs and is linked; the leader's barrier
	// settles every command still in flight.
	if err := c.WaitConverged(ctx); err != nil {
		t.Fatalf("after faults %v: %v", faultLog, err)
	}
	call := r.h.now()
	final, err := r.read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r.h.add(writers+1, readIn{}, readOf(final), call, r.h.now())

	t.Logf("seed %d (durable %v): faults %v; outcomes %v; %d bytes, %d claims acknowledged, %d restores from snapshots",
		seed, opts.Dir != "", faultLog, r.counts, len(final), len(r.claims), restores.Load())
	for _, p := range contentProblems(r.acked, r.sent, r.claims, final) {
		t.Errorf("seed %d: %s", seed, p)
	}
	checkVotersAgree(t, c)
	if bounded, err := boundByLog(resolveUnknown(r.h.ops, final), final); err != nil {
		t.Errorf("seed %d: not linearizable: %v", seed, err)
	} else {
		checkLinearizable(t, bounded, final, seed)
	}
	if r.counts[string(stream.Appended)] == 0 || len(r.claims) == 0 {
		t.Errorf("seed %d: no append or no claim was acknowledged: the schedule tested nothing", seed)
	}
	return len(r.h.ops), len(faultLog)
}

// contentProblems checks the final stream against what the clients were
// told: acked and sent hold the data of acknowledged and of attempted
// appends, claims the acknowledged claims. It returns one line per problem.
func contentProblems(acked, sent map[string]bool, claims []claimAck, final string) []string {
	var probs []string
	bad := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	var chunks []chunk
	pos := map[string]int{}
	for _, d := range chunksOf(final) {
		ch, err := parseChunk(d)
		if err != nil {
			bad("%v", err)
			continue
		}
		if _, dup := pos[d]; dup {
			bad("append %q is present twice", d)
		}
		if !sent[d] {
			bad("append %q is present but no producer sent it", d)
		}
		pos[d] = len(chunks)
		chunks = append(chunks, ch)
	}
	for d := range acked {
		if _, ok := pos[d]; !ok {
			bad("acknowledged append %q is missing", d)
		}
	}
	// Per producer, in log order: epochs never go back (the fence), and an
	// epoch's sequence numbers run 0, 1, 2, … without gap or repeat.
	type ps struct {
		epoch, next uint64
		seen        bool
	}
	cur := [producers]ps{}
	for i, ch := range chunks {
		s := &cur[ch.P]
		switch {
		case s.seen && ch.Epoch < s.epoch:
			bad("chunk %d %q: epoch %d applied after epoch %d was claimed", i, ch.Data, ch.Epoch, s.epoch)
		case !s.seen || ch.Epoch > s.epoch:
			if ch.Seq != 0 {
				bad("chunk %d %q: epoch %d starts at seq %d", i, ch.Data, ch.Epoch, ch.Seq)
			}
			*s = ps{epoch: ch.Epoch, next: 1, seen: true}
		case ch.Seq != s.next:
			bad("chunk %d %q: seq %d, want %d", i, ch.Data, ch.Seq, s.next)
		default:
			s.next++
		}
	}
	// Each acknowledged claim closed its predecessor exactly where the
	// predecessor's appends stop, and nothing of an older epoch follows it.
	for _, cl := range claims {
		at := pos[cl.Data]
		var last int64 = -1
		for i, ch := range chunks {
			if ch.P != cl.P {
				continue
			}
			if i < at && ch.Epoch == cl.ClosedEpoch {
				last = int64(ch.Seq)
			}
			if i > at && ch.Epoch < cl.Epoch {
				bad("claim %q (closing epoch %d) is followed by %q of an older epoch", cl.Data, cl.ClosedEpoch, ch.Data)
			}
		}
		if last != int64(cl.LastSeq) {
			bad("claim %q answered epoch %d closed at seq %d; the stream has its last seq at %d",
				cl.Data, cl.ClosedEpoch, cl.LastSeq, last)
		}
	}
	return probs
}

func checkVotersAgree(t *testing.T, c *replicatest.Cluster) {
	var first []byte
	for _, id := range c.IDs() {
		_, m := c.Voter(id)
		snap, err := m.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = snap
		} else if !bytes.Equal(first, snap) {
			t.Errorf("voter %s's state differs from voter %s's", id, c.IDs()[0])
		}
	}
}

// linearizabilityBudget bounds one porcupine check. With logModel and
// boundByLog a check of a schedule's ~2,000 operations takes milliseconds
// even on a loaded machine; before them, schedules under load kept
// porcupine searching for minutes (see logModel). A check that runs out
// is a failure, never a pass.
const linearizabilityBudget = time.Minute

func checkLinearizable(t *testing.T, ops []porcupine.Operation, final string, seed uint64) {
	model := logModel(final)
	start := time.Now()
	res, info := porcupine.CheckOperationsVerbose(model, ops, linearizabilityBudget)
	t.Logf("seed %d: porcupine checked %d operations in %v: %s", seed, len(ops), time.Since(start).Round(time.Millisecond), res)
	switch res {
	case porcupine.Ok:
	case porcupine.Illegal:
		path := filepath.Join(os.TempDir(), fmt.Sprintf("stream-faults-seed%d.html", seed))
		if err := porcupine.VisualizePath(model, info, path); err == nil {
			t.Errorf("seed %d: history of %d operations is not linearizable; see %s", seed, len(ops), path)
		} else {
			t.Errorf("seed %d: history of %d operations is not linearizable (visualization: %v)", seed, len(ops), err)
		}
	default:
		t.Errorf("seed %d: linearizability check of %d operations did not finish in %v", seed, len(ops), linearizabilityBudget)
	}
}

// The checkers themselves must catch what they look for: each case below is
// a violation written by hand.
func TestFaultCheckersCatchViolations(t *testing.T) {
	a := func(p int, e, s uint64) string { return chunkData(p, e, s, 0) }
	set := func(ds ...string) map[string]bool {
		m := map[string]bool{}
		for _, d := range ds {
			m[d] = true
		}
		return m
	}
	claim := claimAck{P: 0, Epoch: 2, Data: a(0, 2, 0), ClosedEpoch: 1, LastSeq: 1}
	sent := set(a(0, 1, 0), a(0, 1, 1), a(0, 1, 2), a(0, 2, 0), a(0, 2, 1))
	good := a(0, 1, 0) + a(0, 1, 1) + a(0, 2, 0) + a(0, 2, 1)
	if p := contentProblems(set(a(0, 1, 0), a(0, 2, 0)), sent, []claimAck{claim}, good); len(p) != 0 {
		t.Fatalf("a correct stream is reported: %v", p)
	}
	content := []struct {
		name, final string
		acked       map[string]bool
		want        string // a problem that must be reported
	}{
		{"acknowledged append missing", a(0, 1, 0) + a(0, 1, 1) + a(0, 2, 0), set(a(0, 2, 1)), "is missing"},
		{"append present twice", good + a(0, 2, 1), nil, "present twice"},
		{"append nobody sent", good + a(0, 2, 2), nil, "no producer sent it"},
		{"older epoch after the claim", a(0, 1, 0) + a(0, 1, 1) + a(0, 2, 0) + a(0, 1, 2), nil, "of an older epoch"},
		{"claim's LastSeq wrong", a(0, 1, 0) + a(0, 2, 0), nil, "closed at seq 1"},
		{"sequence gap", a(0, 1, 0) + a(0, 1, 1) + a(0, 2, 0) + a(0, 2, 3), nil, "seq 3, want 1"},
	}
	for _, c := range content {
		p := contentProblems(c.acked, sent, []claimAck{claim}, c.final)
		if !strings.Contains(strings.Join(p, "\n"), c.want) {
			t.Errorf("%s: problems %q do not report %q", c.name, p, c.want)
		}
	}

	op := func(client int, in, out interface{}, call, ret int64) porcupine.Operation {
		return porcupine.Operation{ClientId: client, Input: in, Output: out, Call: call, Return: ret}
	}
	in0 := appendIn{P: 0, Epoch: 1, Seq: 0, Data: a(0, 1, 0)}
	in1 := appendIn{P: 0, Epoch: 1, Seq: 1, Data: a(0, 1, 1)}
	claim2 := appendIn{P: 0, Epoch: 2, Seq: 0, Data: a(0, 2, 0)}
	ok0 := appendOut{Outcome: stream.Appended, Epoch: 1, Seq: 0}
	ok1 := appendOut{Outcome: stream.Appended, Epoch: 1, Seq: 1}
	okClaim := appendOut{Outcome: stream.Appended, Epoch: 2, Claim: true, ClosedEpoch: 1, LastSeq: 0}
	model := streamModel
	histories := []struct {
		name  string
		ops   []porcupine.Operation
		legal bool
	}{
		{"sequential appends and a read", []porcupine.Operation{
			op(0, in0, ok0, 0, 1), op(0, in1, ok1, 2, 3), op(1, readIn{}, readOf(in0.Data+in1.Data), 4, 5)}, true},
		{"a concurrent read may miss an append", []porcupine.Operation{
			op(0, in0, ok0, 0, 1), op(0, in1, ok1, 2, 5), op(1, readIn{}, readOf(in0.Data), 3, 4)}, true},
		{"an unknown append may land after a later read", []porcupine.Operation{
			op(0, in0, appendOut{Unknown: true}, 0, math.MaxInt64), op(1, readIn{}, readOf(""), 2, 3),
			op(1, readIn{}, readOf(in0.Data), 4, 5)}, true},
		{"stale read: misses an append acknowledged before it", []porcupine.Operation{
			op(0, in0, ok0, 0, 1), op(0, in1, ok1, 2, 3), op(1, readIn{}, readOf(in0.Data), 4, 5)}, false},
		{"read sees an append not yet sent", []porcupine.Operation{
			op(1, readIn{}, readOf(in0.Data), 0, 1), op(0, in0, ok0, 2, 3)}, false},
		{"fenced epoch appended after the claim was acknowledged", []porcupine.Operation{
			op(0, in0, ok0, 0, 1), op(1, claim2, okClaim, 2, 3), op(0, in1, ok1, 4, 5)}, false},
		{"claim answers the wrong LastSeq", []porcupine.Operation{
			op(0, in0, ok0, 0, 1), op(1, claim2, appendOut{Outcome: stream.Appended, Epoch: 2, Claim: true, ClosedEpoch: 1, LastSeq: 7}, 2, 3)}, false},
	}
	for _, h := range histories {
		res := porcupine.CheckOperations(model, h.ops)
		if res != h.legal {
			t.Errorf("%s: linearizable = %v, want %v", h.name, res, h.legal)
		}
	}
}

// TestResolveUnknownBoundsByTheFirstReadThatSawIt checks resolveUnknown: an
// append whose outcome is unknown and whose data no read and not the final
// stream holds is dropped; one a read saw gets that read's return as its
// own (it took effect before the read answered), the earliest such read
// when several saw it; one only the final stream holds keeps Return = +∞.
func TestResolveUnknownBoundsByTheFirstReadThatSawIt(t *testing.T) {
	seen := appendIn{P: 0, Epoch: 1, Seq: 0, Data: chunkData(0, 1, 0, 0)}
	late := appendIn{P: 0, Epoch: 1, Seq: 1, Data: chunkData(0, 1, 1, 0)}
	lost := appendIn{P: 1, Epoch: 1, Seq: 0, Data: chunkData(1, 1, 0, 0)}
	unknown := appendOut{Unknown: true}
	ops := []porcupine.Operation{
		{ClientId: 0, Input: seen, Output: unknown, Call: 0, Return: math.MaxInt64},
		{ClientId: 1, Input: lost, Output: unknown, Call: 1, Return: math.MaxInt64},
		{ClientId: 2, Input: readIn{}, Output: readOf(""), Call: 2, Return: 3},
		{ClientId: 2, Input: readIn{}, Output: readOf(seen.Data), Call: 4, Return: 5},
		{ClientId: 2, Input: readIn{}, Output: readOf(seen.Data), Call: 6, Return: 7},
		{ClientId: 0, Input: late, Output: unknown, Call: 8, Return: math.MaxInt64},
	}
	got := resolveUnknown(ops, seen.Data+late.Data)
	returns := map[string]int64{}
	for _, op := range got {
		if in, ok := op.Input.(appendIn); ok {
			returns[in.Data] = op.Return
		}
	}
	if _, ok := returns[lost.Data]; ok {
		t.Error("an unknown append absent from the final stream was kept")
	}
	if returns[seen.Data] != 5 {
		t.Errorf("seen append's return = %d, want 5 (the first read that saw it)", returns[seen.Data])
	}
	if returns[late.Data] != math.MaxInt64 {
		t.Errorf("late append's return = %d, want +∞", returns[late.Data])
	}
	if !porcupine.CheckOperations(streamModel, got) {
		t.Error("the resolved history is not linearizable")
	}
}

// TestResolveUnknownUsesRetries checks resolveUnknown's use of the
// client's unchanged retries: an unknown attempt whose later copy was
// answered Appended is dropped (it never took effect), one whose later copy
// was answered Duplicate is bounded by that copy's return.
func TestResolveUnknownUsesRetries(t *testing.T) {
	first := appendIn{P: 0, Epoch: 1, Seq: 0, Data: chunkData(0, 1, 0, 0)}
	second := appendIn{P: 0, Epoch: 1, Seq: 1, Data: chunkData(0, 1, 1, 0)}
	unknown := appendOut{Unknown: true}
	ops := []porcupine.Operation{
		{ClientId: 0, Input: first, Output: unknown, Call: 0, Return: math.MaxInt64},
		{ClientId: 0, Input: first, Output: appendOut{Outcome: stream.Appended, Epoch: 1, Seq: 0}, Call: 2, Return: 3},
		{ClientId: 0, Input: second, Output: unknown, Call: 4, Return: math.MaxInt64},
		{ClientId: 0, Input: second, Output: appendOut{Outcome: stream.Duplicate, Epoch: 1, Seq: 1}, Call: 6, Return: 7},
	}
	got := resolveUnknown(ops, first.Data+second.Data)
	if len(got) != 3 {
		t.Fatalf("resolved history has %d operations, want 3 (the first unknown attempt dropped)", len(got))
	}
	for _, op := range got {
		if o := op.Output.(appendOut); o.Unknown {
			if op.Input != any(second) || op.Return != 7 {
				t.Errorf("unknown attempt %+v kept with return %d, want the second with 7", op.Input, op.Return)
			}
		}
	}
	if !porcupine.CheckOperations(streamModel, got) {
		t.Error("the resolved history is not linearizable")
	}
}

// TestBoundByLogKeepsTheVerdict checks that boundByLog and logModel are
// exact: on small random histories, legal and not, porcupine's verdict
// with streamModel on the history as resolveUnknown leaves it is its
// verdict with logModel, on that history and on the narrowed one, and an
// error from boundByLog comes only with a history porcupine rejects.
func TestBoundByLogKeepsTheVerdict(t *testing.T) {
	legal, illegal := 0, 0
	for seed := range uint64(3000) {
		ops, final := randomHistory(rand.New(rand.NewPCG(seed, 7)))
		ops = resolveUnknown(ops, final)
		want := porcupine.CheckOperations(streamModel, ops)
		lm := logModel(final)
		if got := porcupine.CheckOperations(lm, ops); got != want {
			t.Fatalf("seed %d: linearizable = %v with streamModel, %v with logModel:\n%s", seed, want, got, describeOps(ops))
		}
		bounded, err := boundByLog(ops, final)
		switch {
		case err != nil && want:
			t.Fatalf("seed %d: boundByLog: %v, but the history is linearizable:\n%s", seed, err, describeOps(ops))
		case err == nil && porcupine.CheckOperations(lm, bounded) != want:
			t.Fatalf("seed %d: linearizable = %v as recorded, %v narrowed:\n%s\nnarrowed:\n%s",
				seed, want, !want, describeOps(ops), describeOps(bounded))
		}
		if want {
			legal++
		} else {
			illegal++
		}
	}
	if legal < 500 || illegal < 500 {
		t.Errorf("the random histories are lopsided: %d legal, %d not", legal, illegal)
	}
}

// randomHistory runs two producers and a reader against the model with
// random linearization points, so the history is linearizable, and then,
// half of the time, breaks it: moves one operation's window, or swaps
// two chunks of the final stream (and of every read that holds both).
// Some appends end with an unknown outcome (Return +∞), taking effect,
// perhaps late, or not, and the client may send them again unchanged.
func randomHistory(rng *rand.Rand) ([]porcupine.Operation, string) {
	type pending struct {
		op      porcupine.Operation
		point   int64
		unknown bool // the client never learns the outcome
		lost    bool // and it takes no effect
	}
	var evs []pending
	var tm [3]int64
	var seq [2]uint64
	var retry [2]*appendIn // an unknown attempt the client sends again
	for range 4 + rng.IntN(6) {
		c := rng.IntN(3)
		call := tm[c] + int64(rng.IntN(5))
		point := call + int64(rng.IntN(4))
		ret := point + int64(rng.IntN(4))
		tm[c] = ret + 1
		if c == 2 {
			evs = append(evs, pending{op: porcupine.Operation{ClientId: c, Input: readIn{}, Call: call, Return: ret}, point: point})
			continue
		}
		in := appendIn{P: c, Epoch: 1, Seq: seq[c], Data: chunkData(c, 1, seq[c], c)}
		if retry[c] != nil {
			in, retry[c] = *retry[c], nil
		} else {
			seq[c]++
		}
		e := pending{op: porcupine.Operation{ClientId: c, Input: in, Call: call, Return: ret}, point: point}
		if rng.IntN(4) == 0 {
			e.unknown, e.lost = true, rng.IntN(2) == 0
			e.point += int64(rng.IntN(8)) // it may land late
			if rng.IntN(2) == 0 {
				retry[c] = &in
			}
		}
		evs = append(evs, e)
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].point < evs[j].point })
	s, content := modelState{Sum: sumBasis}, ""
	var ops []porcupine.Operation
	for _, e := range evs {
		switch in := e.op.Input.(type) {
		case readIn:
			e.op.Output = readOf(content)
		case appendIn:
			if !e.lost {
				var out appendOut
				s, out = step(s, in)
				e.op.Output = out
				if out.Outcome == stream.Appended { // decide applies exactly these
					content += in.Data
				}
			}
			if e.unknown {
				e.op.Output, e.op.Return = appendOut{Unknown: true}, math.MaxInt64
			}
		}
		ops = append(ops, e.op)
	}
	final := content
	ops = append(ops, porcupine.Operation{ClientId: 3, Input: readIn{}, Output: readOf(final),
		Call: tm[0] + tm[1] + tm[2] + 20, Return: tm[0] + tm[1] + tm[2] + 21})
	switch rng.IntN(4) {
	case 0: // move one window
		i := rng.IntN(len(ops))
		d := int64(rng.IntN(9)) - 4
		ops[i].Call += d
		if ops[i].Return != math.MaxInt64 {
			ops[i].Return += d
		}
	case 1: // swap two chunks everywhere
		chunks := chunksOf(final)
		if len(chunks) > 1 {
			i := rng.IntN(len(chunks) - 1)
			j := i + 1 + rng.IntN(len(chunks)-1-i)
			a, b := chunks[i], chunks[j]
			swap := func(c string) string {
				if !strings.Contains(c, a) || !strings.Contains(c, b) {
					return c
				}
				return strings.NewReplacer(a, b, b, a).Replace(c)
			}
			for k := range ops {
				if r, ok := ops[k].Output.(readOut); ok {
					ops[k].Output = readOf(swap(r.Content))
				}
			}
			final = swap(final)
		}
	}
	return ops, final
}

func describeOps(ops []porcupine.Operation) string {
	var b strings.Builder
	for _, op := range ops {
		in := fmt.Sprint(op.Input)
		if r, ok := op.Output.(readOut); ok {
			in = "read " + r.Content
		}
		fmt.Fprintf(&b, "  c%d [%d, %d] %s -> %+v\n", op.ClientId, op.Call, op.Return, in, op.Output)
	}
	return b.String()
}

// TestBoundByLogNarrowsUnknownWindows: appends whose outcome is unknown
// and that no read saw before the final one stay concurrent with the rest
// of the history, one of the shapes that make porcupine's search long.
// After boundByLog, each operation overlaps at most the few operations
// around its place in the stream.
func TestBoundByLogNarrowsUnknownWindows(t *testing.T) {
	var ops []porcupine.Operation
	var final strings.Builder
	var seq [producers]uint64
	tm := int64(0)
	for i := range 400 {
		p := i % producers
		in := appendIn{P: p, Epoch: 1, Seq: seq[p], Data: chunkData(p, 1, seq[p], p)}
		seq[p]++
		out := appendOut{Outcome: stream.Appended, Epoch: 1, Seq: in.Seq}
		ret := tm + 2
		if i%40 == 7 {
			out, ret = appendOut{Unknown: true}, math.MaxInt64
		}
		ops = append(ops, porcupine.Operation{ClientId: p, Input: in, Output: out, Call: tm, Return: ret})
		final.WriteString(in.Data)
		tm += 3
	}
	ops = append(ops, porcupine.Operation{ClientId: producers, Input: readIn{}, Output: readOf(final.String()), Call: tm, Return: tm + 1})
	widest := func(ops []porcupine.Operation) int {
		w := 0
		for i := range ops {
			n := 0
			for j := range ops {
				if i != j && ops[j].Call <= ops[i].Return && ops[i].Call <= ops[j].Return {
					n++
				}
			}
			w = max(w, n)
		}
		return w
	}
	if w := widest(ops); w < 300 {
		t.Fatalf("the recorded history's widest overlap is %d operations; the test means a wide one", w)
	}
	bounded, err := boundByLog(ops, final.String())
	if err != nil {
		t.Fatal(err)
	}
	if w := widest(bounded); w > 4 {
		t.Errorf("after boundByLog an operation still overlaps %d others, want at most 4", w)
	}
	if !porcupine.CheckOperations(streamModel, bounded) {
		t.Error("the narrowed history is not linearizable")
	}
}

// TestBoundByLogNamesTheInversion: an append the stream places first but
// that was called after the other one returned is reported by name.
func TestBoundByLogNamesTheInversion(t *testing.T) {
	first := appendIn{P: 0, Epoch: 1, Seq: 0, Data: chunkData(0, 1, 0, 0)}
	second := appendIn{P: 1, Epoch: 1, Seq: 0, Data: chunkData(1, 1, 0, 1)}
	ops := []porcupine.Operation{
		{ClientId: 0, Input: first, Output: appendOut{Outcome: stream.Appended, Epoch: 1}, Call: 0, Return: 1},
		{ClientId: 1, Input: second, Output: appendOut{Outcome: stream.Appended, Epoch: 1}, Call: 2, Return: 3},
		{ClientId: 2, Input: readIn{}, Output: readOf(second.Data + first.Data), Call: 4, Return: 5},
	}
	_, err := boundByLog(ops, second.Data+first.Data)
	if err == nil || !strings.Contains(err.Error(), "append(p1, epoch 1, seq 0)") || !strings.Contains(err.Error(), "append(p0, epoch 1, seq 0)") {
		t.Errorf("boundByLog = %v, want an error naming both appends", err)
	}
	if porcupine.CheckOperations(streamModel, ops) {
		t.Error("porcupine accepts the inverted history")
	}
}
