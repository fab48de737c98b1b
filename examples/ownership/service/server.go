package service

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ownership-book/ownership/examples/ownership"
)

// Server is the ownership service in front of a Registry. Its HTTP handler
// offers the node-facing methods (see the Path constants); its Go methods
// Create, Abort and Revoke are the coordinator's transitions and have no
// route. A Server is safe for concurrent use.
type Server struct {
	reg    Registry
	roster Roster
	mux    *http.ServeMux
	calls  atomic.Int64
}

// NewServer returns a server for reg that accepts callers on roster.
func NewServer(reg Registry, roster Roster) *Server {
	s := &Server{reg: reg, roster: roster, mux: http.NewServeMux()}
	for path, h := range s.methods() {
		s.mux.Handle(path, s.method(h))
	}
	return s
}

// ANCHOR: methods

// methods is the whole wire surface: five node-facing methods. Create, Abort
// and Revoke are not here, and nothing else registers a route.
func (s *Server) methods() map[string]methodFunc {
	return map[string]methodFunc{
		PathBeginTransfer:   s.beginTransfer,
		PathCompleteRelease: s.completeRelease,
		PathAcquire:         s.acquire,
		PathState:           s.state,
		PathValidate:        s.validate,
	}
}

// ANCHOR_END: methods

// Routes returns the paths the handler serves, sorted.
func (s *Server) Routes() []string {
	var out []string
	for p := range s.methods() {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// methodFunc is one wire method: the verified caller and the request body
// in, a response value or an *Error out.
type methodFunc func(ctx context.Context, caller ownership.NodeID, body io.Reader) (any, *Error)

// ANCHOR: handler

// ServeHTTP checks the caller before routing: a request that did not come
// over a verified TLS connection from a node on the roster is refused (403)
// and reaches no method. ServerTLS already refuses such connections in the
// handshake; this is the second lock on the same door, for a handler mounted
// behind some other listener by mistake.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, err := Caller(r, s.roster); err != nil {
		writeError(w, &Error{Code: CodeWrongCaller, Rule: "the caller is the node its verified certificate names, on the roster", Detail: err.Error()})
		return
	}
	if !slices.Contains(s.Routes(), r.URL.Path) {
		writeError(w, &Error{Code: CodeUnknownMethod, Rule: "the wire has five methods (" + strings.Join(s.Routes(), ", ") + "); the coordinator's transitions are not on the wire",
			Detail: fmt.Sprintf("%s %q", r.Method, r.URL.Path)})
		return
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) method(f methodFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		caller, err := Caller(r, s.roster)
		if err != nil { // unreachable behind ServeHTTP; kept so a method never runs without a caller
			writeError(w, &Error{Code: CodeWrongCaller, Rule: "the caller is the node its verified certificate names, on the roster", Detail: err.Error()})
			return
		}
		if r.Method != http.MethodPost {
			writeError(w, malformed("method %s %s: every method is a POST", r.Method, r.URL.Path))
			return
		}
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			w.Header().Set("Accept", "application/json")
			writeErrorStatus(w, http.StatusUnsupportedMediaType, &Error{Code: CodeMalformed, Rule: "every method takes a JSON body sent as Content-Type: application/json",
				Detail: fmt.Sprintf("Content-Type %q", r.Header.Get("Content-Type"))})
			return
		}
		s.calls.Add(1)
		resp, rerr := f(r.Context(), caller, r.Body)
		if rerr != nil {
			writeError(w, rerr)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
	})
}

// ANCHOR_END: handler

// MethodCalls returns how many requests have reached a wire method since the
// server was built. Tests use it to show that a refused connection ran none.
func (s *Server) MethodCalls() int64 { return s.calls.Load() }

// HandshakeTimeout bounds the TLS handshake and the reading of a request's
// headers; ReadTimeout (twice as long) bounds a whole request. Without them
// anyone who can reach the port, certificate or not, could hold connections
// open for ever.
const HandshakeTimeout = 5 * time.Second

