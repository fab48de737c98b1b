package replica_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ownership-book/ownership/examples/replica"
)

// TestDamagedLogEntryRefused: a voter applies 15 commands, closes, and one
// command's bytes are changed in raft.db (bbolt stores them as they are).
// Reopening must fail with ErrDamaged naming raft.db and the entry, never
// start and apply the changed bytes. Reference: Raft §5.4 (State Machine
// Safety).
func TestDamagedLogEntryRefused(t *testing.T) {
	ctx := ctxFor(t, 20*time.Second)
	dir := t.TempDir()
	addr := freeAddrs(t, 1)[0]
	cfg := fast(replica.Config{ID: "A", Dir: dir, Bind: addr, Voters: []replica.Peer{{ID: "A", Address: addr}}})
	g, err := replica.Open(cfg, &appendLog{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.WaitLeader(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range cmds("payload-", 15) {
		if _, err := g.Apply(ctx, []byte(c)); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "raft.db")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	last := []byte(cmds("payload-", 15)[14])
	if bytes.Count(b, last) == 0 {
		t.Fatalf("%s does not hold %q", file, last)
	}
	b = bytes.ReplaceAll(b, last, bytes.ToUpper(last))
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	m := &appendLog{}
	g, err = replica.Open(cfg, m)
	if err == nil {
		g.Close()
		t.Fatalf("Open on a raft.db with a changed entry succeeded")
	}
	if !errors.Is(err, replica.ErrDamaged) || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), "log entry") {
		t.Fatalf("Open: %v, want ErrDamaged naming %s and the entry", err, file)
	}
}

// TestBootstrapModes: BootstrapNever refuses empty stores (ErrNoState)
// instead of bootstrapping; BootstrapNew bootstraps them once and refuses
// stores with state (ErrBootstrapped); a later start with BootstrapNever
// opens the state.
func TestBootstrapModes(t *testing.T) {
	ctx := ctxFor(t, 20*time.Second)
	dir := t.TempDir()
	addr := freeAddrs(t, 1)[0]
	cfg := fast(replica.Config{ID: "A", Dir: dir, Bind: addr, Voters: []replica.Peer{{ID: "A", Address: addr}}})
	open := func(mode replica.BootstrapMode) (*replica.Group, error) {
		c := cfg
		c.Bootstrap = mode
		return replica.Open(c, &appendLog{})
	}
	if g, err := open(replica.BootstrapNever); !errors.Is(err, replica.ErrNoState) || !strings.Contains(fmtErr(err), dir) {
		if g != nil {
			g.Close()
		}
		t.Fatalf("BootstrapNever on an empty %s: %v, want ErrNoState naming it", dir, err)
	}
	g, err := open(replica.BootstrapNew)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.WaitLeader(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Apply(ctx, []byte("x")); err != nil {
		t.Fatal(err)
	}
	g.Close()
	if g, err := open(replica.BootstrapNew); !errors.Is(err, replica.ErrBootstrapped) {
		if g != nil {
			g.Close()
		}
		t.Fatalf("BootstrapNew on stores with state: %v, want ErrBootstrapped", err)
	}
	g, err = open(replica.BootstrapNever)
	if err != nil {
		t.Fatalf("BootstrapNever on stores with state: %v", err)
	}
	g.Close()
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestOnEmpty: Config.OnEmpty is called when the stores hold no Raft state
// and Open bootstraps nothing (no Voters: a voter waiting to be added), and
// its error stops Open, wrapped; it is not called when Open bootstraps, nor
// for stores with state.
func TestOnEmpty(t *testing.T) {
	ctx := ctxFor(t, 20*time.Second)
	dir := t.TempDir()
	addr := freeAddrs(t, 1)[0]
	errLost := errors.New("the group still counts A")
	calls := 0
	cfg := fast(replica.Config{ID: "A", Dir: dir, Bind: addr,
		OnEmpty: func() error { calls++; return errLost }})
	if g, err := replica.Open(cfg, &appendLog{}); !errors.Is(err, errLost) {
		if g != nil {
			g.Close()
		}
		t.Fatalf("Open of empty stores with no Voters: %v, want OnEmpty's error", err)
	}
	if calls != 1 {
		t.Fatalf("OnEmpty called %d times on empty stores, want 1", calls)
	}
	boot := cfg
	boot.Voters = []replica.Peer{{ID: "A", Address: addr}}
	g, err := replica.Open(boot, &appendLog{})
	if err != nil {
		t.Fatalf("Open that bootstraps: %v", err)
	}
	if _, err := g.WaitLeader(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Apply(ctx, []byte("x")); err != nil {
		t.Fatal(err)
	}
	g.Close()
	if g, err = replica.Open(cfg, &appendLog{}); err != nil {
		t.Fatalf("Open of stores with state: %v", err)
	}
	g.Close()
	if calls != 1 {
		t.Errorf("OnEmpty called %d times in all, want 1 (only for the empty stores)", calls)
	}
}
