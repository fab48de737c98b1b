package service

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/ownership-book/ownership/examples/ownership"
)

// The wire methods. Every one is an HTTPS POST with a JSON body; none takes a
// node name, because the caller is the connection's certificate.
const (
	PathBeginTransfer   = "/v1/begin-transfer"   // BeginTransferRequest -> StateResponse
	PathCompleteRelease = "/v1/complete-release" // CompleteReleaseRequest -> StateResponse
	PathAcquire         = "/v1/acquire"          // AcquireRequest -> AcquireResponse
	PathState           = "/v1/state"            // StateRequest -> StateResponse
	PathValidate        = "/v1/validate"         // ValidateRequest -> Validity
)

// ANCHOR: wire

// BeginTransferRequest asks to hand Actor to To. Only the owner may ask, at
// the epoch it owns (Epoch).
type BeginTransferRequest struct {
	Actor ownership.ActorID `json:"actor"`
	Epoch ownership.Epoch   `json:"epoch"`
	To    ownership.NodeID  `json:"to"`
}

// CompleteReleaseRequest confirms that the outgoing owner has stopped
// acting. Epoch is the epoch it owned (the transfer's old epoch).
type CompleteReleaseRequest struct {
	Actor ownership.ActorID `json:"actor"`
	Epoch ownership.Epoch   `json:"epoch"`
}

// AcquireRequest asks to own Actor at the free epoch Epoch. Only the
// intended owner may ask.
type AcquireRequest struct {
	Actor ownership.ActorID `json:"actor"`
	Epoch ownership.Epoch   `json:"epoch"`
}

// StateRequest asks for Actor's state. Any node on the roster may ask.
type StateRequest struct {
	Actor ownership.ActorID `json:"actor"`
}

// ValidateRequest asks whether Token passes the fence check of its actor.
// Any node on the roster may ask; a resource server does, before each write.
type ValidateRequest struct {
	Token ownership.Token `json:"token"`
}

// ANCHOR_END: wire

// StateResponse carries an actor's state.
type StateResponse struct {
	Actor ownership.ActorID `json:"actor"`
	State WireState         `json:"state"`
}

// AcquireResponse carries the new owner's state and token.
type AcquireResponse struct {
	State WireState       `json:"state"`
	Token ownership.Token `json:"token"`
}

// Validity is the answer to a fence check. Valid is ownership.ValidFence of
// the token's epoch against the actor's current state (Chubby's sequencer
// check); Issued says whether the registry ever issued this exact token;
// CurrentEpoch is the actor's current epoch.
type Validity struct {
	Valid        bool            `json:"valid"`
	Issued       bool            `json:"issued"`
	CurrentEpoch ownership.Epoch `json:"current_epoch"`
}

// WireState is the JSON form of an ownership.State:
// {"kind":"Owned","owner":"A","epoch":1},
// {"kind":"Transferring","from":"A","to":"B","old_epoch":1,"new_epoch":2} or
// {"kind":"Unowned","epoch":2,"intended_owner":"B"}.
type WireState struct {
	Kind          string           `json:"kind"`
	Owner         ownership.NodeID `json:"owner,omitempty"`
	Epoch         ownership.Epoch  `json:"epoch,omitempty"`
	From          ownership.NodeID `json:"from,omitempty"`
	To            ownership.NodeID `json:"to,omitempty"`
	OldEpoch      ownership.Epoch  `json:"old_epoch,omitempty"`
	NewEpoch      ownership.Epoch  `json:"new_epoch,omitempty"`
	IntendedOwner ownership.NodeID `json:"intended_owner,omitempty"`
}

// ToWire returns the wire form of s.
func ToWire(s ownership.State) WireState {
	switch s := s.(type) {
	case ownership.Owned:
		return WireState{Kind: "Owned", Owner: s.Owner, Epoch: s.Epoch}
	case ownership.Transferring:
		return WireState{Kind: "Transferring", From: s.From, To: s.To, OldEpoch: s.OldEpoch, NewEpoch: s.NewEpoch}
	case ownership.Unowned:
		return WireState{Kind: "Unowned", Epoch: s.Epoch, IntendedOwner: s.IntendedOwner}
	}
	return WireState{}
}

