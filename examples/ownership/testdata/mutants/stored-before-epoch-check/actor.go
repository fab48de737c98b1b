package ownership

import "fmt"

// ANCHOR: token

// Token is what a node receives when it acquires an actor: the actor, the
// epoch of the grant and the node holding it. It is plain data that may be
// copied, stored, and kept through crashes and partitions. Having a token is
// not authority: the actor's current state decides whether it confers any
// (Actor.MayMutate), and a stale token does nothing.
//
// It is Chubby's sequencer without the lock mode (Mike Burrows, "The Chubby
// lock service for loosely-coupled distributed systems", OSDI 2006, section
// 2.4). Reference: chapter "Ownership: epochs and fencing", section "Tokens are
// things; authority is a fact about the record".
type Token struct {
	Actor  ActorID `json:"actor"`
	Epoch  Epoch   `json:"epoch"`
	Holder NodeID  `json:"holder"`
}

// ANCHOR_END: token

// String formats t as Token(x, 42, B).
func (t Token) String() string { return fmt.Sprintf("Token(%s, %d, %s)", t.Actor, t.Epoch, t.Holder) }

// Actor is one actor's ownership record: its current State and the set of
// Tokens issued for it. The issued set only grows; Acquire adds the new
// owner's token and nothing ever removes one.
//
// Actor is a pure value like the transition functions: its methods change it
// only when they succeed (a refused transition leaves state and tokens as they
// were), and it does no locking. A service that shares an Actor between
// goroutines must lock around it. MarshalBinary and UnmarshalBinary give a
// deterministic encoding for snapshots and replication.
//
// The zero Actor is not usable; create one with NewActor or UnmarshalBinary.
type Actor struct {
	id     ActorID
	state  State
	issued []Token // in issue order; epochs strictly increase
}

// NewActor returns the ownership record of actor id in state s. If s is
// Owned, the owner's token for its epoch is issued at once, as if the owner
// had acquired it; otherwise the issued set starts empty.
//
// Errors: *InvalidStateError if s is not valid (see Validate) or id is empty.
func NewActor(id ActorID, s State) (*Actor, error) {
	if err := Validate(s); err != nil {
		return nil, err
	}
	if id == "" {
		return nil, &InvalidStateError{State: s, Reason: "actor id is empty"}
	}
	a := &Actor{id: id, state: s}
	if o, ok := s.(Owned); ok {
		a.issued = []Token{{Actor: id, Epoch: o.Epoch, Holder: o.Owner}}
	}
	return a, nil
}

// ID returns the actor's name.
func (a *Actor) ID() ActorID { return a.id }

// State returns the actor's current state.
func (a *Actor) State() State { return a.state }

// CurrentEpoch returns CurrentEpoch(a.State()).
func (a *Actor) CurrentEpoch() Epoch { return CurrentEpoch(a.state) }

// Issued returns a copy of the issued tokens in the order they were issued
// (oldest first).
func (a *Actor) Issued() []Token { return append([]Token(nil), a.issued...) }

// WasIssued reports whether t is one of the actor's issued tokens.
func (a *Actor) WasIssued(t Token) bool {
	for _, x := range a.issued {
		if x == t {
			return true
		}
	}
	return false
}

// Clone returns an independent copy of a.
func (a *Actor) Clone() *Actor {
	c := *a
	c.issued = a.Issued()
	return &c
}

// BeginTransfer applies BeginTransfer(a.State(), caller, to).
func (a *Actor) BeginTransfer(caller, to NodeID) error {
	return a.set(BeginTransfer(a.state, caller, to))
}

// CompleteRelease applies CompleteRelease(a.State(), caller).
func (a *Actor) CompleteRelease(caller NodeID) error {
	return a.set(CompleteRelease(a.state, caller))
}

// Acquire applies Acquire(a.State(), caller) and issues the new owner's token,
// which it returns. On error it returns the zero Token and changes nothing.
func (a *Actor) Acquire(caller NodeID) (Token, error) {
	s, err := Acquire(a.state, caller)
	if err != nil {
		return Token{}, err
	}
	o := s.(Owned)
	t := Token{Actor: a.id, Epoch: o.Epoch, Holder: o.Owner}
	a.state = s
	a.issued = append(a.issued, t)
	return t, nil
}

// Abort applies Abort(a.State()); the coordinator's transition.
func (a *Actor) Abort() error { return a.set(Abort(a.state)) }

// Revoke applies Revoke(a.State(), next); the coordinator's transition.
func (a *Actor) Revoke(next NodeID) error { return a.set(Revoke(a.state, next)) }

func (a *Actor) set(s State, err error) error {
	if err != nil {
		return err
	}
	a.state = s
	return nil
}

// MayMutate reports whether t confers authority now: t was issued by this
// actor and MayMutate(a.State(), t.Holder, t.Epoch) holds.
func (a *Actor) MayMutate(t Token) bool {
	return t.Actor == a.id && MayMutate(a.state, t.Holder, t.Epoch) && a.WasIssued(t)
}

// ValidFence reports ValidFence(a.State(), e).
func (a *Actor) ValidFence(e Epoch) bool { return ValidFence(a.state, e) }

