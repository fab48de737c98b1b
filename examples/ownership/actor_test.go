package ownership

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func mustActor(t *testing.T, s State) *Actor {
	t.Helper()
	a, err := NewActor("x", s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// mustMarshal encodes a; a failed encoding fails the test, so two failed
// encodings can never compare equal as empty bytes.
func mustMarshal(t *testing.T, a *Actor) []byte {
	t.Helper()
	b, err := a.MarshalBinary()
	if err != nil || len(b) == 0 {
		t.Fatalf("MarshalBinary: %q, %v", b, err)
	}
	return b
}

// An actor created Owned has its owner's token; Acquire is the only
// transition that issues one, and issued tokens are never removed.
// Reference: chapter "One owner at a time", section "Tokens are
// things; authority is a fact about the record".
func TestActorHandoverIssuesTokens(t *testing.T) {
	a := mustActor(t, ownedA)
	tokA := Token{Actor: "x", Epoch: 41, Holder: "A"}
	if got := a.Issued(); !reflect.DeepEqual(got, []Token{tokA}) {
		t.Fatalf("Issued() = %v, want [%v]", got, tokA)
	}
	if !a.MayMutate(tokA) || a.Authorize(tokA) != nil {
		t.Fatalf("owner's token %v does not confer authority in %v", tokA, a.State())
	}
	if err := a.BeginTransfer("A", "B"); err != nil {
		t.Fatal(err)
	}
	if a.MayMutate(tokA) || a.ValidFence(tokA.Epoch) {
		t.Fatalf("A's token %v still has authority in %v", tokA, a.State())
	}
	var se *StaleEpochError
	if err := a.Authorize(tokA); !errors.As(err, &se) || se.Given != 41 || se.Current != 42 {
		t.Fatalf("Authorize(%v) = %v, want stale 41 < 42", tokA, err)
	}
	if err := a.CompleteRelease("A"); err != nil {
		t.Fatal(err)
	}
	tokB, err := a.Acquire("B")
	if err != nil {
		t.Fatal(err)
	}
	if want := (Token{Actor: "x", Epoch: 42, Holder: "B"}); tokB != want {
		t.Fatalf("Acquire issued %v, want %v", tokB, want)
	}
	if got := a.Issued(); !reflect.DeepEqual(got, []Token{tokA, tokB}) {
		t.Fatalf("Issued() = %v, want [%v %v]", got, tokA, tokB)
	}
	if !a.MayMutate(tokB) || a.MayMutate(tokA) {
		t.Fatalf("in %v: MayMutate(B's)=%v MayMutate(A's)=%v, want true, false", a.State(), a.MayMutate(tokB), a.MayMutate(tokA))
	}
	if !a.WasIssued(tokA) {
		t.Fatalf("A's stale token is no longer in the issued set")
	}
}

// A refused transition changes neither the state nor the issued set.
// Reference: chapter "One owner at a time", section "A handover,
// step by step".
func TestActorRefusalChangesNothing(t *testing.T) {
	a := mustActor(t, ownedA)
	before := mustMarshal(t, a)
	for _, c := range []Command{
		{Op: OpBeginTransfer, Caller: "B", To: "C", Epoch: 41},
		{Op: OpBeginTransfer, Caller: "A", To: "A", Epoch: 41},
		{Op: OpCompleteRelease, Caller: "A", Epoch: 41},
		{Op: OpAcquire, Caller: "A", Epoch: 41},
		{Op: OpAbort, Epoch: 41},
		{Op: OpRevoke, Epoch: 41},
		{Op: "Steal", Caller: "B", Epoch: 41},
		{Op: OpBeginTransfer, Caller: "A", To: "B", Epoch: 40},
		{Op: OpBeginTransfer, Caller: "A", To: "B", Epoch: 42},
		{Op: OpRevoke, To: "B", Epoch: 40},
	} {
		tok, err := a.Apply(c)
		if err == nil {
			t.Fatalf("%v succeeded in %v", c, a.State())
		}
		if tok != (Token{}) {
			t.Fatalf("refused %v returned token %v", c, tok)
		}
		after := mustMarshal(t, a)
		if string(after) != string(before) {
			t.Fatalf("refused %v changed the actor:\n%s\n%s", c, before, after)
		}
	}
	var ue *UnknownOpError
	if _, err := a.Apply(Command{Op: "Steal"}); !errors.As(err, &ue) || ue.Op != "Steal" {
		t.Fatalf("unknown op error = %v", err)
	}
}

// Authorize names why a token confers no authority.
// Old tokens stay around and do nothing; a token the actor never issued is
// refused, since no transition creates one outside Acquire.
// Reference: chapter "One owner at a time", section "Tokens are
// things; authority is a fact about the record".
func TestAuthorize(t *testing.T) {
	a := mustActor(t, ownedA)
	forged := Token{Actor: "x", Epoch: 41, Holder: "B"}
	if err := a.Authorize(forged); !errors.Is(err, ErrUnknownToken) {
		t.Errorf("Authorize(forged %v) = %v, want ErrUnknownToken", forged, err)
	}
	if a.MayMutate(forged) {
		t.Errorf("a forged token confers authority")
	}
	other := Token{Actor: "y", Epoch: 41, Holder: "A"}
	if err := a.Authorize(other); !errors.Is(err, ErrUnknownToken) || !strings.Contains(err.Error(), "Token(y, 41, A)") {
		t.Errorf("Authorize(%v) = %v, want ErrUnknownToken naming the token", other, err)
	}
	tokA := a.Issued()[0]
	if err := a.Revoke("A"); err != nil {
		t.Fatal(err)
	}
	if err := a.Authorize(tokA); !errors.Is(err, ErrStaleEpoch) {
		t.Errorf("after revoke, Authorize(%v) = %v, want ErrStaleEpoch", tokA, err)
	}
	tok2, err := a.Acquire("A")
	if err != nil || tok2.Epoch != 42 {
		t.Fatalf("re-acquire after revoke = %v, %v", tok2, err)
	}
	if err := a.Authorize(tokA); !errors.Is(err, ErrStaleEpoch) {
		t.Errorf("the same node's older token %v authorized after re-acquire: %v", tokA, err)
	}
	if err := a.Authorize(tok2); err != nil {
		t.Errorf("Authorize(%v) = %v", tok2, err)
	}
}

func TestNewActorRejectsInvalid(t *testing.T) {
	if _, err := NewActor("x", Owned{}); !errors.Is(err, ErrInvalidState) {
		t.Errorf("NewActor(Owned{}) error = %v", err)
	}
	if _, err := NewActor("", ownedA); !errors.Is(err, ErrInvalidState) {
		t.Errorf("NewActor with empty id error = %v", err)
	}
	a := mustActor(t, unownedB)
	if len(a.Issued()) != 0 {
		t.Errorf("unowned genesis issued %v", a.Issued())
	}
}

// Clone is independent of the original.
func TestClone(t *testing.T) {
	a := mustActor(t, ownedA)
	c := a.Clone()
	if err := c.Revoke("B"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Acquire("B"); err != nil {
		t.Fatal(err)
	}
	if a.State() != ownedA || len(a.Issued()) != 1 {
		t.Fatalf("changing the clone changed the original: %v %v", a.State(), a.Issued())
	}
}

// The encoding round-trips and is exactly the documented JSON form.
func TestMarshalBinary(t *testing.T) {
	a := mustActor(t, ownedA)
	for _, c := range []Command{{Op: OpBeginTransfer, Caller: "A", To: "B", Epoch: 41}, {Op: OpCompleteRelease, Caller: "A", Epoch: 42}, {Op: OpAcquire, Caller: "B", Epoch: 42}} {
		if _, err := a.Apply(c); err != nil {
			t.Fatal(err)
		}
	}
	b, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"x","state":{"kind":"Owned","owner":"B","epoch":42},"issued":[{"actor":"x","epoch":41,"holder":"A"},{"actor":"x","epoch":42,"holder":"B"}]}`
	if string(b) != want {
		t.Fatalf("MarshalBinary =\n%s\nwant\n%s", b, want)
	}
	var d Actor
	if err := d.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if d.ID() != "x" || d.State() != a.State() || !reflect.DeepEqual(d.Issued(), a.Issued()) {
		t.Fatalf("round trip = %v %v %v", d.ID(), d.State(), d.Issued())
	}
	for _, s := range []State{transferringA, unownedB} {
		e := mustActor(t, s)
		b := mustMarshal(t, e)
		var d Actor
		if err := d.UnmarshalBinary(b); err != nil || d.State() != s {
			t.Fatalf("round trip of %v: %v %v (%s)", s, d.State(), err, b)
		}
	}
}

// Decoding refuses what no sequence of transitions can produce, and leaves
// the receiver unchanged.
func TestUnmarshalBinaryRejects(t *testing.T) {
	cases := map[string]string{
		"syntax":             `{"id":`,
		"trailing data":      `{"id":"x","state":{"kind":"Unowned","epoch":4,"intended_owner":"B"},"issued":[]} {}`,
		"unknown field":      `{"id":"x","state":{"kind":"Unowned","epoch":4,"intended_owner":"B"},"issued":[],"extra":1}`,
		"unknown kind":       `{"id":"x","state":{"kind":"Leased","owner":"A","epoch":4},"issued":[]}`,
		"empty id":           `{"id":"","state":{"kind":"Unowned","epoch":4,"intended_owner":"B"},"issued":[]}`,
		"bad transferring":   `{"id":"x","state":{"kind":"Transferring","from":"A","to":"B","old_epoch":4,"new_epoch":6},"issued":[]}`,
		"owned, no token":    `{"id":"x","state":{"kind":"Owned","owner":"A","epoch":4},"issued":[]}`,
		"owned, wrong token": `{"id":"x","state":{"kind":"Owned","owner":"A","epoch":4},"issued":[{"actor":"x","epoch":4,"holder":"B"}]}`,
		"token from future":  `{"id":"x","state":{"kind":"Unowned","epoch":4,"intended_owner":"B"},"issued":[{"actor":"x","epoch":5,"holder":"A"}]}`,
		"current, unowned":   `{"id":"x","state":{"kind":"Unowned","epoch":4,"intended_owner":"B"},"issued":[{"actor":"x","epoch":4,"holder":"A"}]}`,
		"other actor":        `{"id":"x","state":{"kind":"Unowned","epoch":4,"intended_owner":"B"},"issued":[{"actor":"y","epoch":3,"holder":"A"}]}`,
		"no holder":          `{"id":"x","state":{"kind":"Unowned","epoch":4,"intended_owner":"B"},"issued":[{"actor":"x","epoch":3,"holder":""}]}`,
		"epochs not rising":  `{"id":"x","state":{"kind":"Unowned","epoch":4,"intended_owner":"B"},"issued":[{"actor":"x","epoch":3,"holder":"A"},{"actor":"x","epoch":3,"holder":"B"}]}`,
	}
	for name, in := range cases {
		a := mustActor(t, ownedA)
		before := mustMarshal(t, a)
		if err := a.UnmarshalBinary([]byte(in)); err == nil {
			t.Errorf("%s: UnmarshalBinary(%s) succeeded", name, in)
		}
		after := mustMarshal(t, a)
		if string(before) != string(after) {
			t.Errorf("%s: failed decode changed the actor to %s", name, after)
		}
	}
}

// Commands are data: they print readably, with the epoch they were issued
// at, and encode to small JSON objects.
func TestCommand(t *testing.T) {
	for c, want := range map[Command]string{
		{Op: OpBeginTransfer, Caller: "A", To: "B", Epoch: 41}: "BeginTransfer(A -> B)@41",
		{Op: OpCompleteRelease, Caller: "A", Epoch: 42}:        "CompleteRelease(A)@42",
		{Op: OpAcquire, Caller: "B", Epoch: 42}:                "Acquire(B)@42",
		{Op: OpAbort, Epoch: 42}:                               "Abort@42",
		{Op: OpRevoke, To: "C", Epoch: 0}:                      "Revoke(-> C)@0",
	} {
		if got := c.String(); got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var d Command
		if err := json.Unmarshal(b, &d); err != nil || d != c {
			t.Errorf("JSON round trip of %v: %s -> %v, %v", c, b, d, err)
		}
	}
	b, _ := json.Marshal(Command{Op: OpBeginTransfer, Caller: "A", To: "B", Epoch: 41})
	if string(b) != `{"op":"BeginTransfer","caller":"A","to":"B","epoch":41}` {
		t.Errorf("Command JSON = %s", b)
	}
}

// A transition request carries the epoch it was issued at, and Apply refuses
// it once the epoch has moved on. The case from the chapter's failure model:
// A's BeginTransfer(A -> B) issued at epoch 41 is duplicated by the network;
// the handover it began is aborted and A re-acquires at 43; the duplicate
// then arrives. It is refused with a *StaleEpochError and changes nothing. The
// negative control applies the same transition without the epoch check (the
// pure function) and shows the unintended handover at epoch 43 it would have
// started.
// Reference: chapter "One owner at a time", section "What the model
// assumes" (messages may be duplicated, reordered or delayed).
func TestDuplicatedRequestIsRefused(t *testing.T) {
	a := mustActor(t, ownedA)
	begin := Command{Op: OpBeginTransfer, Caller: "A", To: "B", Epoch: 41}
	for _, c := range []Command{begin, {Op: OpAbort, Epoch: 42}, {Op: OpAcquire, Caller: "A", Epoch: 43}} {
		if _, err := a.Apply(c); err != nil {
			t.Fatalf("%v: %v", c, err)
		}
	}
	if want := (Owned{Owner: "A", Epoch: 43}); a.State() != want {
		t.Fatalf("state = %v, want %v", a.State(), want)
	}
	// Without the epoch, the duplicate would be a valid request.
	if s, err := BeginTransfer(a.State(), begin.Caller, begin.To); err != nil || s != (Transferring{From: "A", To: "B", OldEpoch: 43, NewEpoch: 44}) {
		t.Fatalf("negative control: BeginTransfer(%v) = %v, %v; want the unintended handover at 43", a.State(), s, err)
	}
	before := mustMarshal(t, a)
	tok, err := a.Apply(begin)
	var se *StaleEpochError
	if !errors.As(err, &se) || se.Given != 41 || se.Current != 43 {
		t.Fatalf("duplicate %v = %v, want *StaleEpochError{41, 43}", begin, err)
	}
	if tok != (Token{}) || string(mustMarshal(t, a)) != string(before) {
		t.Fatalf("the refused duplicate changed the actor to %v", a.State())
	}
	// Every other kind of request is equally inert after the epoch moved.
	for _, c := range []Command{
		{Op: OpCompleteRelease, Caller: "A", Epoch: 42},
		{Op: OpAcquire, Caller: "A", Epoch: 42},
		{Op: OpAbort, Epoch: 42},
		{Op: OpRevoke, To: "B", Epoch: 42},
		{Op: OpBeginTransfer, Caller: "A", To: "B", Epoch: 44},
	} {
		if _, err := a.Apply(c); err == nil {
			t.Errorf("%v applied in %v", c, a.State())
		}
		if string(mustMarshal(t, a)) != string(before) {
			t.Fatalf("refused %v changed the actor to %v", c, a.State())
		}
	}
}
