package service

import (
	"runtime"
	"testing"
	"time"
)

// A server and its clients, once closed, leave no goroutines behind: no
// listener, connection or handler outlives them.
func TestServerAndClientsLeaveNoGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Run("handover", func(t *testing.T) {
		e := newLocalEnv(t)
		tok := e.ownedBy("x", "A")
		ctx := ctxT(t)
		if _, err := e.client("A").BeginTransfer(ctx, "x", 1, "B"); err != nil {
			t.Fatal(err)
		}
		if err := NewStore("x", e.client("kv")).Put(ctx, tok, "k", "v"); err == nil {
			t.Fatal("stale write accepted")
		}
		mallory, err := e.auth.Issue("mallory")
		if err != nil {
			t.Fatal(err)
		}
		if tlsDial(e.addr, ClientTLS(e.auth, mallory)) == nil {
			t.Fatal("mallory got through")
		}
	})
	var after int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if after = runtime.NumGoroutine(); after <= before {
			return
		}
	}
	buf := make([]byte, 1<<16)
	t.Fatalf("%d goroutines before, %d after:\n%s", before, after, buf[:runtime.Stack(buf, true)])
}
