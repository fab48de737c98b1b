package service

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ownership-book/ownership/examples/ownership"
)

// A delayed write from the old owner arrives after a handover. The store
// that checks fences (Chubby's sequencer check) refuses it and keeps the
// new owner's value; the store that does not check accepts it and loses
// the new owner's write.
// Reference: Burrows, "The Chubby lock service for loosely-coupled
// distributed systems", OSDI 2006, section 2.4; chapter "The ownership
// service", section "A resource server that checks fences".
func TestResourceServerRefusesStaleToken(t *testing.T) {
	e := newLocalEnv(t)
	tokA := e.ownedBy("x", "A")
	ctx := ctxT(t)
	kv := e.client("kv")
	checked, unchecked := NewStore("x", kv), NewUncheckedStore()
	for _, s := range []*Store{checked, unchecked} {
		if err := s.Put(ctx, tokA, "greeting", "hello from A"); err != nil {
			t.Fatal(err)
		}
	}
	// Handover A -> B.
	a, b := e.client("A"), e.client("B")
	if _, err := a.BeginTransfer(ctx, "x", 1, "B"); err != nil {
		t.Fatal(err)
	}
	// From this moment A's token is stale, before B even owns the actor.
	err := checked.Put(ctx, tokA, "greeting", "early write from A")
	var fe *FencedError
	if !errors.As(err, &fe) || fe.Validity.Valid || fe.Validity.CurrentEpoch != 2 {
		t.Fatalf("A's write during the handover: %v; want refused at current epoch 2", err)
	}
	if _, err := a.CompleteRelease(ctx, "x", 1); err != nil {
		t.Fatal(err)
	}
	tokB, err := b.Acquire(ctx, "x", 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Store{checked, unchecked} {
		if err := s.Put(ctx, tokB, "greeting", "hello from B"); err != nil {
			t.Fatal(err)
		}
	}
	// A's write, delayed in the network, lands now.
	err = checked.Put(ctx, tokA, "greeting", "delayed write from A")
	if !errors.Is(err, ErrFenced) {
		t.Fatalf("checked store: delayed stale write: %v; want ErrFenced", err)
	}
	if got, _ := checked.Get("greeting"); got.Value != "hello from B" || got.Token != tokB {
		t.Fatalf("checked store holds %+v; want B's write", got)
	}
	if err := unchecked.Put(ctx, tokA, "greeting", "delayed write from A"); err != nil {
		t.Fatalf("unchecked store: %v", err)
	}
	if got, _ := unchecked.Get("greeting"); got.Value != "delayed write from A" {
		t.Fatalf("unchecked store holds %+v; want A's stale write (that is the hazard)", got)
	}
	// A token that was never issued (epoch current, wrong holder) is
	// refused even though its epoch passes ValidFence.
	forged := ownership.Token{Actor: "x", Epoch: 2, Holder: "C"}
	if err := checked.Put(ctx, forged, "greeting", "C"); !errors.Is(err, ErrFenced) {
		t.Fatalf("never-issued token: %v; want ErrFenced", err)
	}
}

// failingChecker cannot reach the ownership service.
type failingChecker struct{}

func (failingChecker) Validate(context.Context, ownership.Token) (Validity, error) {
	return Validity{}, errors.New("ownership service unreachable")
}

// When the fence check cannot be made the write is refused, never let
// through: the store fails closed.
func TestResourceServerFailsClosed(t *testing.T) {
	s := NewStore("x", failingChecker{})
	err := s.Put(context.Background(), ownership.Token{Actor: "x", Epoch: 1, Holder: "A"}, "k", "v")
	if err == nil {
		t.Fatal("write accepted without a fence check")
	}
	if _, ok := s.Get("k"); ok {
		t.Fatal("value stored although the check failed")
	}
}

// Concurrent writers with the old and the new owner's tokens: every write
// with the stale token is refused, so the new owner's value is the one left.
func TestResourceServerUnderConcurrentStaleWriters(t *testing.T) {
	e := newLocalEnv(t)
	tokA := e.ownedBy("x", "A")
	ctx := ctxT(t)
	store := NewStore("x", e.client("kv"))
	if _, err := e.client("A").BeginTransfer(ctx, "x", 1, "B"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client("A").CompleteRelease(ctx, "x", 1); err != nil {
		t.Fatal(err)
	}
	tokB, err := e.client("B").Acquire(ctx, "x", 2)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var refused atomic.Int64
	for i := 0; i < 20; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if errors.Is(store.Put(ctx, tokA, "k", "A"), ErrFenced) {
				refused.Add(1)
			}
		}()
		go func() { defer wg.Done(); store.Put(ctx, tokB, "k", "B") }()
	}
	wg.Wait()
	if refused.Load() != 20 {
		t.Fatalf("%d of 20 stale writes refused", refused.Load())
	}
	if got, _ := store.Get("k"); got.Value != "B" {
		t.Fatalf("store holds %+v; want only B's writes", got)
	}
}

// A store belongs to one actor. A token that is valid, but for another
// actor, confers no right to write it: C owns y, not x, and may not write
// x's store. Before the fix the store asked only whether the token was
// valid for its own actor, whichever that was, and took C's write.
// Reference: chapter "The ownership service", section "A resource server
// that checks fences".
func TestStoreRefusesTokenOfAnotherActor(t *testing.T) {
	e := newLocalEnv(t)
	tokA := e.ownedBy("x", "A")
	tokC := e.ownedBy("y", "C")
	ctx := ctxT(t)
	store := NewStore("x", e.client("kv"))
	if err := store.Put(ctx, tokA, "k", "A"); err != nil {
		t.Fatal(err)
	}
	err := store.Put(ctx, tokC, "k", "C, owner of y")
	var fe *FencedError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "actor y") {
		t.Fatalf("write to x's store with %v: %v; want ErrFenced naming actor y", tokC, err)
	}
	if got, _ := store.Get("k"); got.Token != tokA {
		t.Fatalf("store holds %+v; want A's write", got)
	}
	if got := NewUncheckedStore().Put(ctx, tokC, "k", "C"); got != nil {
		t.Fatalf("unchecked store: %v", got)
	}
}

// With every voter unreachable and a context without a deadline, the fence
// check gives up and the write is refused: the store fails closed and does
// not hang (holding its lock) while the client retries forever. Before the
// fix the client retried refused connections with no end.
func TestStoreFailsClosedWhenServiceUnreachable(t *testing.T) {
	t.Parallel()
	auth := newAuthority(t)
	dead := []string{freeAddr(t), freeAddr(t), freeAddr(t)} // nothing listens there
	store := NewStore("x", clientFor(t, auth, "kv", dead...))
	done := make(chan error, 1)
	go func() {
		done <- store.Put(context.Background(), ownership.Token{Actor: "x", Epoch: 1, Holder: "A"}, "k", "v")
	}()
	select {
	case err := <-done:
		if err == nil || !errors.Is(err, ErrUnavailable) {
			t.Fatalf("Put with the service unreachable: %v; want an error matching ErrUnavailable", err)
		}
		t.Logf("refused: %v", err)
	case <-time.After(3 * MaxRetryWait):
		t.Fatalf("Put still blocked after %v with the service unreachable", 3*MaxRetryWait)
	}
	if _, ok := store.Get("k"); ok {
		t.Fatal("value stored without a fence check")
	}
}
