package ownership

import (
	"errors"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// fataler is what the invariant checks need from *testing.T and *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

var testNodes = []NodeID{"A", "B", "C", "D"}

// genEpoch draws small epochs and, sometimes, epochs at the top of the range,
// so that ErrEpochExhausted is exercised too.
func genEpoch(lo Epoch) *rapid.Generator[Epoch] {
	return rapid.Custom(func(t *rapid.T) Epoch {
		if rapid.IntRange(0, 9).Draw(t, "high") == 0 {
			return Epoch(rapid.Uint64Range(uint64(MaxEpoch)-3, uint64(MaxEpoch)).Draw(t, "e"))
		}
		return lo + Epoch(rapid.Uint64Range(0, 50).Draw(t, "e"))
	})
}

// genState draws any valid State over nodes A..D.
var genState = rapid.Custom(func(t *rapid.T) State {
	node := rapid.SampledFrom(testNodes)
	switch rapid.IntRange(0, 2).Draw(t, "kind") {
	case 0:
		return Owned{Owner: node.Draw(t, "owner"), Epoch: genEpoch(0).Draw(t, "epoch")}
	case 1:
		from := node.Draw(t, "from")
		to := rapid.SampledFrom(testNodes).Filter(func(n NodeID) bool { return n != from }).Draw(t, "to")
		old := genEpoch(0).Draw(t, "old")
		if old == MaxEpoch {
			old--
		}
		return Transferring{From: from, To: to, OldEpoch: old, NewEpoch: old + 1}
	default:
		return Unowned{Epoch: genEpoch(0).Draw(t, "epoch"), IntendedOwner: node.Draw(t, "intended")}
	}
})

// legalCaller is the one node the state lets act (the owner, the outgoing
// owner, the intended owner), so that random runs make progress.
func legalCaller(s State) NodeID {
	switch s := s.(type) {
	case Owned:
		return s.Owner
	case Transferring:
		return s.From
	case Unowned:
		return s.IntendedOwner
	}
	return ""
}

// drawNode draws one of A..D, the empty (illegal) node, or the legal caller.
func drawNode(t *rapid.T, a *Actor, label string) NodeID {
	choices := append([]NodeID{"", legalCaller(a.State()), legalCaller(a.State())}, testNodes...)
	return rapid.SampledFrom(choices).Draw(t, label)
}

// drawEpoch draws the epoch a request carries: usually the current one (a
// fresh request), sometimes one below or above it (a delayed duplicate, or an
// epoch nobody can have seen), sometimes any small epoch.
func drawEpoch(t *rapid.T, a *Actor) Epoch {
	cur := a.CurrentEpoch()
	choices := []Epoch{cur, cur, cur, cur, cur - 1, cur + 1, Epoch(rapid.Uint64Range(0, 60).Draw(t, "any"))}
	return rapid.SampledFrom(choices).Draw(t, "epoch")
}

// pureStep is c applied by the transition functions alone, without the
// epoch check: the result Apply must give when c.Epoch is current.
func pureStep(s State, c Command) (State, error) {
	switch c.Op {
	case OpBeginTransfer:
		return BeginTransfer(s, c.Caller, c.To)
	case OpCompleteRelease:
		return CompleteRelease(s, c.Caller)
	case OpAcquire:
		return Acquire(s, c.Caller)
	case OpAbort:
		return Abort(s)
	case OpRevoke:
		return Revoke(s, c.To)
	}
	return s, &UnknownOpError{Op: c.Op}
}

// history records facts across one run: every token ever issued and which
// node ever had authority at each epoch.
type history struct {
	issued  []Token
	ownerAt map[Epoch]NodeID
}

// checkInvariants asserts the safety properties that must hold in every
// reachable state.
func checkInvariants(t fataler, a *Actor, h *history) {
	t.Helper()
	s := a.State()
	if err := Validate(s); err != nil {
		t.Fatalf("reached an invalid state: %v", err)
	}
	cur := CurrentEpoch(s)

	// Exclusivity: at most one (node, epoch) pair may mutate, exactly one when
	// Owned. Reference: chapter "One owner at a time", section "One
	// predicate for authority, one check for servers".
	epochs := map[Epoch]bool{cur: true, cur - 1: true, cur + 1: true, 0: true}
	for _, tok := range a.Issued() {
		epochs[tok.Epoch] = true
	}
	authorized := 0
	for _, n := range testNodes {
		for e := range epochs {
			if MayMutate(s, n, e) {
				authorized++
			}
		}
	}
	_, owned := s.(Owned)
	if authorized > 1 || owned != (authorized == 1) {
		t.Fatalf("%d (node, epoch) pairs may mutate in %v", authorized, s)
	}
	tokensWithAuthority := 0
	for _, tok := range a.Issued() {
		if a.MayMutate(tok) {
			tokensWithAuthority++
		}
		// A token of an older epoch never passes the fence, and no issued
		// token is newer than the current epoch.
		// Reference: chapter "One owner at a time", section "One
		// predicate for authority, one check for servers".
		if tok.Epoch < cur && ValidFence(s, tok.Epoch) {
			t.Fatalf("stale token %v passes ValidFence in %v", tok, s)
		}
		if tok.Epoch > cur {
			t.Fatalf("token %v is newer than the current epoch of %v", tok, s)
		}
		if ValidFence(s, tok.Epoch) != a.MayMutate(tok) {
			t.Fatalf("token %v: ValidFence=%v but MayMutate=%v in %v", tok, ValidFence(s, tok.Epoch), a.MayMutate(tok), s)
		}
	}
	if tokensWithAuthority != authorized {
		t.Fatalf("%d issued tokens confer authority in %v, want %d", tokensWithAuthority, s, authorized)
	}

	// Every issued token stays issued: the set only grows.
	// Reference: chapter "One owner at a time", section "Tokens are
	// things; authority is a fact about the record".
	now := a.Issued()
	if len(now) < len(h.issued) || !slices.Equal(now[:len(h.issued)], h.issued) {
		t.Fatalf("issued set shrank or changed: had %v, now %v", h.issued, now)
	}
	h.issued = now

	// Authority at one epoch belongs to one node for the whole run.
	if o, ok := s.(Owned); ok {
		if prev, seen := h.ownerAt[o.Epoch]; seen && prev != o.Owner {
			t.Fatalf("epoch %d owned by %s and later by %s", o.Epoch, prev, o.Owner)
		}
		h.ownerAt[o.Epoch] = o.Owner
	}

	// The encoding accepts every reachable state and round-trips it.
	b, err := a.MarshalBinary()
	if err != nil {
		t.Fatalf("MarshalBinary: %v", err)
	}
	var d Actor
	if err := d.UnmarshalBinary(b); err != nil {
		t.Fatalf("UnmarshalBinary of a reachable actor: %v\n%s", err, b)
	}
	if d.State() != s || !slices.Equal(d.Issued(), now) {
		t.Fatalf("round trip changed the actor: %s", b)
	}
}

// checkStep asserts what one applied command may change.
func checkStep(t fataler, before, after *Actor, c Command, tok Token, err error) {
	t.Helper()
	b, a := before.CurrentEpoch(), after.CurrentEpoch()
	// A request takes effect only at the epoch it was issued at; at any other
	// epoch it is refused as stale, and otherwise it does what the transition
	// function does.
	// Reference: chapter "One owner at a time", section "What the
	// model assumes".
	want, wantErr := pureStep(before.State(), c)
	var se *StaleEpochError
	switch {
	case wantErr != nil:
		if err == nil || err.Error() != wantErr.Error() {
			t.Fatalf("%v in %v: Apply error %v, the transition's %v", c, before.State(), err, wantErr)
		}
	case c.Epoch != b:
		if !errors.As(err, &se) || se.Given != c.Epoch || se.Current != b {
			t.Fatalf("%v issued at another epoch than %d: Apply error %v, want *StaleEpochError", c, b, err)
		}
	default:
		if err != nil || after.State() != want {
			t.Fatalf("%v in %v: Apply gave %v, %v; the transition gives %v", c, before.State(), after.State(), err, want)
		}
	}
	if err != nil {
		// An illegal transition leaves the state and the tokens unchanged.
		// Reference: chapter "One owner at a time", section "A
		// handover, step by step".
		if after.State() != before.State() || !slices.Equal(after.Issued(), before.Issued()) {
			t.Fatalf("refused %v (%v) changed %v to %v", c, err, before.State(), after.State())
		}
		if tok != (Token{}) {
			t.Fatalf("refused %v returned token %v", c, tok)
		}
		return
	}
	// The current epoch never decreases; it strictly increases on
	// BeginTransfer, Abort and Revoke, and stays on CompleteRelease and
	// Acquire.
	// Reference: chapter "One owner at a time", sections "A handover,
	// step by step" and "Abort and revoke".
	switch c.Op {
	case OpBeginTransfer, OpAbort, OpRevoke:
		if a != b+1 {
			t.Fatalf("%v moved the epoch from %d to %d, want %d", c, b, a, b+1)
		}
	case OpCompleteRelease, OpAcquire:
		if a != b {
			t.Fatalf("%v moved the epoch from %d to %d", c, b, a)
		}
	}
	// Only Acquire issues a token, exactly one, for the caller at the epoch.
	n := len(after.Issued()) - len(before.Issued())
	if c.Op == OpAcquire {
		want := Token{Actor: after.ID(), Epoch: a, Holder: c.Caller}
		if n != 1 || tok != want || after.Issued()[len(after.Issued())-1] != want {
			t.Fatalf("%v issued %v (%d new), want %v", c, tok, n, want)
		}
	} else if n != 0 || tok != (Token{}) {
		t.Fatalf("%v issued %d tokens (%v)", c, n, tok)
	}
}

// Over random sequences of transitions by random callers (legal and illegal,
// nodes A..D and the empty node), issued at the current epoch or at another
// one, from random starting states, the safety properties hold after every
// step: never two nodes with authority, one owner per epoch for all time, a
// monotone epoch, an only-growing issued set, stale tokens fenced out,
// refused transitions without effect, requests effective only at the epoch
// they were issued at.
// Reference: chapter "One owner at a time", sections "One predicate
// for authority, one check for servers" and "Tokens are things; authority is
// a fact about the record".
func TestPropertyRandomTransitions(t *testing.T) {
	var runs, steps, refused int
	rapid.Check(t, func(rt *rapid.T) {
		runs++
		a, err := NewActor("x", genState.Draw(rt, "start"))
		if err != nil {
			rt.Fatalf("NewActor: %v", err)
		}
		h := &history{ownerAt: map[Epoch]NodeID{}}
		apply := func(rt *rapid.T, c Command) {
			before := a.Clone()
			tok, err := a.Apply(c)
			steps++
			if err != nil {
				refused++
			}
			checkStep(rt, before, a, c, tok, err)
		}
		rt.Repeat(map[string]func(*rapid.T){
			"BeginTransfer": func(rt *rapid.T) {
				apply(rt, Command{Op: OpBeginTransfer, Caller: drawNode(rt, a, "caller"), To: drawNode(rt, a, "to"), Epoch: drawEpoch(rt, a)})
			},
			"CompleteRelease": func(rt *rapid.T) {
				apply(rt, Command{Op: OpCompleteRelease, Caller: drawNode(rt, a, "caller"), Epoch: drawEpoch(rt, a)})
			},
			"Acquire": func(rt *rapid.T) {
				apply(rt, Command{Op: OpAcquire, Caller: drawNode(rt, a, "caller"), Epoch: drawEpoch(rt, a)})
			},
			"Abort": func(rt *rapid.T) { apply(rt, Command{Op: OpAbort, Epoch: drawEpoch(rt, a)}) },
			// The next step of a handover by its legal caller, so that runs go
			// through many handovers and not only through refusals.
			"NextStep": func(rt *rapid.T) {
				c := Command{Caller: legalCaller(a.State()), Epoch: a.CurrentEpoch()}
				switch a.State().(type) {
				case Owned:
					c.Op = OpBeginTransfer
					c.To = rapid.SampledFrom(testNodes).Draw(rt, "to")
				case Transferring:
					c.Op = OpCompleteRelease
				case Unowned:
					c.Op = OpAcquire
				}
				apply(rt, c)
			},
			"Revoke": func(rt *rapid.T) {
				apply(rt, Command{Op: OpRevoke, To: drawNode(rt, a, "next"), Epoch: drawEpoch(rt, a)})
			},
			"": func(rt *rapid.T) { checkInvariants(rt, a, h) },
		})
	})
	t.Logf("%d runs, %d transitions applied, %d of them refused", runs, steps, refused)
	if steps > 0 && (refused == 0 || refused == steps) {
		t.Errorf("the generator is lopsided: %d of %d transitions refused", refused, steps)
	}
}

// FuzzApply runs byte-chosen commands from Owned(A, 41) and checks the same
// invariants after every step. Run with:
//
//	go test -fuzz FuzzApply ./examples/ownership
//
// Reference: chapter "One owner at a time", section "Three shapes".
func FuzzApply(f *testing.F) {
	f.Add([]byte{0x01, 0x06, 0x07, 0x00, 0x0b})
	f.Add([]byte("handover, abort, revoke"))
	ops := []Op{OpBeginTransfer, OpCompleteRelease, OpAcquire, OpAbort, OpRevoke}
	nodes := append([]NodeID{""}, testNodes...)
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := NewActor("x", ownedA)
		if err != nil {
			t.Fatal(err)
		}
		h := &history{ownerAt: map[Epoch]NodeID{}}
		checkInvariants(t, a, h)
		for i := 0; i+1 < len(data); i += 2 {
			// The high bits of the second byte skew the request's epoch by
			// -1, 0 (most often) or +1 from the current one.
			e := a.CurrentEpoch() + Epoch([]int{0, 0, -1, 1}[data[i+1]>>6])
			c := Command{Op: ops[int(data[i])%len(ops)], Caller: nodes[int(data[i]>>4)%len(nodes)], To: nodes[int(data[i+1])%len(nodes)], Epoch: e}
			before := a.Clone()
			tok, err := a.Apply(c)
			checkStep(t, before, a, c, tok, err)
			checkInvariants(t, a, h)
		}
	})
}

// FuzzUnmarshalBinary: decoding arbitrary bytes never panics, and whatever it
// accepts satisfies the invariants and re-encodes to the same bytes' meaning.
func FuzzUnmarshalBinary(f *testing.F) {
	a, _ := NewActor("x", ownedA)
	b, _ := a.MarshalBinary()
	f.Add(b)
	f.Add([]byte(`{"id":"x","state":{"kind":"Unowned","epoch":4,"intended_owner":"B"},"issued":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var d Actor
		if err := d.UnmarshalBinary(data); err != nil {
			return
		}
		checkInvariants(t, &d, &history{ownerAt: map[Epoch]NodeID{}})
		again, err := d.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var e Actor
		if err := e.UnmarshalBinary(again); err != nil || e.State() != d.State() || !slices.Equal(e.Issued(), d.Issued()) {
			t.Fatalf("re-encoding %s does not round-trip: %v", again, err)
		}
	})
}