// State returns the ownership.State that w encodes. Errors: an
// *ownership.InvalidStateError for an unknown kind or a shape the state
// machine cannot produce.
func (w WireState) State() (ownership.State, error) {
	var s ownership.State
	switch w.Kind {
	case "Owned":
		s = ownership.Owned{Owner: w.Owner, Epoch: w.Epoch}
	case "Transferring":
		s = ownership.Transferring{From: w.From, To: w.To, OldEpoch: w.OldEpoch, NewEpoch: w.NewEpoch}
	case "Unowned":
		s = ownership.Unowned{Epoch: w.Epoch, IntendedOwner: w.IntendedOwner}
	default:
		return nil, &ownership.InvalidStateError{Reason: fmt.Sprintf("unknown state kind %q", w.Kind)}
	}
	return s, ownership.Validate(s)
}

// maxBody bounds a request body; every method's body is far smaller.
const maxBody = 4096

// decodeStrict decodes exactly one JSON object with no unknown fields from r
// into v, or returns a malformed *Error naming what is wrong. Beyond what
// encoding/json checks, every object in the body (the top level and a
// token) must spell its fields exactly as the method does, each once: Go's
// decoder would match "EPOCH" to epoch and keep the last of two epochs,
// where another reader of the same bytes might see a different request.
func decodeStrict(r io.Reader, v any) *Error {
	data, err := io.ReadAll(io.LimitReader(r, maxBody+1))
	if err != nil {
		return malformed("reading body: %v", err)
	}
	if len(data) > maxBody {
		return malformed("body is longer than %d bytes", maxBody)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return malformed("empty body")
		}
		return malformed("body: %v", err)
	}
	if dec.More() {
		return malformed("body holds more than one JSON value")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return malformed("body holds trailing data after the JSON object")
	}
	given, err := jsonTree(json.NewDecoder(bytes.NewReader(data)))
	if err != nil {
		return malformed("body: %v", err)
	}
	canon, err := json.Marshal(v)
	if err != nil {
		return malformed("body: %v", err)
	}
	want, err := jsonTree(json.NewDecoder(bytes.NewReader(canon)))
	if err != nil {
		return malformed("body: %v", err)
	}
	if err := sameFieldNames(given, want, "body"); err != nil {
		return malformed("%v", err)
	}
	return nil
}

// jsonTree reads one JSON value from dec as nested map[string]any, []any
// and scalars. It refuses an object in which a field name appears twice.
func jsonTree(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		obj := map[string]any{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			name, _ := k.(string)
			if _, dup := obj[name]; dup {
				return nil, fmt.Errorf("field %q appears twice", name)
			}
			if obj[name], err = jsonTree(dec); err != nil {
				return nil, err
			}
		}
		_, err := dec.Token() // the closing brace
		return obj, err
	case json.Delim('['):
		var arr []any
		for dec.More() {
			x, err := jsonTree(dec)
			if err != nil {
				return nil, err
			}
			arr = append(arr, x)
		}
		_, err := dec.Token() // the closing bracket
		return arr, err
	}
	return tok, nil
}

// sameFieldNames reports the first field of given, at any depth, whose name
// is not spelt exactly as in want (the decoded request encoded again).
func sameFieldNames(given, want any, where string) error {
	g, ok := given.(map[string]any)
	if !ok {
		return nil
	}
	w, _ := want.(map[string]any)
	for _, k := range slices.Sorted(maps.Keys(g)) {
		wv, ok := w[k]
		if !ok {
			return fmt.Errorf("%s: field %q is not spelt as one of %q", where, k, slices.Sorted(maps.Keys(w)))
		}
		if err := sameFieldNames(g[k], wv, where+"."+k); err != nil {
			return err
		}
	}
	return nil
}
