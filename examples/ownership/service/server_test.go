package service

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ownership-book/ownership/examples/ownership"
)

// A caller is the node its certificate names, and the roster is fixed at
// construction: a certificate from another authority, one of ours naming a
// node off the roster, and no certificate at all are each refused in the
// TLS handshake, so no method runs and no state changes.
// Reference: chapter "The ownership service", section "Who is calling:
// learned, never told".
func TestUnknownCertificateRefusedBeforeAnyMethod(t *testing.T) {
	e := newLocalEnv(t)
	e.ownedBy("x", "A")
	before := e.record("x")
	calls := e.server.MethodCalls()

	other := newAuthority(t) // a stranger's CA that also calls its node "A"
	forged, err := other.Issue("A")
	if err != nil {
		t.Fatal(err)
	}
	offRoster, err := e.auth.Issue("mallory")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		c    *Client
	}{
		{"certificate from another authority", NewClient(e.auth, forged, e.addr)},
		{"our authority, name not on the roster", NewClient(e.auth, offRoster, e.addr)},
		{"no certificate", NewClient(e.auth, offRoster, e.addr)},
	}
	cases[2].c.http.Transport.(*http.Transport).TLSClientConfig.Certificates = nil
	ctx := ctxT(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defer tc.c.Close()
			var se *Error
			if _, err := tc.c.State(ctx, "x"); err == nil {
				t.Fatal("State succeeded; want the handshake refused")
			} else if errors.As(err, &se) {
				t.Fatalf("State got an HTTP answer %v; want the connection refused", se)
			}
			if _, err := tc.c.BeginTransfer(ctx, "x", 1, "C"); err == nil {
				t.Fatal("BeginTransfer succeeded; want the handshake refused")
			}
		})
	}
	// The raw handshake of an off-roster certificate fails too.
	if err := tlsDial(e.addr, ClientTLS(e.auth, offRoster)); err == nil {
		t.Fatal("raw TLS with an off-roster certificate: read succeeded")
	}
	if got := e.server.MethodCalls(); got != calls {
		t.Fatalf("methods run for refused connections: %d, want 0", got-calls)
	}
	if got := e.record("x"); got != before {
		t.Fatalf("record changed:\n got %s\nwant %s", got, before)
	}
	// A node on the roster still gets through, so the counter is live.
	if _, err := e.client("C").State(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if got := e.server.MethodCalls(); got != calls+1 {
		t.Fatalf("method calls = %d, want %d", got, calls+1)
	}
}

// A handler reached without a verified certificate (mounted behind plain
// HTTP by mistake) refuses before routing.
func TestHandlerWithoutTLSRefusesBeforeRouting(t *testing.T) {
	e := newLocalEnv(t)
	req, _ := http.NewRequest(http.MethodPost, "http://ownerd"+PathState, strings.NewReader(`{"actor":"x"}`))
	rec := &recorder{header: http.Header{}}
	e.server.ServeHTTP(rec, req)
	if rec.status != http.StatusForbidden {
		t.Fatalf("status %d, want 403", rec.status)
	}
	if e.server.MethodCalls() != 0 {
		t.Fatal("a method ran without a caller")
	}
}