// Authorize is MayMutate with a reason. It returns nil if t confers authority
// now; otherwise ErrUnknownToken (wrapped, naming t) if this actor never
// issued t, a *StaleEpochError if t's epoch is not the current epoch or the
// actor is not Owned at it (an issued token is never newer than the current
// epoch), or a *WrongNodeError if t is current but held by another node
// (impossible for an issued token; kept for completeness).
func (a *Actor) Authorize(t Token) error {
	if t.Actor != a.id || !a.WasIssued(t) {
		return fmt.Errorf("%v for actor %s: %w", t, a.id, ErrUnknownToken)
	}
	o, ok := a.state.(Owned)
	if !ok || t.Epoch != o.Epoch {
		return &StaleEpochError{Given: t.Epoch, Current: a.CurrentEpoch()}
	}
	if t.Holder != o.Owner {
		return &WrongNodeError{Op: "Authorize", Caller: t.Holder, Required: o.Owner, Role: "owner"}
	}
	return nil
}

// ANCHOR: command

// Command is one transition as a request, for messages, logs and
// replication: Op, the requesting node (Caller; empty for the coordinator's
// Abort and Revoke), the target node (To: the new owner for BeginTransfer,
// the next intended owner for Revoke; empty otherwise) and Epoch, the actor's
// current epoch as the requester saw it when it issued the request. It
// encodes to JSON as {"op":"BeginTransfer","caller":"A","to":"B","epoch":41}.
//
// The epoch is what makes a request safe to deliver twice, late or out of
// order: Apply performs c only while c.Epoch is still the current epoch, so a
// request issued at epoch e has no effect once the epoch has moved past e.
// Without it, a BeginTransfer(A -> B) sent at epoch 41, duplicated by the
// network and delivered again after an abort and a re-acquire at 43, would
// start a handover nobody asked for.
//
// The epoch a requester sees is the one its role holds: the owner's epoch
// for BeginTransfer, the transfer's new epoch for CompleteRelease (the epoch
// BeginTransfer allocated), the free epoch for Acquire, and whatever epoch
// the coordinator read for Abort and Revoke.
type Command struct {
	Op     Op     `json:"op"`
	Caller NodeID `json:"caller,omitempty"`
	To     NodeID `json:"to,omitempty"`
	Epoch  Epoch  `json:"epoch"`
}

// ANCHOR_END: command

// String formats c as BeginTransfer(A -> B)@41, CompleteRelease(A)@42,
// Acquire(B)@42, Abort@42 or Revoke(-> B)@42: the transition in the book's
// notation, then the epoch it was issued at.
func (c Command) String() string {
	var op string
	switch c.Op {
	case OpBeginTransfer:
		op = fmt.Sprintf("%s(%s -> %s)", c.Op, c.Caller, c.To)
	case OpCompleteRelease, OpAcquire:
		op = fmt.Sprintf("%s(%s)", c.Op, c.Caller)
	case OpAbort:
		op = string(c.Op)
	case OpRevoke:
		op = fmt.Sprintf("%s(-> %s)", c.Op, c.To)
	default:
		op = fmt.Sprintf("%s(%s, %s)", c.Op, c.Caller, c.To)
	}
	return fmt.Sprintf("%s@%d", op, c.Epoch)
}

// UnknownOpError reports a Command whose Op is not one of the five
// transitions.
type UnknownOpError struct{ Op Op }

func (e *UnknownOpError) Error() string { return fmt.Sprintf("unknown op %q", e.Op) }

// ANCHOR: apply

// Apply performs c on a. It returns the issued Token for a successful Acquire
// and the zero Token otherwise; on error a is unchanged (state and issued
// set). The checks run in this order: the Op is known; the transition's own
// rules (state, caller, target; see BeginTransfer, CompleteRelease, Acquire,
// Abort, Revoke); then c.Epoch must equal the current epoch.
//
// Errors: *UnknownOpError; the transition's error; *StaleEpochError{Given:
// c.Epoch, Current: a.CurrentEpoch()} if the epoch differs (older: the
// request was overtaken by a later transition; newer: no such epoch exists
// yet, so the requester cannot have seen it).
func (a *Actor) Apply(c Command) (Token, error) {
	var (
		next State
		err  error
	)
	switch c.Op {
	case OpBeginTransfer:
		next, err = BeginTransfer(a.state, c.Caller, c.To)
	case OpCompleteRelease:
		next, err = CompleteRelease(a.state, c.Caller)
	case OpAcquire:
		next, err = Acquire(a.state, c.Caller)
	case OpAbort:
		next, err = Abort(a.state)
	case OpRevoke:
		next, err = Revoke(a.state, c.To)
	default:
		return Token{}, &UnknownOpError{Op: c.Op}
	}
	if err != nil {
		return Token{}, err
	}
	if c.Op != OpAcquire {
		a.state = next
	}
	if cur := a.CurrentEpoch(); c.Epoch != cur {
		return Token{}, &StaleEpochError{Given: c.Epoch, Current: cur}
	}
	if c.Op == OpAcquire {
		return a.Acquire(c.Caller)
	}
	return Token{}, nil
}

// ANCHOR_END: apply
