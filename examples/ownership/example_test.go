package ownership_test

import (
	"errors"
	"fmt"

	"github.com/ownership-book/ownership/examples/ownership"
)

// A handover from A to B with the pure transition functions.
func ExampleBeginTransfer() {
	var s ownership.State = ownership.Owned{Owner: "A", Epoch: 41}
	s, _ = ownership.BeginTransfer(s, "A", "B")
	fmt.Println(s, "A may mutate at 41:", ownership.MayMutate(s, "A", 41), "41 passes the fence:", ownership.ValidFence(s, 41))
	s, _ = ownership.CompleteRelease(s, "A")
	fmt.Println(s)
	s, _ = ownership.Acquire(s, "B")
	fmt.Println(s, "B may mutate at 42:", ownership.MayMutate(s, "B", 42))
	// Output:
	// Transferring(A, B, 41, 42) A may mutate at 41: false 41 passes the fence: false
	// Unowned(42, B)
	// Owned(B, 42) B may mutate at 42: true
}

// A refused transition returns a typed error and leaves the actor unchanged.
// Each request carries the epoch its sender saw; one overtaken by a later
// transition is refused as stale.
func ExampleActor_Apply() {
	a, _ := ownership.NewActor("doc", ownership.Owned{Owner: "A", Epoch: 41})
	_, err := a.Apply(ownership.Command{Op: ownership.OpCompleteRelease, Caller: "A", Epoch: 41})
	fmt.Println(err, errors.Is(err, ownership.ErrWrongState), a.State())
	tok, _ := a.Apply(ownership.Command{Op: ownership.OpRevoke, To: "B", Epoch: 41})
	fmt.Println(a.State(), tok == ownership.Token{})
	tok, _ = a.Apply(ownership.Command{Op: ownership.OpAcquire, Caller: "B", Epoch: 42})
	fmt.Println(a.State(), tok, a.Issued())
	_, err = a.Apply(ownership.Command{Op: ownership.OpRevoke, To: "C", Epoch: 41})
	fmt.Println(err, errors.Is(err, ownership.ErrStaleEpoch), a.State())
	// Output:
	// CompleteRelease: not allowed in Owned(A, 41) true Owned(A, 41)
	// Unowned(42, B) true
	// Owned(B, 42) Token(doc, 42, B) [Token(doc, 41, A) Token(doc, 42, B)]
	// epoch 41 is stale: the current epoch is 42 true Owned(B, 42)
}

// An abort burns an epoch: the abandoned epoch 42 fails the fence.
func ExampleAbort() {
	s, _ := ownership.Abort(ownership.Transferring{From: "A", To: "B", OldEpoch: 41, NewEpoch: 42})
	fmt.Println(s, ownership.Fence(s, 42))
	// Output:
	// Unowned(43, A) epoch 42 is stale: the current epoch is 43
}
