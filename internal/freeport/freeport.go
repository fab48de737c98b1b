// Package freeport picks TCP ports for tests that must know a port before
// the process that listens on it starts (a voter restarted on its old
// address, a voter in another OS process that its peers dial).
//
// Asking the kernel for port 0 and closing the listener is racy: the port
// comes from the ephemeral range, and the kernel hands the same range out
// as the local port of every outgoing connection, so in a busy test run
// another connection can take it before the voter binds it. Pick therefore
// chooses from below the ephemeral range (Linux:
// /proc/sys/net/ipv4/ip_local_port_range, default 32768–60999), where only
// explicit binds land, and checks that the port is free on the host now.
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// Low is the lowest port Pick chooses; ports below it are left to services.
const Low = 10000

// ephemeralLow returns the first port of the kernel's ephemeral range, or
// 32768 (the Linux default) when it cannot be read.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil {
				return n
			}
		}
	}
	return 32768
}

// Pick returns "ip:port" for a TCP port that was free on ip a moment ago,
// chosen at random in [Low, start of the ephemeral range). When that range
// is too small (under 1,000 ports) it falls back to a kernel-chosen port.
//
// Errors: ip cannot be listened on at all (e.g. 127.0.0.2 on a host whose
// loopback does not route 127.0.0.0/8), or 100 random ports were all taken.
func Pick(ip string) (string, error) {
	hi := ephemeralLow()
	if hi-Low < 1000 {
		ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
		if err != nil {
			return "", err
		}
		defer ln.Close()
		return ln.Addr().String(), nil
	}
	var last error
	for range 100 {
		addr := net.JoinHostPort(ip, strconv.Itoa(Low+rand.IntN(hi-Low)))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			last = err
			continue
		}
		ln.Close()
		return addr, nil
	}
	return "", fmt.Errorf("freeport: no free port on %s in [%d, %d) after 100 tries: %w", ip, Low, hi, last)
}