type recorder struct {
	header http.Header
	status int
	body   strings.Builder
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(s int)           { r.status = s }

// No method takes a node name: a body that names a caller is malformed, and
// the node the certificate names is the one the state machine checks.
// Reference: chapter "The ownership service", section "Who is calling:
// learned, never told".
func TestCallerComesFromTheConnection(t *testing.T) {
	e := newLocalEnv(t)
	e.ownedBy("x", "A")
	ctx := ctxT(t)
	b := e.client("B")
	status, err := b.Post(ctx, PathBeginTransfer, []byte(`{"actor":"x","epoch":1,"to":"B","caller":"A"}`))
	if status != http.StatusBadRequest {
		t.Fatalf("status %d, want 400", status)
	}
	wantCode(t, err, CodeMalformed)
	_, err = b.BeginTransfer(ctx, "x", 1, "B")
	se := wantCode(t, err, CodeWrongCaller)
	if se.Rule != "only the owner may begin a transfer" || !strings.Contains(se.Detail, "caller B is not the owner A") {
		t.Fatalf("error %v: want the owner rule naming B and A", se)
	}
	if !errors.Is(err, ownership.ErrWrongNode) {
		t.Fatal("errors.Is(err, ownership.ErrWrongNode) is false")
	}
	if s, err := e.client("A").BeginTransfer(ctx, "x", 1, "B"); err != nil || s != (ownership.Transferring{From: "A", To: "B", OldEpoch: 1, NewEpoch: 2}) {
		t.Fatalf("A's BeginTransfer = %v, %v", s, err)
	}
}

// recording wraps a Registry and records every Request that reaches it.
type recording struct {
	Registry
	mu  sync.Mutex
	ops []ownership.Op
}

func (r *recording) Apply(ctx context.Context, req Request) (Result, error) {
	r.mu.Lock()
	r.ops = append(r.ops, req.Op)
	r.mu.Unlock()
	return r.Registry.Apply(ctx, req)
}

// Revoke (force) is the coordinator's transition: the wire has exactly the
// five node-facing methods, and no request of any shape, to any path,
// brings a Revoke, Abort or Create to the registry. In process, Revoke works.
// Reference: chapter "The ownership service", section "Why force is not on
// the wire".
func TestRevokeIsNotOnTheWire(t *testing.T) {
	base := newLocalEnv(t)
	rec := &recording{Registry: base.reg}
	e := startEnv(t, base.auth, rec)
	if _, err := e.server.Create(ctxT(t), "x", "A"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client("A").Acquire(ctxT(t), "x", 1); err != nil {
		t.Fatal(err)
	}
	want := []string{PathAcquire, PathBeginTransfer, PathCompleteRelease, PathState, PathValidate}
	if got := e.server.Routes(); !slices.Equal(got, want) {
		t.Fatalf("routes %v, want %v", got, want)
	}
	ctx := ctxT(t)
	a := e.client("A")
	probes := []struct{ path, body string }{
		{"/v1/revoke", `{"actor":"x","to":"A"}`},
		{"/v1/force", `{"actor":"x","to":"A"}`},
		{"/v1/abort", `{"actor":"x"}`},
		{"/v1/create", `{"actor":"y","to":"A"}`},
		{"/revoke", `{"actor":"x"}`},
		{PathBeginTransfer, `{"actor":"x","epoch":1,"to":"B","op":"Revoke"}`},
		{PathCompleteRelease, `{"actor":"x","epoch":1,"op":"Abort"}`},
		{PathAcquire, `{"actor":"x","epoch":1,"force":true}`},
		{PathState, `{"actor":"x","op":"Revoke","to":"A"}`},
		{PathBeginTransfer, `{"actor":"x","epoch":1,"to":"B","Op":"Revoke"}`},
		{PathBeginTransfer, `{"actor":"x","epoch":1,"to":"B","caller":""}`},
		{"/v1/begin-transfer/../revoke", `{"actor":"x","to":"A"}`},
		{"/V1/REVOKE", `{"actor":"x","to":"A"}`},
		{"//v1/revoke", `{"actor":"x","to":"A"}`},
		{"/v1/revoke?op=Revoke", `{"actor":"x","to":"A"}`},
	}
	rec.mu.Lock()
	rec.ops = nil
	rec.mu.Unlock()
	for _, p := range probes {
		status, err := a.Post(ctx, p.path, []byte(p.body))
		if err == nil {
			t.Errorf("POST %s %s: accepted (status %d)", p.path, p.body, status)
		}
	}
	rec.mu.Lock()
	reached := slices.Clone(rec.ops)
	rec.mu.Unlock()
	if len(reached) != 0 {
		t.Fatalf("requests reached the registry with ops %v; want none", reached)
	}
	if got := e.record("x"); !strings.Contains(got, `"kind":"Owned","owner":"A","epoch":1`) {
		t.Fatalf("record changed: %s", got)
	}
	// The coordinator, in process, can revoke.
	s, err := e.server.Revoke(ctx, "x", "B")
	if err != nil || s != (ownership.Unowned{Epoch: 2, IntendedOwner: "B"}) {
		t.Fatalf("Revoke = %v, %v; want Unowned(2, B)", s, err)
	}
	if !slices.Equal(rec.ops, []ownership.Op{ownership.OpRevoke}) {
		t.Fatalf("ops %v, want [Revoke]", rec.ops)
	}
}

// A full handover over the wire: begin (owner), release (outgoing owner),
// acquire (intended owner), with the epoch advancing at the start.
// Reference: chapter "One owner at a time", section "The epoch
// moves first".
func TestHandoverOverTheWire(t *testing.T) {
	e := newLocalEnv(t)
	tokA := e.ownedBy("x", "A")
	ctx := ctxT(t)
	a, b := e.client("A"), e.client("B")
	if tokA != (ownership.Token{Actor: "x", Epoch: 1, Holder: "A"}) {
		t.Fatalf("A's token %v", tokA)
	}
	steps := []struct {
		do   func() (ownership.State, error)
		want ownership.State
	}{
		{func() (ownership.State, error) { return a.BeginTransfer(ctx, "x", 1, "B") }, ownership.Transferring{From: "A", To: "B", OldEpoch: 1, NewEpoch: 2}},
		{func() (ownership.State, error) { return b.State(ctx, "x") }, ownership.Transferring{From: "A", To: "B", OldEpoch: 1, NewEpoch: 2}},
		{func() (ownership.State, error) { return a.CompleteRelease(ctx, "x", 1) }, ownership.Unowned{Epoch: 2, IntendedOwner: "B"}},
	}
	for i, s := range steps {
		got, err := s.do()
		if err != nil || got != s.want {
			t.Fatalf("step %d: %v, %v; want %v", i, got, err, s.want)
		}
	}
	tokB, err := b.Acquire(ctx, "x", 2)
	if err != nil || tokB != (ownership.Token{Actor: "x", Epoch: 2, Holder: "B"}) {
		t.Fatalf("B's Acquire = %v, %v", tokB, err)
	}
	v, err := b.Validate(ctx, tokA)
	if err != nil || v.Valid || !v.Issued || v.CurrentEpoch != 2 {
		t.Fatalf("Validate(A's token) = %+v, %v; want stale, issued, current 2", v, err)
	}
	v, err = a.Validate(ctx, tokB)
	if err != nil || !v.Valid || !v.Issued {
		t.Fatalf("Validate(B's token) = %+v, %v; want valid and issued", v, err)
	}
}

// Bad input gets an *Error naming the broken rule and changes no state:
// malformed bodies, the wrong caller, a stale or future epoch, an unknown
// actor, a transition from the wrong state, a bad target.
// Reference: chapter "The ownership service", section "The methods on the
// wire".
func TestBadInputChangesNoState(t *testing.T) {
	e := newLocalEnv(t)
	e.ownedBy("x", "A")
	ctx := ctxT(t)
	a := e.client("A")
	// Move x to epoch 3, Owned by A, so there are stale epochs to present.
	for _, step := range []func() error{
		func() error { _, err := a.BeginTransfer(ctx, "x", 1, "B"); return err },
		func() error { _, err := a.CompleteRelease(ctx, "x", 1); return err },
		func() error { _, err := e.client("B").Acquire(ctx, "x", 2); return err },
		func() error { _, err := e.client("B").BeginTransfer(ctx, "x", 2, "A"); return err },
		func() error { _, err := e.client("B").CompleteRelease(ctx, "x", 2); return err },
		func() error { _, err := a.Acquire(ctx, "x", 3); return err },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name   string
		node   ownership.NodeID
		path   string
		body   string
		code   Code
		inRule string
	}{
		{"not JSON", "A", PathBeginTransfer, `{"actor":`, CodeMalformed, "JSON object"},
		{"empty body", "A", PathBeginTransfer, ``, CodeMalformed, "JSON object"},
		{"two objects", "A", PathBeginTransfer, `{"actor":"x","epoch":3,"to":"B"}{}`, CodeMalformed, "JSON object"},
		{"trailing data", "A", PathBeginTransfer, `{"actor":"x","epoch":3,"to":"B"} x`, CodeMalformed, "JSON object"},
		{"unknown field", "A", PathBeginTransfer, `{"actor":"x","epoch":3,"to":"B","x":1}`, CodeMalformed, "JSON object"},
		{"array", "A", PathAcquire, `[1,2]`, CodeMalformed, "JSON object"},
		{"epoch is a string", "A", PathBeginTransfer, `{"actor":"x","epoch":"3","to":"B"}`, CodeMalformed, "JSON object"},
		{"negative epoch", "A", PathBeginTransfer, `{"actor":"x","epoch":-1,"to":"B"}`, CodeMalformed, "JSON object"},
		{"missing epoch", "A", PathBeginTransfer, `{"actor":"x","to":"B"}`, CodeMalformed, "JSON object"},
		{"epoch past 2^64-1", "A", PathBeginTransfer, `{"actor":"x","epoch":18446744073709551616,"to":"B"}`, CodeMalformed, "JSON object"},
		{"fractional epoch", "A", PathBeginTransfer, `{"actor":"x","epoch":3.5,"to":"B"}`, CodeMalformed, "JSON object"},
		{"epoch in exponent form", "A", PathBeginTransfer, `{"actor":"x","epoch":3e0,"to":"B"}`, CodeMalformed, "JSON object"},
		{"null body", "A", PathBeginTransfer, `null`, CodeMalformed, "JSON object"},
		{"token epoch past 2^64-1", "A", PathValidate, `{"token":{"actor":"x","epoch":18446744073709551616,"holder":"A"}}`, CodeMalformed, "JSON object"},
		{"missing actor", "A", PathBeginTransfer, `{"epoch":3,"to":"B"}`, CodeMalformed, "JSON object"},
		{"bad actor name", "A", PathState, `{"actor":"x y"}`, CodeMalformed, "JSON object"},
		{"huge body", "A", PathState, `{"actor":"` + strings.Repeat("x", 5000) + `"}`, CodeMalformed, "JSON object"},
		{"unknown actor", "A", PathBeginTransfer, `{"actor":"nosuch","epoch":3,"to":"B"}`, CodeUnknownActor, "coordinator has created it"},
		{"unknown actor state", "A", PathState, `{"actor":"nosuch"}`, CodeUnknownActor, "coordinator has created it"},
		{"unknown actor validate", "A", PathValidate, `{"token":{"actor":"nosuch","epoch":1,"holder":"A"}}`, CodeUnknownActor, "coordinator has created it"},
		{"wrong caller begins", "B", PathBeginTransfer, `{"actor":"x","epoch":3,"to":"C"}`, CodeWrongCaller, "only the owner may begin a transfer"},
		{"wrong state release", "A", PathCompleteRelease, `{"actor":"x","epoch":3}`, CodeWrongState, "release completes only from Transferring"},
		{"wrong state acquire", "A", PathAcquire, `{"actor":"x","epoch":3}`, CodeWrongState, "acquired only from Unowned"},
		{"stale epoch", "A", PathBeginTransfer, `{"actor":"x","epoch":1,"to":"B"}`, CodeStaleEpoch, "an older one is stale"},
		{"future epoch", "A", PathBeginTransfer, `{"actor":"x","epoch":9,"to":"B"}`, CodeWrongEpoch, "never issued to it"},
		{"transfer to self", "A", PathBeginTransfer, `{"actor":"x","epoch":3,"to":"A"}`, CodeInvalidNode, "another node"},
		{"target off the roster", "A", PathBeginTransfer, `{"actor":"x","epoch":3,"to":"mallory"}`, CodeInvalidNode, "on the roster"},
		{"empty target", "A", PathBeginTransfer, `{"actor":"x","epoch":3,"to":""}`, CodeInvalidNode, "on the roster"},
	}
	before := e.record("x")
	floorBefore := readFile(t, e.floor)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, err := e.client(tc.node).Post(ctx, tc.path, []byte(tc.body))
			se := wantCode(t, err, tc.code)
			if !strings.Contains(se.Rule, tc.inRule) {
				t.Errorf("rule %q does not contain %q", se.Rule, tc.inRule)
			}
			if want := errorStatus[tc.code]; status != want {
				t.Errorf("status %d, want %d", status, want)
			}
			if got := e.record("x"); got != before {
				t.Fatalf("record changed:\n got %s\nwant %s", got, before)
			}
		})
	}
	// The wrong HTTP method is refused.
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+e.addr+PathState, nil)
	res, err := a.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest {
		t.Fatalf("GET: status %d, want 400", res.StatusCode)
	}
	if got := e.record("x"); got != before {
		t.Fatal("record changed by a GET")
	}
	if got := readFile(t, e.floor); got != floorBefore {
		t.Fatalf("floor changed: %q -> %q", floorBefore, got)
	}
	// Stale epochs match the state machine's sentinel through the client.
	_, err = a.BeginTransfer(ctx, "x", 2, "B")
	if !errors.Is(err, ownership.ErrStaleEpoch) {
		t.Fatalf("BeginTransfer at a stale epoch: %v; want ErrStaleEpoch", err)
	}
	// Coordinator input is checked too.
	if _, err := e.server.Create(ctx, "x", "A"); !errors.Is(err, ErrActorExists) {
		t.Fatalf("Create of an existing actor: %v", err)
	}
	if _, err := e.server.Create(ctx, "y", "mallory"); !errors.Is(err, ownership.ErrInvalidNode) {
		t.Fatalf("Create for an off-roster node: %v", err)
	}
	if _, err := e.server.Abort(ctx, "x"); !errors.Is(err, ownership.ErrWrongState) {
		t.Fatalf("Abort while Owned: %v", err)
	}
	if got := e.record("x"); got != before {
		t.Fatalf("record changed:\n got %s\nwant %s", got, before)
	}
}

