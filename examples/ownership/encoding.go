package ownership

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// wireState is the JSON form of a State: its shape in Kind and the shape's
// fields, e.g. {"kind":"Owned","owner":"A","epoch":41}.
type wireState struct {
	Kind          string `json:"kind"`
	Owner         NodeID `json:"owner,omitempty"`
	Epoch         Epoch  `json:"epoch,omitempty"`
	From          NodeID `json:"from,omitempty"`
	To            NodeID `json:"to,omitempty"`
	OldEpoch      Epoch  `json:"old_epoch,omitempty"`
	NewEpoch      Epoch  `json:"new_epoch,omitempty"`
	IntendedOwner NodeID `json:"intended_owner,omitempty"`
}

type wireActor struct {
	ID     ActorID   `json:"id"`
	State  wireState `json:"state"`
	Issued []Token   `json:"issued"`
}

func toWire(s State) wireState {
	switch s := s.(type) {
	case Owned:
		return wireState{Kind: "Owned", Owner: s.Owner, Epoch: s.Epoch}
	case Transferring:
		return wireState{Kind: "Transferring", From: s.From, To: s.To, OldEpoch: s.OldEpoch, NewEpoch: s.NewEpoch}
	case Unowned:
		return wireState{Kind: "Unowned", Epoch: s.Epoch, IntendedOwner: s.IntendedOwner}
	}
	return wireState{}
}

func fromWire(w wireState) (State, error) {
	var s State
	switch w.Kind {
	case "Owned":
		s = Owned{Owner: w.Owner, Epoch: w.Epoch}
	case "Transferring":
		s = Transferring{From: w.From, To: w.To, OldEpoch: w.OldEpoch, NewEpoch: w.NewEpoch}
	case "Unowned":
		s = Unowned{Epoch: w.Epoch, IntendedOwner: w.IntendedOwner}
	default:
		return nil, &InvalidStateError{Reason: fmt.Sprintf("unknown state kind %q", w.Kind)}
	}
	return s, Validate(s)
}

// MarshalBinary encodes a as compact JSON, deterministic for equal actors:
//
//	{"id":"x","state":{"kind":"Owned","owner":"B","epoch":42},
//	 "issued":[{"actor":"x","epoch":41,"holder":"A"},{"actor":"x","epoch":42,"holder":"B"}]}
//
// (on one line). It implements encoding.BinaryMarshaler.
func (a *Actor) MarshalBinary() ([]byte, error) {
	issued := a.issued
	if issued == nil {
		issued = []Token{}
	}
	return json.Marshal(wireActor{ID: a.id, State: toWire(a.state), Issued: issued})
}

// UnmarshalBinary decodes the form written by MarshalBinary into a, replacing
// its contents, and checks what the transitions guarantee: a valid state, a
// non-empty id, issued tokens of this actor with strictly increasing epochs,
// older than the current epoch unless they are the owner's, and, when Owned,
// the owner's token for its epoch as the last one issued. On error a is
// unchanged and the error is a JSON syntax error or an *InvalidStateError
// naming the rule.
func (a *Actor) UnmarshalBinary(data []byte) error {
	var w wireActor
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return fmt.Errorf("ownership: decoding actor: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("ownership: decoding actor: data after the actor's JSON object")
	}
	s, err := fromWire(w.State)
	if err != nil {
		return err
	}
	bad := func(format string, args ...any) error {
		return &InvalidStateError{State: s, Reason: fmt.Sprintf(format, args...)}
	}
	if w.ID == "" {
		return bad("actor id is empty")
	}
	cur := CurrentEpoch(s)
	for i, t := range w.Issued {
		switch {
		case t.Actor != w.ID:
			return bad("issued token %v belongs to another actor", t)
		case t.Holder == "":
			return bad("issued token %v has no holder", t)
		case t.Epoch > cur:
			return bad("issued token %v is newer than the current epoch %d", t, cur)
		case t.Epoch == cur && !MayMutate(s, t.Holder, t.Epoch):
			return bad("issued token %v has the current epoch but the actor is not owned by its holder", t)
		case i > 0 && t.Epoch <= w.Issued[i-1].Epoch:
			return bad("issued token %v is not newer than %v", t, w.Issued[i-1])
		}
	}
	if o, ok := s.(Owned); ok {
		want := Token{Actor: w.ID, Epoch: o.Epoch, Holder: o.Owner}
		if n := len(w.Issued); n == 0 || w.Issued[n-1] != want {
			return bad("owned without %v as the last issued token", want)
		}
	}
	a.id, a.state = w.ID, s
	a.issued = nil
	if len(w.Issued) > 0 {
		a.issued = w.Issued
	}
	return nil
}
