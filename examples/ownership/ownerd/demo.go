package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ownership-book/ownership/examples/ownership"
	"github.com/ownership-book/ownership/examples/ownership/service"
)

// demo performs the scenario the book shows and prints what each party
// sees. Every line is a fact that does not depend on ports or timing; any
// outcome other than the expected one is returned as an error.
func demo(ctx context.Context, c *cluster, w io.Writer) error {
	a, err := c.client("A")
	if err != nil {
		return err
	}
	defer a.Close()
	b, err := c.client("B")
	if err != nil {
		return err
	}
	defer b.Close()
	kv, err := c.client("kv")
	if err != nil {
		return err
	}
	defer kv.Close()
	checked, unchecked := service.NewStore("x", kv), service.NewUncheckedStore()
	say := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	step := func(who, what string, result any) { say("%-12s %-28s -> %v", who, what, result) }
	// more continues the line before it, indented under the "what" column.
	more := func(text string) { say("%13s%s", "", text) }

	voters := "1 voter"
	if len(c.voters) > 1 {
		voters = fmt.Sprintf("%d voters", len(c.voters))
	}
	say("ownership service: Raft group of %s, roster %v, mutual TLS", voters, roster)

	// ANCHOR: demo_handover
	s, err := c.coordinate(ctx, func(srv *service.Server) (ownership.State, error) { return srv.Create(ctx, "x", "A") })
	if err != nil {
		return err
	}
	step("coordinator", "Create(x for A)", s)
	tokA, err := a.Acquire(ctx, "x", 1)
	if err != nil {
		return err
	}
	step("A", "acquire x at epoch 1", tokA)
	if err := putBoth(ctx, say, checked, unchecked, "A", tokA, "hello from A"); err != nil {
		return err
	}
	if s, err = a.BeginTransfer(ctx, "x", 1, "B"); err != nil {
		return err
	}
	step("A", "begin transfer of x to B", s)
	_, err = b.CompleteRelease(ctx, "x", 1)
	if !errors.Is(err, ownership.ErrWrongNode) {
		return fmt.Errorf("node B's CompleteRelease: %v, want refused", err)
	}
	var refusal *service.Error
	if !errors.As(err, &refusal) {
		return fmt.Errorf("node B's CompleteRelease: %v, want a *service.Error", err)
	}
	step("B", "complete release of x", "refused, "+string(refusal.Code)+":")
	more(refusal.Detail)
	more("rule: " + refusal.Rule)
	if s, err = a.CompleteRelease(ctx, "x", 1); err != nil {
		return err
	}
	step("A", "complete release of x", s)
	tokB, err := b.Acquire(ctx, "x", 2)
	if err != nil {
		return err
	}
	step("B", "acquire x at epoch 2", tokB)
	if err := putBoth(ctx, say, checked, unchecked, "B", tokB, "hello from B"); err != nil {
		return err
	}
	// ANCHOR_END: demo_handover

	// ANCHOR: demo_stale
	late := "late write from A"
	say("%-12s put greeting=%q with %v, delayed in the network:", "A", late, tokA)
	err = checked.Put(ctx, tokA, "greeting", late)
	if !errors.Is(err, service.ErrFenced) {
		return fmt.Errorf("checked store took the stale write: %v", err)
	}
	say("  checked store:   refused:")
	say("    %v", err)
	if err := unchecked.Put(ctx, tokA, "greeting", late); err != nil {
		return err
	}
	say("  unchecked store: accepted")
	for _, st := range []struct {
		name  string
		store *service.Store
	}{{"checked", checked}, {"unchecked", unchecked}} {
		e, _ := st.store.Get("greeting")
		say("greeting in the %-9s store: %q, written with %v", st.name, e.Value, e.Token)
	}
	// ANCHOR_END: demo_stale

	// Identity and the wire surface.
	before := c.methodCalls()
	mallory, err := c.client("mallory")
	if err != nil {
		return err
	}
	defer mallory.Close()
	_, err = mallory.State(ctx, "x")
	var se *service.Error
	if err == nil || errors.As(err, &se) || c.methodCalls() != before {
		return fmt.Errorf("mallory's request: %v, %d methods ran; want the handshake refused", err, c.methodCalls()-before)
	}
	step("mallory", "read state of x", "refused in the TLS handshake:")
	more("not on the roster, so no method ran")
	status, err := a.Post(ctx, "/v1/revoke", []byte(`{"actor":"x","to":"A"}`))
	if status != 404 || !errors.Is(err, service.ErrUnknownMethod) {
		return fmt.Errorf("POST /v1/revoke: status %d, %v; want 404, unknown method", status, err)
	}
	step("A", "POST /v1/revoke", fmt.Sprintf("HTTP %d: revoke is not on the wire", status))
	if s, err = c.coordinate(ctx, func(srv *service.Server) (ownership.State, error) { return srv.Revoke(ctx, "x", "A") }); err != nil {
		return err
	}
	step("coordinator", "Revoke(x for A), in process", s)
	v, err := kv.Validate(ctx, tokB)
	if err != nil {
		return err
	}
	step("kv", "validate "+tokB.String(), fmt.Sprintf("valid=%v (current epoch %d)", v.Valid, v.CurrentEpoch))
	return nil
}

func putBoth(ctx context.Context, say func(string, ...any), checked, unchecked *service.Store, who string, t ownership.Token, value string) error {
	for _, s := range []*service.Store{checked, unchecked} {
		if err := s.Put(ctx, t, "greeting", value); err != nil {
			return err
		}
	}
	say("%-12s put greeting=%q with %v -> accepted by both stores", who, value, t)
	return nil
}