// HTTPServer returns an *http.Server that serves s over mutual TLS with cert
// (see ServerTLS), with HandshakeTimeout on the handshake and headers. Serve
// it with ServeTLS(listener, "", ""). Handshake failures are not logged; the
// refused client sees them.
func (s *Server) HTTPServer(a *Authority, cert tls.Certificate) *http.Server {
	return &http.Server{
		Handler:           s,
		TLSConfig:         ServerTLS(a, cert, s.roster),
		ReadHeaderTimeout: HandshakeTimeout,
		ReadTimeout:       2 * HandshakeTimeout,
		IdleTimeout:       time.Minute,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
}

// ANCHOR: begin_transfer

func (s *Server) beginTransfer(ctx context.Context, caller ownership.NodeID, body io.Reader) (any, *Error) {
	var req BeginTransferRequest
	if err := decodeStrict(body, &req); err != nil {
		return nil, err
	}
	if err := s.checkActorEpoch(req.Actor, req.Epoch); err != nil {
		return nil, err
	}
	if !s.roster.Contains(req.To) {
		return nil, &Error{Code: CodeInvalidNode, Rule: "a transfer names another node on the roster", Detail: fmt.Sprintf("target %q is not on the roster", string(req.To))}
	}
	return s.apply(ctx, Request{Op: ownership.OpBeginTransfer, Actor: req.Actor, Caller: caller, To: req.To, Epoch: req.Epoch})
}

// ANCHOR_END: begin_transfer

func (s *Server) completeRelease(ctx context.Context, caller ownership.NodeID, body io.Reader) (any, *Error) {
	var req CompleteReleaseRequest
	if err := decodeStrict(body, &req); err != nil {
		return nil, err
	}
	if err := s.checkActorEpoch(req.Actor, req.Epoch); err != nil {
		return nil, err
	}
	return s.apply(ctx, Request{Op: ownership.OpCompleteRelease, Actor: req.Actor, Caller: caller, Epoch: req.Epoch})
}

func (s *Server) acquire(ctx context.Context, caller ownership.NodeID, body io.Reader) (any, *Error) {
	var req AcquireRequest
	if err := decodeStrict(body, &req); err != nil {
		return nil, err
	}
	if err := s.checkActorEpoch(req.Actor, req.Epoch); err != nil {
		return nil, err
	}
	res, err := s.reg.Apply(ctx, Request{Op: ownership.OpAcquire, Actor: req.Actor, Caller: caller, Epoch: req.Epoch})
	if err != nil {
		return nil, ruleError(ownership.OpAcquire, err)
	}
	return AcquireResponse{State: ToWire(res.State), Token: res.Token}, nil
}

func (s *Server) state(ctx context.Context, _ ownership.NodeID, body io.Reader) (any, *Error) {
	var req StateRequest
	if err := decodeStrict(body, &req); err != nil {
		return nil, err
	}
	if err := checkActor(req.Actor); err != nil {
		return nil, err
	}
	a, err := s.reg.Read(ctx, req.Actor)
	if err != nil {
		return nil, ruleError("State", err)
	}
	return StateResponse{Actor: req.Actor, State: ToWire(a.State())}, nil
}

// ANCHOR: validate

// validate is the fence check a resource server asks for: ValidFence of the
// token's epoch against the actor's current state, read through the
// registry (so after every acknowledged transition).
func (s *Server) validate(
	ctx context.Context, _ ownership.NodeID, body io.Reader,
) (any, *Error) {
	var req ValidateRequest
	if err := decodeStrict(body, &req); err != nil {
		return nil, err
	}
	if err := s.checkActorEpoch(req.Token.Actor, req.Token.Epoch); err != nil {
		return nil, err
	}
	a, err := s.reg.Read(ctx, req.Token.Actor)
	if err != nil {
		return nil, ruleError("Validate", err)
	}
	return Validity{
		Valid:        a.ValidFence(req.Token.Epoch),
		Issued:       a.WasIssued(req.Token),
		CurrentEpoch: a.CurrentEpoch(),
	}, nil
}

// ANCHOR_END: validate

func (s *Server) apply(ctx context.Context, req Request) (any, *Error) {
	res, err := s.reg.Apply(ctx, req)
	if err != nil {
		return nil, ruleError(req.Op, err)
	}
	return StateResponse{Actor: req.Actor, State: ToWire(res.State)}, nil
}

func checkActor(a ownership.ActorID) *Error {
	if a == "" {
		return malformed("field \"actor\" is missing or empty")
	}
	if checkName(ownership.NodeID(a)) != nil {
		return malformed("actor %q: must be 1 to 64 of A-Z a-z 0-9 . _ -", string(a))
	}
	return nil
}

func (s *Server) checkActorEpoch(a ownership.ActorID, e ownership.Epoch) *Error {
	if err := checkActor(a); err != nil {
		return err
	}
	if e == 0 {
		return malformed("field \"epoch\" is missing or 0 (epochs start at 1)")
	}
	return nil
}

// ANCHOR: coordinator

// Create brings actor into the registry, Unowned at its first epoch with
// intended as the only node that may acquire it. It is the coordinator's
// transition: a Go method, not a route.
func (s *Server) Create(
	ctx context.Context, actor ownership.ActorID, intended ownership.NodeID,
) (ownership.State, error) {
	if err := checkActor(actor); err != nil {
		return nil, err
	}
	if !s.roster.Contains(intended) {
		return nil, notOnRoster(intended)
	}
	return s.coordinate(ctx, Request{Op: OpCreate, Actor: actor, To: intended})
}

// Revoke is the coordinator's force: whatever state actor is in, it becomes
// Unowned at a fresh epoch with next as the intended owner. It is not on the
// wire; only code in the server's process can call it.
func (s *Server) Revoke(
	ctx context.Context, actor ownership.ActorID, next ownership.NodeID,
) (ownership.State, error) {
	if !s.roster.Contains(next) {
		return nil, notOnRoster(next)
	}
	return s.coordinate(ctx, Request{Op: ownership.OpRevoke, Actor: actor, To: next})
}

// Abort abandons actor's handover in progress (see ownership.Abort). Like
// Revoke it is the coordinator's and not on the wire.
func (s *Server) Abort(
	ctx context.Context, actor ownership.ActorID,
) (ownership.State, error) {
	return s.coordinate(ctx, Request{Op: ownership.OpAbort, Actor: actor})
}

// ANCHOR_END: coordinator

func (s *Server) coordinate(ctx context.Context, req Request) (ownership.State, error) {
	res, err := s.reg.Apply(ctx, req)
	if err != nil {
		return nil, ruleError(req.Op, err)
	}
	return res.State, nil
}

var errorStatus = map[Code]int{
	CodeMalformed:     http.StatusBadRequest,
	CodeUnknownActor:  http.StatusNotFound,
	CodeWrongCaller:   http.StatusForbidden,
	CodeStaleEpoch:    http.StatusConflict,
	CodeWrongEpoch:    http.StatusConflict,
	CodeWrongState:    http.StatusConflict,
	CodeInvalidNode:   http.StatusUnprocessableEntity,
	CodeExhausted:     http.StatusConflict,
	CodeActorExists:   http.StatusConflict,
	CodeNotLeader:     http.StatusMisdirectedRequest,
	CodeUnavailable:   http.StatusServiceUnavailable,
	CodeUnknownMethod: http.StatusNotFound,
}

func writeError(w http.ResponseWriter, e *Error) {
	status, ok := errorStatus[e.Code]
	if !ok {
		status = http.StatusInternalServerError
	}
	if e.Code == CodeUnavailable && e.Rule == ruleTransfer {
		// Nothing was proposed and a new leader is moments away (RFC 9110
		// section 10.2.3: Retry-After with a 503).
		w.Header().Set("Retry-After", "1")
	}
	writeErrorStatus(w, status, e)
}

func writeErrorStatus(w http.ResponseWriter, status int, e *Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(struct {
		Error *Error `json:"error"`
	}{e})
}
