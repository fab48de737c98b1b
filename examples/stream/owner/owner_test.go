package owner

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ownership-book/ownership/examples/stream"
)

var bg = context.Background()

// claimBy applies a competitor's claim of epoch directly to the stream.
func (ts *testStream) claimBy(who string, epoch uint64) stream.Result {
	return ts.m.ApplyCommand(stream.Command{Op: stream.OpAppend, Stream: "db", ContentType: streamContentType,
		Now:      time.Unix(1e9, 0).UnixNano(),
		Messages: [][]byte{encode(record{T: "claim", E: epoch, W: who, N: "n-" + who})},
		Producer: &stream.Producer{ID: "db-writer", Epoch: epoch, Seq: 0}})
}

func isClaim(r *http.Request) bool { return isAppend(r) && headerIs(r, HeaderProducerSeq, "0") }

func epochOf(r *http.Request) uint64 { return parseUint(r.Header.Get(HeaderProducerEpoch)) }

// TestOpenClaims checks the open claim: a claim record is written to the
// local log and synced before the claim is appended at sequence number 0, at
// an epoch higher than any this copy has seen; a lost race is claimed again
// above the winner, and after 16 lost rounds Open fails with ErrClaimRaces.
// Reference: chapter "Owning a database through its stream", section "The claim".
func TestOpenClaims(t *testing.T) {
	t.Run("claim record first, epoch above every seen", func(t *testing.T) {
		ts := newTestStream(t)
		dirA, dirB := t.TempDir(), t.TempDir()
		var checked atomic.Int32
		ts.setFront(func(w http.ResponseWriter, r *http.Request) bool {
			if isClaim(r) {
				dir := dirA
				if strings.Contains(r.Header.Get("X-Test-Dir"), "B") || checked.Load() > 0 {
					dir = dirB
				}
				log, _ := os.ReadFile(filepath.Join(dir, "log"))
				want := fmt.Sprintf(`{"t":"claim","e":%d,`, epochOf(r))
				if !strings.Contains(string(log), want) {
					t.Errorf("claim of epoch %d sent before %s held %s", epochOf(r), dir, want)
				}
				checked.Add(1)
			}
			return false
		})
		a, _ := ts.mustOpen(dirA, "A")
		if a.Epoch() != 1 {
			t.Fatalf("A's epoch = %d, want 1", a.Epoch())
		}
		a.Put("x", "1")
		if err := a.Synced(bg); err != nil {
			t.Fatal(err)
		}
		var claims []Event
		b, _, err := ts.open(dirB, "B", func(e Event) {
			if e.Kind == "claim" {
				claims = append(claims, e)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		if len(claims) != 1 || claims[0].Epoch != 2 || claims[0].Result.Status != 200 {
			t.Fatalf("B's claims = %+v, want one applied claim of epoch 2", claims)
		}
		if c := claims[0].Result; c.ClosedEpoch != 1 || c.ClosedSeq != 1 {
			t.Errorf("B's claim closed epoch %d at seq %d, want epoch 1 at seq 1", c.ClosedEpoch, c.ClosedSeq)
		}
		if e, s := ts.producer(); e != 2 || s != 0 {
			t.Errorf("stream's producer = epoch %d seq %d, want 2, 0", e, s)
		}
		if v, _, _ := b.Get("x"); v != "1" {
			t.Errorf("B reads x = %q, want 1 (rebuilt from the stream)", v)
		}
		if checked.Load() != 2 {
			t.Errorf("checked %d claims, want 2", checked.Load())
		}
	})

	t.Run("lost race claims above the winner", func(t *testing.T) {
		ts := newTestStream(t)
		ts.mustOpen(t.TempDir(), "A") // epoch 1
		injected := false
		ts.setFront(func(w http.ResponseWriter, r *http.Request) bool {
			if isClaim(r) && !injected {
				injected = true
				ts.claimBy("Z", epochOf(r)+3) // a newer owner wins the race
			}
			return false
		})
		var claims []uint64
		c, _, err := ts.open(t.TempDir(), "C", func(e Event) {
			if e.Kind == "claim" {
				claims = append(claims, e.Epoch)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if fmt.Sprint(claims) != "[2 6]" || c.Epoch() != 6 {
			t.Errorf("C claimed %v and owns epoch %d, want [2 6] and 6", claims, c.Epoch())
		}
	})

	t.Run("same epoch race is lost, not mistaken for a retry", func(t *testing.T) {
		ts := newTestStream(t)
		ts.mustOpen(t.TempDir(), "A")
		injected := false
		ts.setFront(func(w http.ResponseWriter, r *http.Request) bool {
			if isClaim(r) && !injected {
				injected = true
				ts.claimBy("Z", epochOf(r)) // same epoch: C's claim is a duplicate
			}
			return false
		})
		var statuses []int
		c, _, err := ts.open(t.TempDir(), "C", func(e Event) {
			if e.Kind == "claim" {
				statuses = append(statuses, e.Result.Status)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if fmt.Sprint(statuses) != "[204 200]" || c.Epoch() != 3 {
			t.Errorf("C's claims answered %v, epoch %d; want [204 200], 3", statuses, c.Epoch())
		}
	})

	t.Run("a claim whose answer was lost still takes over", func(t *testing.T) {
		// A's open reaches the stream and its claim applies, fencing B,
		// but the answer is lost, so A opens offline. When A goes live it
		// finds B's records before its own claim: they were there when A
		// took over, and must not make A give the database up, or nobody
		// would own it.
		ts := newTestStream(t)
		dirA := t.TempDir()
		a, _ := ts.mustOpen(dirA, "A")
		a.Put("a", "1")
		a.Synced(bg)
		a.Close()
		b, _ := ts.mustOpen(t.TempDir(), "B")
		b.Put("b", "2")
		if err := b.Synced(bg); err != nil {
			t.Fatal(err)
		}
		// A's first claim, of epoch 2, loses to B's; the answer to its
		// second, of epoch 3, is lost.
		c, l := ts.client()
		l.setFault(func(r *http.Request) (bool, bool) { return false, isClaim(r) && epochOf(r) == 3 })
		a2, err := Open(bg, dirA, Options{Stream: c, Manual: true})
		if err != nil {
			t.Fatal(err)
		}
		defer a2.Close()
		if e, _ := ts.producer(); e != 3 || a2.Live() {
			t.Fatalf("stream's epoch %d, A live %v; want A's claim of 3 applied, A offline", e, a2.Live())
		}
		l.setFault(nil)
		if err := a2.Synced(bg); err != nil {
			t.Fatalf("Synced of A after its claim's lost answer = %v, want nil", err)
		}
		if got := keys(commitsOf(t, a2)); got != "a=1 b=2" {
			t.Errorf("A's copy = %q, want a=1 b=2", got)
		}
		a2.Put("a", "3")
		if err := a2.Synced(bg); err != nil {
			t.Fatal(err)
		}
		if err := b.Synced(bg); !errors.Is(err, ErrFenced) {
			t.Errorf("Synced of B = %v, want ErrFenced", err)
		}
		if got := keys(ts.history()); got != "a=1 b=2 a=3" {
			t.Errorf("stream %q", got)
		}
	})

	t.Run("a refused claim is no lost race", func(t *testing.T) {
		// A closed stream refuses the claim with 409: no other owner won,
		// so the open fails at once, saying so, after one claim.
		ts := newTestStream(t)
		ts.mustOpen(t.TempDir(), "A")
		ts.setFront(func(w http.ResponseWriter, r *http.Request) bool {
			if isClaim(r) { // closed after B's open found the stream
				ts.m.ApplyCommand(closeBehind)
			}
			return false
		})
		rounds := 0
		_, _, err := ts.open(t.TempDir(), "B", func(e Event) {
			if e.Kind == "claim" {
				rounds++
			}
		})
		if err == nil || errors.Is(err, ErrClaimRaces) || !strings.Contains(err.Error(), "409") {
			t.Errorf("open of a closed stream = %v, want an error naming the 409, not claim races", err)
		}
		if rounds != 1 {
			t.Errorf("sent %d claims, want 1", rounds)
		}
	})

	t.Run("a stream that keeps changing its history stops the open at 16 claims", func(t *testing.T) {
		ts := newTestStream(t)
		ts.mustOpen(t.TempDir(), "A")
		ts.setFront(func(w http.ResponseWriter, r *http.Request) bool {
			if isClaim(r) { // every claim finds a new incarnation: 412
				ts.m.ApplyCommand(stream.Command{Op: stream.OpReincarnate, Stream: "db"})
			}
			return false
		})
		claims := 0
		done := make(chan error, 1)
		go func() {
			_, _, err := ts.open(t.TempDir(), "B", func(e Event) {
				if e.Kind == "claim" {
					claims++
				}
			})
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, ErrClaimRaces) {
				t.Errorf("open = %v, want ErrClaimRaces", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the open never ended")
		}
		if claims > MaxClaimRounds {
			t.Errorf("the open sent %d claims, more than %d", claims, MaxClaimRounds)
		}
	})

	t.Run("16 lost races fail the open", func(t *testing.T) {
		ts := newTestStream(t)
		ts.mustOpen(t.TempDir(), "A")
		ts.setFront(func(w http.ResponseWriter, r *http.Request) bool {
			if isClaim(r) {
				ts.claimBy("Z", epochOf(r)+1) // always one step ahead
			}
			return false
		})
		rounds := 0
		_, _, err := ts.open(t.TempDir(), "D", func(e Event) {
			if e.Kind == "claim" {
				rounds++
			}
		})
		var cre *ClaimRacesError
		if !errors.Is(err, ErrClaimRaces) || !errors.As(err, &cre) {
			t.Fatalf("open = %v, want ErrClaimRaces", err)
		}
		if rounds != MaxClaimRounds || cre.Rounds != MaxClaimRounds {
			t.Errorf("sent %d claims (error says %d), want %d", rounds, cre.Rounds, MaxClaimRounds)
		}
	})
}

// TestRecoveryAfterTheClaim checks that a new owner learns from a leader
// read which pending commits landed; if no other copy wrote, it resends the
// others under its new epoch with their order and content kept, and if one
// did, it drops them and adopts the stream's commits.
// Reference: chapter "Owning a database through its stream", section "Recovery after the
// claim".
func TestRecoveryAfterTheClaim(t *testing.T) {
	t.Run("nobody else wrote: resend the rest unchanged", func(t *testing.T) {
		ts := newTestStream(t)
		dir := t.TempDir()
		a, l := ts.mustOpen(dir, "A")
		a.Put("a", "1")
		a.Put("b", "2")
		if err := a.Synced(bg); err != nil {
			t.Fatal(err)
		}
		a.Put("c", "3")
		l.setFault(func(r *http.Request) (bool, bool) { return false, isAppend(r) }) // c lands, answer lost
		if err := a.Push(bg); !errors.Is(err, ErrUnreachable) {
			t.Fatalf("push = %v, want ErrUnreachable", err)
		}
		a.Put("d", "4")
		a.Close() // the process dies with c unacknowledged and d unsent

		var rec Event
		var appends []Event
		a2, _, err := ts.open(dir, "A", func(e Event) {
			switch e.Kind {
			case "recover":
				rec = e
			case "append":
				appends = append(appends, e)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		defer a2.Close()
		if rec.Epoch != 2 || rec.Landed != 1 || rec.Kept != 1 || rec.Discarded != 0 {
			t.Errorf("recovery = %+v, want epoch 2, landed 1, kept 1", rec)
		}
		if err := a2.Synced(bg); err != nil {
			t.Fatal(err)
		}
		if len(appends) != 1 || appends[0].Epoch != 2 || appends[0].Seq != 1 {
			t.Errorf("appends after recovery = %+v, want one at epoch 2 seq 1", appends)
		}
		if got := keys(ts.history()); got != "a=1 b=2 c=3 d=4" {
			t.Errorf("stream history = %q", got)
		}
	})

	t.Run("someone else wrote: discard and catch up", func(t *testing.T) {
		ts := newTestStream(t)
		dirA := t.TempDir()
		a, _ := ts.mustOpen(dirA, "A")
		a.Put("a", "1")
		if err := a.Synced(bg); err != nil {
			t.Fatal(err)
		}
		a.Put("b", "2") // never sent
		a.Close()
		b, _ := ts.mustOpen(t.TempDir(), "B")
		b.Put("x", "9")
		if err := b.Synced(bg); err != nil {
			t.Fatal(err)
		}
		b.Close()

		var rec Event
		a2, _, err := ts.open(dirA, "A", func(e Event) {
			if e.Kind == "recover" {
				rec = e
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		defer a2.Close()
		if rec.Landed != 0 || rec.Discarded != 1 || rec.Kept != 0 {
			t.Errorf("recovery = %+v, want 1 discarded", rec)
		}
		if got := keys(commitsOf(t, a2)); got != "a=1 x=9" {
			t.Errorf("A's copy = %q, want the stream's a=1 x=9", got)
		}
		if _, ok, _ := a2.Get("b"); ok {
			t.Error("A still has its discarded commit b")
		}
		// The rewritten local log reopens to the same copy.
		a2.Close()
		a3, _ := ts.mustOpen(dirA, "A")
		if got := keys(commitsOf(t, a3)); got != "a=1 x=9" {
			t.Errorf("A's copy after reopening = %q", got)
		}
	})
}

// TestRecoveryFailure checks that a recovery that fails after its claim won
// (here, the rewrite of the local log) changes neither the local log nor
// the copy, and that the next open claims again, above the claim that
// failed, and recovers: A crashes with a commit pending, B opens and
// writes, and A's reopen must replace its pending commit by B's, with the
// rewrite failing the first time. Reference: chapter "Owning a database
// through its stream", sections "Recovery after the claim" and "The claim".
func TestRecoveryFailure(t *testing.T) {
	ts := newTestStream(t)
	dirA := t.TempDir()
	a, _ := ts.mustOpen(dirA, "A")
	a.Put("a", "1")
	a.Synced(bg)
	a.Put("mine", "lost")
	a.Close() // A stops with "mine" pending
	b, _ := ts.mustOpen(t.TempDir(), "B")
	b.Put("x", "9")
	if err := b.Synced(bg); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dirA, "log.tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	c, _ := ts.client()
	if db, err := Open(bg, dirA, Options{Stream: c, Manual: true}); err == nil || errors.Is(err, ErrReset) {
		if db != nil {
			db.Close()
		}
		t.Fatalf("open with a failing rewrite = %v, want an error, not a reset", err)
	}
	os.Remove(tmp)
	c, _ = ts.client()
	a2, err := Open(bg, dirA, Options{Stream: c, Manual: true})
	if err != nil {
		t.Fatalf("open after the failed recovery = %v", err)
	}
	if e := a2.Epoch(); e != 4 {
		t.Errorf("A's epoch %d, want 4: above B's 2 and its own failed claim of 3", e)
	}
	if err := a2.Synced(bg); err != nil {
		t.Errorf("Synced = %v", err)
	}
	if got := keys(ts.history()); got != "a=1 x=9" {
		t.Errorf("stream %q, want a=1 x=9", got)
	}
	// The local log says what memory says.
	a2.Put("y", "1")
	a2.Close()
	c, l := ts.client()
	l.setDown(true)
	a3, err := Open(bg, dirA, Options{Stream: c, Manual: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a3.Close()
	if got := keys(commitsOf(t, a3)); got != "a=1 x=9 y=1" {
		t.Errorf("A's reopened copy = %q, want a=1 x=9 y=1", got)
	}
}

// TestSynced checks that Synced returns only once the stream holds every
// earlier commit and a round trip begun after the call found the process
// still the owner. Reference: chapter "Owning a database through its stream", section
// "Synced: the one rule for callers".
func TestSynced(t *testing.T) {
	ts := newTestStream(t)
	a, l := ts.mustOpen(t.TempDir(), "A")
	a.Put("a", "1")
	a.Put("b", "2")
	if err := a.Synced(bg); err != nil {
		t.Fatal(err)
	}
	if got := keys(ts.history()); got != "a=1 b=2" || a.Acknowledged() != 2 {
		t.Fatalf("after Synced: stream %q, acknowledged %d", got, a.Acknowledged())
	}

	// Nothing pending: Synced still makes a round trip.
	before := l.requests()
	if err := a.Synced(bg); err != nil {
		t.Fatal(err)
	}
	if l.requests() != before+1 {
		t.Errorf("Synced with nothing pending sent %d requests, want 1", l.requests()-before)
	}

	// A lost answer: Synced fails, the retry is a duplicate, applied once.
	a.Put("c", "3")
	l.setFault(func(r *http.Request) (bool, bool) { return false, isAppend(r) })
	if err := a.Synced(bg); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("Synced with a lost answer = %v, want ErrUnreachable", err)
	}
	l.setFault(nil)
	if err := a.Synced(bg); err != nil {
		t.Fatal(err)
	}
	if got := keys(ts.history()); got != "a=1 b=2 c=3" {
		t.Errorf("stream %q, want c once", got)
	}

	// Partitioned: Synced fails without resetting; healed, it succeeds.
	a.Put("d", "4")
	l.setDown(true)
	if err := a.Synced(bg); !errors.Is(err, ErrUnreachable) || errors.Is(err, ErrReset) {
		t.Fatalf("Synced while partitioned = %v", err)
	}
	l.setDown(false)
	if err := a.Synced(bg); err != nil {
		t.Fatal(err)
	}

	// Taken over with nothing pending: the round trip finds out.
	ts.mustOpen(t.TempDir(), "B")
	if err := a.Synced(bg); !errors.Is(err, ErrFenced) {
		t.Fatalf("Synced after a takeover = %v, want ErrFenced", err)
	}
}

// TestFenced checks what the fenced process sees: a 403 epoch-closed resets
// the database; pending Synced calls fail; reset listeners run exactly once;
// every later operation, reads included, fails with ErrReset; an open
// snapshot keeps working; the process does not reopen by itself.
// Reference: chapter "Owning a database through its stream", section "How a replaced owner learns of
// it".
func TestFenced(t *testing.T) {
	ts := newTestStream(t)
	a, l := ts.mustOpen(t.TempDir(), "A")
	a.Put("k", "v1")
	if err := a.Synced(bg); err != nil {
		t.Fatal(err)
	}
	var calls1, calls2 atomic.Int32
	a.OnReset(func(err error) {
		if !errors.Is(err, ErrReset) {
			t.Errorf("listener got %v", err)
		}
		calls1.Add(1)
	})
	a.OnReset(func(error) { calls2.Add(1) })
	snap, err := a.Snapshot()
	if err != nil {
		t.Fatal(err)
	}

	ts.mustOpen(t.TempDir(), "B") // B takes over: epoch 2
	if err := a.Put("k", "v2"); err != nil {
		t.Fatalf("a local commit before A knows: %v", err)
	}
	// Hold A's append at the stream until two Synced calls are pending.
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	l.setFault(func(r *http.Request) (bool, bool) {
		if isAppend(r) {
			once.Do(func() { close(entered); <-release })
		}
		return false, false
	})
	errs := make(chan error, 2)
	go func() { errs <- a.Synced(bg) }()
	<-entered
	go func() { errs <- a.Synced(bg) }()
	time.Sleep(20 * time.Millisecond) // let the second call queue behind the first
	close(release)
	for i := 0; i < 2; i++ {
		err := <-errs
		var re *ResetError
		if !errors.Is(err, ErrReset) || !errors.Is(err, ErrFenced) || !errors.As(err, &re) {
			t.Fatalf("pending Synced = %v, want a fenced reset", err)
		}
		if re.Epoch != 1 || re.Current != 2 {
			t.Errorf("reset names epoch %d current %d, want 1 and 2", re.Epoch, re.Current)
		}
	}
	if calls1.Load() != 1 || calls2.Load() != 1 {
		t.Errorf("listeners ran %d and %d times, want once each", calls1.Load(), calls2.Load())
	}
	if _, _, err := a.Get("k"); !errors.Is(err, ErrReset) {
		t.Errorf("Get after reset = %v, want ErrReset", err)
	}
	if err := a.Put("k", "v3"); !errors.Is(err, ErrReset) {
		t.Errorf("Put after reset = %v", err)
	}
	if _, err := a.Snapshot(); !errors.Is(err, ErrReset) {
		t.Errorf("Snapshot after reset = %v", err)
	}
	if v, ok := snap.Get("k"); !ok || v != "v1" {
		t.Errorf("open snapshot reads k = %q, %v; want v1", v, ok)
	}
	// It does not reopen by itself: nothing more reaches the stream.
	sent := l.requests()
	a.Synced(bg)
	a.Push(bg)
	if l.requests() != sent {
		t.Errorf("a reset DB sent %d more requests", l.requests()-sent)
	}
	if e, _ := ts.producer(); e != 2 {
		t.Errorf("stream's epoch = %d, want B's 2", e)
	}
	a.OnReset(func(error) { calls1.Add(1) }) // registered late: runs now, once
	if calls1.Load() != 2 {
		t.Errorf("late listener did not run")
	}
	if got := keys(ts.history()); got != "k=v1" {
		t.Errorf("stream %q: the fenced append was applied", got)
	}
}

// TestClosedStreamIsNoClaim checks what an owner does when its stream was
// closed behind its back. The stream answers every append, a fenced one
// included, with 409 and Stream-Closed, so the 409 is not read as a
// forgotten producer: Synced and Push fail naming the closed stream, no
// claim is sent, and the database does not reset (nobody else owns it).
// Reference: PROTOCOL.md 5.2 "Error Precedence"; chapter "The epoch-fenced
// stream", section "Where the fence is checked".
func TestClosedStreamIsNoClaim(t *testing.T) {
	for _, fenced := range []bool{false, true} {
		t.Run(fmt.Sprintf("fenced=%v", fenced), func(t *testing.T) {
			ts := newTestStream(t)
			a, l := ts.mustOpen(t.TempDir(), "A")
			a.Put("k", "v1")
			if err := a.Synced(bg); err != nil {
				t.Fatal(err)
			}
			if fenced {
				ts.mustOpen(t.TempDir(), "B") // B takes over: epoch 2
			}
			if r := ts.m.ApplyCommand(closeBehind); r.Err() != nil {
				t.Fatal(r.Err())
			}
			var claims atomic.Int32
			l.setFault(func(r *http.Request) (bool, bool) {
				if isClaim(r) {
					claims.Add(1)
				}
				return false, false
			})
			for _, call := range []struct {
				name string
				f    func() error
			}{
				{"Synced with nothing pending", func() error { return a.Synced(bg) }},
				{"Synced with a commit pending", func() error { a.Put("k", "v2"); return a.Synced(bg) }},
				{"Push", func() error { return a.Push(bg) }},
			} {
				err := call.f()
				if err == nil || errors.Is(err, ErrReset) || !strings.Contains(err.Error(), "closed") {
					t.Errorf("%s = %v, want an error naming the closed stream, no reset", call.name, err)
				}
			}
			if n := claims.Load(); n != 0 {
				t.Errorf("sent %d claims to a closed stream, want 0", n)
			}
			if got := keys(ts.history()); got != "k=v1" {
				t.Errorf("stream holds %q, want only k=v1", got)
			}
		})
	}
}

// TestClaimsNobodyAskedFor checks the claims the package makes unprompted:
// when the stream has dropped the producer's state, after a 413, and when an
// offline open reaches the stream. Each is one epoch above the process's own,
// so any newer owner beats it, and the offline one is made only when no
// other copy wrote or claimed in the meantime.
// Reference: chapter "Owning a database through its stream", section "Claims the package makes on its
// own".
func TestClaimsNobodyAskedFor(t *testing.T) {
	claimsOf := func(evs *[]Event) func(Event) {
		return func(e Event) {
			if e.Kind == "claim" || e.Kind == "reset" {
				*evs = append(*evs, e)
			}
		}
	}

	t.Run("the stream forgot the producer", func(t *testing.T) {
		ts := newTestStream(t)
		var evs []Event
		a, _, err := ts.open(t.TempDir(), "A", claimsOf(&evs))
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		a.Put("a", "1")
		if err := a.Synced(bg); err != nil {
			t.Fatal(err)
		}
		ts.forgetProducer()
		a.Put("b", "2")
		if err := a.Synced(bg); err != nil {
			t.Fatal(err)
		}
		if len(evs) != 2 || evs[1].Reason != "forgotten" || evs[1].Epoch != 2 {
			t.Errorf("claims = %+v, want open at 1 then forgotten at 2", evs)
		}
		if got := keys(ts.history()); got != "a=1 b=2" {
			t.Errorf("stream %q", got)
		}
	})

	t.Run("forgotten, and the claim's answer lost", func(t *testing.T) {
		ts := newTestStream(t)
		var evs []Event
		a, l, err := ts.open(t.TempDir(), "A", claimsOf(&evs))
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		a.Put("a", "1")
		a.Synced(bg)
		ts.forgetProducer()
		l.setFault(func(r *http.Request) (bool, bool) { return false, isClaim(r) })
		a.Put("b", "2")
		if err := a.Synced(bg); !errors.Is(err, ErrUnreachable) {
			t.Fatalf("Synced = %v, want ErrUnreachable", err)
		}
		l.setFault(nil)
		if err := a.Synced(bg); err != nil {
			t.Fatalf("Synced after the lost claim answer = %v: the process fenced itself", err)
		}
		if e, _ := ts.producer(); e != 3 || a.Epoch() != 3 {
			t.Errorf("epoch %d (A's %d), want 3: the claim of 2 applied, then going live claimed 3", e, a.Epoch())
		}
		if got := keys(ts.history()); got != "a=1 b=2" {
			t.Errorf("stream %q", got)
		}
	})

	t.Run("forgotten twice, another owner wrote in between", func(t *testing.T) {
		// With the producer forgotten, B's claim of epoch 2 applies though
		// it fences nothing. Before its claim nobody asked for, A reads the
		// stream, finds B's claim and commit after its own last claim, and
		// resets as fenced: a claim of its own epoch + 1 would also be 2,
		// next to B's.
		ts := newTestStream(t)
		a, _ := ts.mustOpen(t.TempDir(), "A")
		a.Put("a", "1")
		a.Synced(bg)
		a.Put("mine", "lost")
		ts.forgetProducer()
		b, _ := ts.mustOpen(t.TempDir(), "B")
		b.Put("x", "9")
		if err := b.Synced(bg); err != nil {
			t.Fatal(err)
		}
		ts.forgetProducer()
		if err := a.Synced(bg); !errors.Is(err, ErrFenced) {
			t.Fatalf("Synced = %v, want ErrFenced", err)
		}
		if got := keys(ts.history()); got != "a=1 x=9" {
			t.Errorf("stream %q", got)
		}
	})

	t.Run("forgotten, and a newer owner came first", func(t *testing.T) {
		ts := newTestStream(t)
		var evs []Event
		a, _, err := ts.open(t.TempDir(), "A", claimsOf(&evs))
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		a.Put("a", "1")
		a.Synced(bg)
		ts.forgetProducer()
		opened := false
		ts.setFront(func(w http.ResponseWriter, r *http.Request) bool {
			if isClaim(r) && !opened {
				opened = true
				ts.setFront(nil)
				ts.mustOpen(t.TempDir(), "B") // B claims epoch 2 just before A
			}
			return false
		})
		a.Put("b", "2")
		if err := a.Synced(bg); !errors.Is(err, ErrFenced) {
			t.Fatalf("Synced = %v, want ErrFenced", err)
		}
		if e, _ := ts.producer(); e != 2 || !opened {
			t.Errorf("epoch %d, want B's 2", e)
		}
		if got := keys(ts.history()); got != "a=1" {
			t.Errorf("stream %q", got)
		}
	})

	t.Run("the stream lowered its request limit", func(t *testing.T) {
		ts := newTestStream(t)
		var evs []Event
		var sizes []int
		a, _, err := ts.open(t.TempDir(), "A", claimsOf(&evs))
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		const limit = 200 // the smaller request limit a proxy now enforces
		ts.setFront(func(w http.ResponseWriter, r *http.Request) bool {
			if isAppend(r) && r.ContentLength > limit {
				http.Error(w, "too large", http.StatusRequestEntityTooLarge)
				return true
			}
			if isAppend(r) && !isClaim(r) {
				sizes = append(sizes, int(r.ContentLength))
			}
			return false
		})
		for i := range 4 {
			a.Put(fmt.Sprint("k", i), strings.Repeat("v", 40))
		}
		if err := a.Synced(bg); err != nil {
			t.Fatal(err)
		}
		if len(evs) != 2 || evs[1].Reason != "limit" || evs[1].Epoch != 2 {
			t.Errorf("claims = %+v, want a limit claim at 2", evs)
		}
		if len(sizes) != 2 {
			t.Errorf("appends of %v bytes, want two smaller batches", sizes)
		}
		if got := len(ts.history()); got != 4 {
			t.Errorf("stream holds %d commits, want 4", got)
		}
	})

	t.Run("an offline open goes live", func(t *testing.T) {
		ts := newTestStream(t)
		dir := t.TempDir()
		a, _ := ts.mustOpen(dir, "A")
		a.Put("a", "1")
		a.Synced(bg)
		a.Close()
		c, l := ts.client()
		l.setDown(true)
		var evs []Event
		a2, err := Open(bg, dir, Options{Stream: c, Manual: true, Trace: claimsOf(&evs)})
		if err != nil {
			t.Fatal(err)
		}
		defer a2.Close()
		if a2.Live() {
			t.Fatal("an unreachable open is live")
		}
		a2.Put("b", "2")
		if v, _, err := a2.Get("a"); err != nil || v != "1" {
			t.Errorf("offline read a = %q, %v", v, err)
		}
		l.setDown(false)
		if err := a2.Synced(bg); err != nil {
			t.Fatal(err)
		}
		if len(evs) != 1 || evs[0].Reason != "live" || evs[0].Epoch != 2 {
			t.Errorf("claims = %+v, want one live claim at 2", evs)
		}
		if got := keys(ts.history()); got != "a=1 b=2" {
			t.Errorf("stream %q", got)
		}
	})

	t.Run("back from a partition, an owner opened meanwhile", func(t *testing.T) {
		for _, wrote := range []bool{true, false} {
			ts := newTestStream(t)
			dir := t.TempDir()
			a, _ := ts.mustOpen(dir, "A")
			a.Put("a", "1")
			a.Synced(bg)
			a.Close()
			c, l := ts.client()
			l.setDown(true)
			a2, err := Open(bg, dir, Options{Stream: c, Manual: true})
			if err != nil {
				t.Fatal(err)
			}
			a2.Put("lost", "x")
			b, _ := ts.mustOpen(t.TempDir(), "B") // claims epoch 2
			if wrote {
				b.Put("b", "2")
				b.Synced(bg)
			}
			l.setDown(false)
			if err := a2.Synced(bg); !errors.Is(err, ErrFenced) {
				t.Fatalf("Synced back from the partition = %v, want ErrFenced", err)
			}
			if e, _ := ts.producer(); e != 2 {
				t.Errorf("A claimed: the stream's epoch is %d, want B's 2", e)
			}
			if err := b.Synced(bg); err != nil {
				t.Errorf("B is no longer the owner: %v", err)
			}
			a2.Close()
		}
	})

	t.Run("back from a partition, an owner opens during the check", func(t *testing.T) {
		// A's open reaches the stream but its claim of epoch 2 is lost on
		// the way, so A opens offline having written claim 2 in its own log
		// only. When A goes live, its read finds nobody else; B then opens
		// and claims 2, the epoch after the stream's 1, before A's claim
		// arrives. A's claim must lose to B: it is one above the epoch A
		// owns, not one above the claim that never reached the stream.
		ts := newTestStream(t)
		dir := t.TempDir()
		a, _ := ts.mustOpen(dir, "A")
		a.Put("a", "1")
		if err := a.Synced(bg); err != nil {
			t.Fatal(err)
		}
		a.Close()
		c, l := ts.client()
		l.setFault(func(r *http.Request) (bool, bool) { return isClaim(r), false })
		a2, err := Open(bg, dir, Options{Stream: c, Manual: true})
		if err != nil {
			t.Fatal(err)
		}
		defer a2.Close()
		if a2.Live() {
			t.Fatal("A is live after its claim was lost")
		}
		var b *DB
		l.setFault(func(r *http.Request) (bool, bool) {
			if isClaim(r) && b == nil {
				b, _ = ts.mustOpen(t.TempDir(), "B") // after A's read, before A's claim
			}
			return false, false
		})
		if err := a2.Synced(bg); !errors.Is(err, ErrFenced) {
			t.Errorf("Synced of A back from the partition = %v, want ErrFenced", err)
		}
		if b == nil {
			t.Fatal("B never opened")
		}
		if e, _ := ts.producer(); e != 2 {
			t.Errorf("the stream's epoch is %d, want B's 2: A took over from B", e)
		}
		if err := b.Synced(bg); err != nil {
			t.Errorf("B is no longer the owner: %v", err)
		}
	})
}

// forgetProducer makes the stream forget the database's producer, as a
// stream does with a producer idle for too long.
func (ts *testStream) forgetProducer() {
	ts.t.Helper()
	// The stream's own expiry: an OpSweep a week after the last append (the
	// test server's clock stands still) forgets every producer idle for the
	// protocol's recommended 7 days, as streamd's leader does.
	const week = int64(7 * 24 * time.Hour)
	r := ts.m.ApplyCommand(stream.Command{Op: stream.OpSweep, Now: time.Unix(1e9, 0).UnixNano() + week, ProducerTTL: week})
	if r.Outcome != stream.Swept || !strings.Contains(r.Message, " 1 idle producers") {
		ts.t.Fatalf("sweep: %+v, want the one producer forgotten", r)
	}
}

// TestANewHistory checks the answer to 412 (stale incarnation): when the new
// history still has all of the copy's acknowledged commits, the copy adopts
// the new token; when one is missing, the copy moves into salvage/ and the
// database resets. Reference: chapter "Owning a database through its stream", section "When the stream rewrites its
// history".
func TestANewHistory(t *testing.T) {
	reincarnate := func(ts *testStream) {
		if r := ts.m.ApplyCommand(stream.Command{Op: stream.OpReincarnate, Stream: "db"}); r.Outcome != stream.Reincarnated {
			t.Fatalf("reincarnate: %s", r.Outcome)
		}
	}
	t.Run("the stream kept every acknowledged commit", func(t *testing.T) {
		ts := newTestStream(t)
		dir := t.TempDir()
		a, _ := ts.mustOpen(dir, "A")
		a.Put("a", "1")
		a.Synced(bg)
		reincarnate(ts)
		var evs []Event
		a.opts.Trace = func(e Event) { evs = append(evs, e) }
		a.Put("b", "2")
		if err := a.Synced(bg); err != nil {
			t.Fatal(err)
		}
		if len(evs) < 2 || evs[0].Result.Status != 412 || evs[1].Kind != "new-history" {
			t.Errorf("events = %+v, want a 412 then a new history", evs)
		}
		if got := keys(ts.history()); got != "a=1 b=2" {
			t.Errorf("stream %q", got)
		}
		if _, err := os.Stat(filepath.Join(dir, "salvage")); err == nil {
			t.Error("salvage/ made for a history that kept everything")
		}
	})
	t.Run("a copy that opened offline follows the token too", func(t *testing.T) {
		// A fresh copy opened while the stream was unreachable learns the
		// stream's incarnation when it goes live; without it, its appends
		// carry no token and a restore of the stream would go unnoticed.
		ts := newTestStream(t)
		c, l := ts.client()
		l.setDown(true)
		var evs []Event
		a, err := Open(bg, t.TempDir(), Options{Stream: c, ID: "A", Manual: true, Trace: func(e Event) { evs = append(evs, e) }})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		a.Put("a", "1")
		l.setDown(false)
		if err := a.Synced(bg); err != nil {
			t.Fatal(err)
		}
		var tokens []string
		ts.setFront(func(w http.ResponseWriter, r *http.Request) bool {
			if isAppend(r) {
				tokens = append(tokens, r.Header.Get(HeaderIncarnation))
			}
			return false
		})
		reincarnate(ts)
		a.Put("b", "2")
		evs = nil
		if err := a.Synced(bg); err != nil {
			t.Fatal(err)
		}
		if len(tokens) == 0 || tokens[0] == "" {
			t.Errorf("appends carried incarnation tokens %q, want one on each", tokens)
		}
		if len(evs) < 2 || evs[0].Result.Status != 412 || evs[1].Kind != "new-history" {
			t.Errorf("events = %+v, want a 412 then a new history", evs)
		}
		if got := keys(ts.history()); got != "a=1 b=2" {
			t.Errorf("stream %q", got)
		}
	})
	t.Run("a new history, then going live", func(t *testing.T) {
		// After a 412 the copy no longer knows an offset in the new
		// history, so going live later reads it from the start, past B's
		// old records. Those came before A's own claim: nobody wrote
		// since, and going live must not fence A.
		ts := newTestStream(t)
		b, _ := ts.mustOpen(t.TempDir(), "B")
		b.Put("b", "1")
		b.Synced(bg)
		b.Close()
		a, l := ts.mustOpen(t.TempDir(), "A")
		a.Put("a", "1")
		if err := a.Synced(bg); err != nil {
			t.Fatal(err)
		}
		// When the stream rewrites its history; the stream also forgot A, and the answer to A's
		// claim is lost: A must go live before it writes again.
		reincarnate(ts)
		ts.forgetProducer()
		l.setFault(func(r *http.Request) (bool, bool) { return false, isClaim(r) })
		a.Put("a", "2")
		if err := a.Synced(bg); !errors.Is(err, ErrUnreachable) {
			t.Fatalf("Synced with the claim's answer lost = %v, want ErrUnreachable", err)
		}
		l.setFault(nil)
		if err := a.Synced(bg); err != nil {
			t.Fatalf("Synced going live = %v, want nil: only A wrote since its claim", err)
		}
		if got := keys(ts.history()); got != "b=1 a=1 a=2" {
			t.Errorf("stream %q", got)
		}
	})
	t.Run("a copy offline while the stream lost acknowledged commits", func(t *testing.T) {
		// The stream is restored from an older backup while A is offline:
		// the offset A was acknowledged up to is past the new end. Going
		// live must find the new history and salvage the copy, not fail
		// on every Synced with a read of an offset that no longer exists.
		ts := newTestStream(t)
		dir := t.TempDir()
		a, _ := ts.mustOpen(dir, "A")
		a.Put("a", "1")
		a.Synced(bg)
		old, _ := ts.m.Snapshot()
		a.Put("b", "2")
		a.Synced(bg)
		a.Close()
		ts.m.Restore(old)
		reincarnate(ts)
		c, l := ts.client()
		l.setDown(true)
		a2, err := Open(bg, dir, Options{Stream: c, Manual: true})
		if err != nil {
			t.Fatal(err)
		}
		defer a2.Close()
		l.setDown(false)
		err = a2.Synced(bg)
		var re *ResetError
		if !errors.As(err, &re) || re.Kind != ResetNewHistory {
			t.Fatalf("Synced going live = %v, want a new-history reset", err)
		}
		if _, err := os.Stat(filepath.Join(dir, "salvage", "1", "log")); err != nil {
			t.Errorf("the copy was not moved to salvage/1: %v", err)
		}
	})

	t.Run("a copy offline while the stream took a new history", func(t *testing.T) {
		// The same, but the new history kept every commit A saw
		// acknowledged: A carries on under the new token.
		ts := newTestStream(t)
		dir := t.TempDir()
		a, _ := ts.mustOpen(dir, "A")
		a.Put("a", "1")
		a.Synced(bg)
		a.Close()
		reincarnate(ts)
		c, l := ts.client()
		l.setDown(true)
		a2, err := Open(bg, dir, Options{Stream: c, Manual: true})
		if err != nil {
			t.Fatal(err)
		}
		defer a2.Close()
		a2.Put("b", "2")
		l.setDown(false)
		if err := a2.Synced(bg); err != nil {
			t.Fatalf("Synced going live = %v", err)
		}
		if got := keys(ts.history()); got != "a=1 b=2" {
			t.Errorf("stream %q", got)
		}
	})

	t.Run("a stream that keeps changing its history", func(t *testing.T) {
		// Every append meets a new incarnation: Synced gives up with an
		// error instead of reading the stream again forever.
		ts := newTestStream(t)
		a, _ := ts.mustOpen(t.TempDir(), "A")
		a.Put("a", "1")
		ts.setFront(func(w http.ResponseWriter, r *http.Request) bool {
			if isAppend(r) {
				reincarnate(ts)
			}
			return false
		})
		done := make(chan error, 1)
		go func() { done <- a.Synced(bg) }()
		select {
		case err := <-done:
			if err == nil || errors.Is(err, ErrReset) {
				t.Errorf("Synced = %v, want an error that is no reset", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Synced never returned")
		}
	})

	t.Run("the stream lost acknowledged commits", func(t *testing.T) {
		ts := newTestStream(t)
		dir := t.TempDir()
		a, _ := ts.mustOpen(dir, "A")
		a.Put("a", "1")
		a.Synced(bg)
		old, _ := ts.m.Snapshot()
		a.Put("b", "2")
		a.Put("c", "3")
		a.Synced(bg)
		ts.m.Restore(old) // restored from an older backup
		reincarnate(ts)
		resets := 0
		a.OnReset(func(error) { resets++ })
		a.Put("d", "4")
		err := a.Synced(bg)
		var re *ResetError
		if !errors.As(err, &re) || !errors.Is(err, ErrReset) || errors.Is(err, ErrFenced) || re.Kind != ResetNewHistory {
			t.Fatalf("Synced = %v, want a new-history reset", err)
		}
		if resets != 1 {
			t.Errorf("listeners ran %d times", resets)
		}
		saved, err := os.ReadFile(filepath.Join(dir, "salvage", "1", "log"))
		if err != nil || !strings.Contains(string(saved), `"k":"c"`) || !strings.Contains(string(saved), `"k":"d"`) {
			t.Errorf("salvage/1/log = %q, %v; want the copy with c and d", saved, err)
		}
		if _, _, err := a.Get("a"); !errors.Is(err, ErrReset) {
			t.Errorf("Get = %v, want ErrReset", err)
		}
		// Opening again by name rebuilds from the new history.
		a.Close()
		a2, _ := ts.mustOpen(dir, "A2")
		if got := keys(commitsOf(t, a2)); got != "a=1" {
			t.Errorf("reopened copy = %q, want the stream's a=1", got)
		}
	})
}

// TestCopiesOfACache documents what a copied cache directory does: it
// carries its owner's writer id and claims, so opening the copy elsewhere
// claims above the original and fences it; the supported way is to open the
// database by name into a fresh directory, which rebuilds it from the stream.
// Reference: chapter "Owning a database through its stream", section "Copies of a cache".
func TestCopiesOfACache(t *testing.T) {
	ts := newTestStream(t)
	dirA := t.TempDir()
	a, _ := ts.mustOpen(dirA, "A")
	a.Put("a", "1")
	if err := a.Synced(bg); err != nil {
		t.Fatal(err)
	}

	dirC := t.TempDir() // another host gets a copy of A's live directory
	for _, name := range []string{"id", "log"} {
		b, err := os.ReadFile(filepath.Join(dirA, name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dirC, name), b, 0o644)
	}
	c, _ := ts.mustOpen(dirC, "ignored")
	if c.id != "A" || c.Epoch() != 2 {
		t.Errorf("the copy writes as %q at epoch %d, want A's id at epoch 2", c.id, c.Epoch())
	}
	a.Put("a", "2")
	if err := a.Synced(bg); !errors.Is(err, ErrFenced) {
		t.Errorf("the original after its copy opened: %v, want ErrFenced", err)
	}
	c.Put("c", "3")
	if err := c.Synced(bg); err != nil {
		t.Fatal(err)
	}

	// The supported way: open by name into a fresh directory.
	d, _ := ts.mustOpen(t.TempDir(), "D")
	if got := keys(commitsOf(t, d)); got != "a=1 c=3" {
		t.Errorf("opened by name: %q, want the stream's a=1 c=3", got)
	}
	if d.Epoch() != 3 {
		t.Errorf("D's epoch = %d, want 3", d.Epoch())
	}
	if err := c.Synced(bg); !errors.Is(err, ErrFenced) {
		t.Errorf("the copy after D opened: %v, want ErrFenced", err)
	}
}

// TestBackgroundReplicator checks that without Options.Manual commits reach
// the stream with no Synced call, that Synced still works beside it, and
// that it waits out a partition until its context ends.
func TestBackgroundReplicator(t *testing.T) {
	ts := newTestStream(t)
	c, l := ts.client()
	db, err := Open(bg, t.TempDir(), Options{Stream: c, ID: "A", RetryInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range 10 {
		db.Put(fmt.Sprint("k", i), "v")
	}
	deadline := time.Now().Add(10 * time.Second)
	for db.Acknowledged() < 10 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if db.Acknowledged() != 10 || len(ts.history()) != 10 {
		t.Fatalf("background replicator: %d acknowledged, stream holds %d", db.Acknowledged(), len(ts.history()))
	}
	db.Put("last", "v")
	if err := db.Synced(bg); err != nil {
		t.Fatal(err)
	}
	if len(ts.history()) != 11 {
		t.Errorf("stream holds %d commits, want 11", len(ts.history()))
	}

	// Partitioned, Synced waits for the stream instead of failing.
	l.setDown(true)
	db.Put("during", "partition")
	done := make(chan error, 1)
	go func() { done <- db.Synced(bg) }()
	time.Sleep(20 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("Synced returned %v while the stream was unreachable", err)
	default:
	}
	l.setDown(false)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(ts.history()) != 12 {
		t.Errorf("stream holds %d commits, want 12", len(ts.history()))
	}
	ctx, cancel := context.WithTimeout(bg, 20*time.Millisecond)
	defer cancel()
	l.setDown(true)
	if err := db.Synced(ctx); !errors.Is(err, ErrUnreachable) {
		t.Errorf("Synced with a deadline while partitioned = %v, want ErrUnreachable", err)
	}
}

// TestResetListenersMayUseTheDB checks that a reset listener may call the
// database it listens to, Close included (the usual reaction to being
// fenced), whether the reset was found by a Synced call or by the background
// replicator, and that the listener still runs exactly once.
// Reference: chapter "Owning a database through its stream", section "How a replaced owner learns of
// it".
func TestResetListenersMayUseTheDB(t *testing.T) {
	for _, manual := range []bool{true, false} {
		t.Run(fmt.Sprintf("manual=%v", manual), func(t *testing.T) {
			ts := newTestStream(t)
			c, _ := ts.client()
			a, err := Open(bg, t.TempDir(), Options{Stream: c, ID: "A", Manual: manual, RetryInterval: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			a.Put("k", "v1")
			if err := a.Synced(bg); err != nil {
				t.Fatal(err)
			}
			var calls atomic.Int32
			closed := make(chan error, 2)
			a.OnReset(func(error) {
				calls.Add(1)
				a.Push(bg)
				closed <- a.Close()
			})
			ts.mustOpen(t.TempDir(), "B")
			a.Put("k", "v2")
			go a.Synced(bg)
			select {
			case err := <-closed:
				if err != nil {
					t.Errorf("Close from the listener = %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("a listener that closes the database never returned: deadlock")
			}
			if _, _, err := a.Get("k"); !errors.Is(err, ErrReset) {
				t.Errorf("Get after the reset = %v, want ErrReset", err)
			}
			time.Sleep(10 * time.Millisecond)
			if n := calls.Load(); n != 1 {
				t.Errorf("listener ran %d times, want 1", n)
			}
		})
	}
}

// TestLocalLogDurability checks the local log's crash safety: a new
// database's directory entries (its folder, its id and log files) are
// fsynced in their parent directories, so a crash cannot remove a log whose
// commits were fsynced; a log rewritten by a recovery and a copy moved to
// salvage/ have their directories fsynced after the rename; a torn final
// record, left by a crash during an append, is cut off, and appends go on
// from a clean line; a damaged record that is not the last is an error
// naming the file and the record.
func TestLocalLogDurability(t *testing.T) {
	var mu sync.Mutex
	var synced []string // "dir: entries" at each directory fsync
	real := syncDir
	syncDir = func(dir string) error {
		ents, _ := os.ReadDir(dir)
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		mu.Lock()
		synced = append(synced, dir+": "+strings.Join(names, " "))
		mu.Unlock()
		return real(dir)
	}
	t.Cleanup(func() { syncDir = real })
	sawSync := func(dir string, names ...string) bool {
		mu.Lock()
		defer mu.Unlock()
		for _, s := range synced {
			d, ents, _ := strings.Cut(s, ": ")
			if d != dir {
				continue
			}
			all := true
			for _, n := range names {
				all = all && strings.Contains(" "+ents+" ", " "+n+" ")
			}
			if all {
				return true
			}
		}
		return false
	}

	t.Run("a new database", func(t *testing.T) {
		ts := newTestStream(t)
		parent := t.TempDir()
		dir := filepath.Join(parent, "db")
		a, _ := ts.mustOpen(dir, "A")
		a.Put("a", "1")
		if !sawSync(parent, "db") {
			t.Errorf("%s not fsynced after db/ was made: %q", parent, synced)
		}
		if !sawSync(dir, "id", "log") {
			t.Errorf("%s not fsynced with id and log in it: %q", dir, synced)
		}
	})

	t.Run("a rewritten log", func(t *testing.T) {
		ts := newTestStream(t)
		dirA := t.TempDir()
		a, _ := ts.mustOpen(dirA, "A")
		a.Put("a", "1")
		a.Synced(bg)
		a.Put("b", "2")
		a.Close()
		b, _ := ts.mustOpen(t.TempDir(), "B")
		b.Put("x", "9")
		b.Synced(bg)
		mu.Lock()
		synced = nil
		mu.Unlock()
		ts.mustOpen(dirA, "A") // discards b: the log is rewritten
		if !sawSync(dirA, "log") {
			t.Errorf("%s not fsynced after the rewrite: %q", dirA, synced)
		}
	})

	t.Run("a copy moved to salvage", func(t *testing.T) {
		ts := newTestStream(t)
		dir := t.TempDir()
		a, _ := ts.mustOpen(dir, "A")
		a.Put("a", "1")
		a.Synced(bg)
		old, _ := ts.m.Snapshot()
		a.Put("b", "2")
		a.Synced(bg)
		ts.m.Restore(old)
		ts.m.ApplyCommand(stream.Command{Op: stream.OpReincarnate, Stream: "db"})
		if err := a.Synced(bg); !errors.Is(err, ErrReset) {
			t.Fatalf("Synced = %v, want a new-history reset", err)
		}
		salvage := filepath.Join(dir, "salvage")
		if !sawSync(dir, "salvage") || !sawSync(salvage, "1") || !sawSync(filepath.Join(salvage, "1"), "id", "log") {
			t.Errorf("salvage/1 and its parents not all fsynced: %q", synced)
		}
	})

	t.Run("a torn final record", func(t *testing.T) {
		ts := newTestStream(t)
		dir := t.TempDir()
		a, _ := ts.mustOpen(dir, "A")
		a.Put("a", "1")
		a.Put("b", "2")
		a.Close()
		path := filepath.Join(dir, "log")
		whole, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// The crash tore the append of commit 3 after 10 bytes.
		torn := append(whole, encode(record{T: "commit", I: 3, W: "A", K: "c", V: "3"})[:10]...)
		os.WriteFile(path, torn, 0o644)
		a2, _ := ts.mustOpen(dir, "A")
		if got := keys(commitsOf(t, a2)); got != "a=1 b=2" {
			t.Errorf("after a torn append the copy holds %q, want a=1 b=2", got)
		}
		if err := a2.Put("c", "new"); err != nil {
			t.Fatal(err)
		}
		a2.Close()
		a3, _ := ts.mustOpen(dir, "A")
		if got := keys(commitsOf(t, a3)); got != "a=1 b=2 c=new" {
			t.Errorf("after reopening, the copy holds %q, want a=1 b=2 c=new", got)
		}
		a3.Close()

		// Damage that is not at the end is no torn append: the open fails.
		data, _ := os.ReadFile(path)
		lines := strings.SplitAfter(string(data), "\n")
		lines[1] = "{garbage\n"
		os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644)
		c, _ := ts.client()
		if _, err := Open(bg, dir, Options{Stream: c, Manual: true}); err == nil ||
			!strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "record 2") {
			t.Errorf("open of a damaged log = %v, want an error naming %s and record 2", err, path)
		}
	})
}

// TestOneOpenPerDirectory checks that a directory is opened by one DB at a
// time: a second Open of it (a second instance of the same service on the
// same disk) fails with ErrInUse and changes nothing, instead of writing a
// second history of commits into the same local log. After Close the
// directory opens again.
func TestOneOpenPerDirectory(t *testing.T) {
	ts := newTestStream(t)
	dir := t.TempDir()
	a, _ := ts.mustOpen(dir, "A")
	a.Put("a", "1")
	if err := a.Synced(bg); err != nil {
		t.Fatal(err)
	}
	_, l, err := ts.open(dir, "A", nil)
	if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("second open of %s = %v, want ErrInUse naming the directory", dir, err)
	}
	if e, _ := ts.producer(); e != 1 || l.requests() != 0 {
		t.Errorf("the refused open sent %d requests; the stream's epoch is %d", l.requests(), e)
	}
	a.Put("b", "2")
	if err := a.Synced(bg); err != nil {
		t.Errorf("the first open after the refused one: %v", err)
	}
	a.Close()
	a2, _ := ts.mustOpen(dir, "A")
	if got := keys(commitsOf(t, a2)); got != "a=1 b=2" {
		t.Errorf("reopened copy = %q, want a=1 b=2", got)
	}
}

// TestCloseStopsTheReplicator checks that Close cancels a request the
// background replicator has in flight, rather than waiting for the
// request's own timeout, and that the replicator has stopped when Close
// returns.
func TestCloseStopsTheReplicator(t *testing.T) {
	ts := newTestStream(t)
	c, l := ts.client()
	db, err := Open(bg, t.TempDir(), Options{Stream: c, ID: "A", RetryInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	inflight := make(chan struct{})
	ended := make(chan error, 1)
	l.setFault(func(r *http.Request) (bool, bool) {
		close(inflight)
		<-r.Context().Done() // the stream never answers
		ended <- r.Context().Err()
		return true, false
	})
	db.Put("a", "1") // the replicator sends it
	<-inflight
	closed := make(chan error, 1)
	go func() { closed <- db.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close waits for the replicator's request to time out")
	}
	select {
	case err := <-ended:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the replicator's request ended with %v, want context.Canceled", err)
		}
	default:
		t.Error("Close returned while the replicator's request was still in flight")
	}
}