// A body must say one thing only. A field given twice (Go's decoder keeps
// the last, many others the first) or spelt in another case (Go's decoder
// matches "EPOCH" to epoch, others do not) could mean one request to a
// proxy or log and another to the server, so each is malformed, at the top
// level and inside the token. Before the fix, the repeated epoch below
// began a transfer at epoch 1 while a first-wins reader saw epoch 9.
// Reference: chapter "The ownership service", section "The methods on the
// wire".
func TestAmbiguousJSONIsMalformed(t *testing.T) {
	e := newLocalEnv(t)
	e.ownedBy("x", "A")
	ctx := ctxT(t)
	a := e.client("A")
	before, floorBefore := e.record("x"), readFile(t, e.floor)
	cases := []struct{ name, path, body, inDetail string }{
		{"epoch twice", PathBeginTransfer, `{"actor":"x","epoch":9,"epoch":1,"to":"B"}`, `"epoch" appears twice`},
		{"actor twice", PathAcquire, `{"actor":"y","actor":"x","epoch":1}`, `"actor" appears twice`},
		{"field in upper case", PathBeginTransfer, `{"actor":"x","EPOCH":1,"to":"B"}`, `"EPOCH"`},
		{"field capitalised", PathState, `{"Actor":"x"}`, `"Actor"`},
		{"token field twice", PathValidate, `{"token":{"actor":"x","epoch":1,"holder":"B","holder":"A"}}`, `"holder" appears twice`},
		{"token field capitalised", PathValidate, `{"token":{"actor":"x","epoch":1,"Holder":"A"}}`, `"Holder"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, err := a.Post(ctx, tc.path, []byte(tc.body))
			se := wantCode(t, err, CodeMalformed)
			if status != 400 || !strings.Contains(se.Detail, tc.inDetail) {
				t.Fatalf("status %d, %v; want 400 naming %s", status, se, tc.inDetail)
			}
		})
	}
	if e.record("x") != before || readFile(t, e.floor) != floorBefore {
		t.Fatalf("state changed: %s", e.record("x"))
	}
}

// Every method takes application/json; another content type is malformed.
// A path that is no method gets an error naming the rule, like every other
// refusal, not a bare 404 page.
func TestWrongContentTypeAndUnknownPathNameTheRule(t *testing.T) {
	e := newLocalEnv(t)
	e.ownedBy("x", "A")
	ctx := ctxT(t)
	a := e.client("A")
	before := e.record("x")
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", ""} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+e.addr+PathBeginTransfer, strings.NewReader(`{"actor":"x","epoch":1,"to":"B"}`))
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		res, err := a.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		se := wantCode(t, decodeError(res.StatusCode, body), CodeMalformed)
		if res.StatusCode != http.StatusUnsupportedMediaType || !strings.Contains(se.Rule, "application/json") {
			t.Errorf("Content-Type %q: status %d, %v; want 415 naming application/json", ct, res.StatusCode, se)
		}
	}
	for _, p := range []string{"/v1/revoke", "/", "/v1/state/", "/v1/State"} {
		status, err := a.Post(ctx, p, []byte(`{"actor":"x"}`))
		se := wantCode(t, err, CodeUnknownMethod)
		if status != http.StatusNotFound || !strings.Contains(se.Rule, "not on the wire") {
			t.Errorf("POST %s: status %d, %v; want 404 with the rule", p, status, se)
		}
	}
	if e.record("x") != before {
		t.Fatal("state changed")
	}
	if _, err := e.client("A").State(ctx, "x"); err != nil {
		t.Fatalf("application/json; the client's own requests: %v", err)
	}
}

// A client built with no voter addresses reports that, for every call,
// instead of dividing by zero.
func TestClientWithoutAddressesFails(t *testing.T) {
	c := clientFor(t, newAuthority(t), "A")
	ctx := ctxT(t)
	if _, err := c.State(ctx, "x"); err == nil || !strings.Contains(err.Error(), "no voter addresses") {
		t.Fatalf("State: %v; want an error naming the missing addresses", err)
	}
	if _, err := c.Post(ctx, PathState, []byte(`{"actor":"x"}`)); err == nil || !strings.Contains(err.Error(), "no voter addresses") {
		t.Fatalf("Post: %v; want an error naming the missing addresses", err)
	}
}

// Headers that proxies use to pass a client's identity along (a forwarded
// client certificate, a user name) are not read: B sending them as A is
// still B.
func TestIdentityHeadersAreIgnored(t *testing.T) {
	e := newLocalEnv(t)
	e.ownedBy("x", "A")
	ctx := ctxT(t)
	b := e.client("B")
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+e.addr+PathBeginTransfer, strings.NewReader(`{"actor":"x","epoch":1,"to":"C"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-Client-Cert", "Subject=\"CN=A\"")
	req.Header.Set("X-Ssl-Client-S-Dn", "CN=A")
	req.Header.Set("X-Node", "A")
	req.Header.Set("X-Remote-User", "A")
	req.SetBasicAuth("A", "")
	res, err := b.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	se := wantCode(t, decodeError(res.StatusCode, body), CodeWrongCaller)
	if !strings.Contains(se.Detail, "caller B") {
		t.Fatalf("%v; want the caller to be B", se)
	}
}
