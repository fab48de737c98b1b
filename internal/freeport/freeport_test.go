package freeport

import (
	"net"
	"strconv"
	"testing"
)

// A picked port lies below the ephemeral range and can be listened on.
func TestPickIsBindableAndBelowEphemeralRange(t *testing.T) {
	hi := ephemeralLow()
	seen := map[string]bool{}
	for range 20 {
		addr, err := Pick("127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		_, p, _ := net.SplitHostPort(addr)
		n, _ := strconv.Atoi(p)
		if hi-Low >= 1000 && (n < Low || n >= hi) {
			t.Errorf("Pick = %s: port outside [%d, %d)", addr, Low, hi)
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("listen on picked %s: %v", addr, err)
		}
		ln.Close()
		seen[addr] = true
	}
	if len(seen) < 2 {
		t.Errorf("20 picks gave %d distinct ports: not random", len(seen))
	}
}

// An address that cannot be listened on is an error, not a loop.
func TestPickBadIP(t *testing.T) {
	if addr, err := Pick("192.0.2.1"); err == nil { // TEST-NET-1, not on this host
		t.Errorf("Pick(192.0.2.1) = %s, want an error", addr)
	}
}
