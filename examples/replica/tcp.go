package replica

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/hashicorp/raft"
)

// tcpLayer is hashicorp/raft's StreamLayer over plain TCP: it listens on
// Bind, advertises Advertise (or the listener's address) and dials peers
// from Bind's IP when Bind names one.
type tcpLayer struct {
	net.Listener
	advertise net.Addr
	dialer    net.Dialer
}

// newTCPLayer listens on bind, or uses ln when it is not nil.
func newTCPLayer(ln net.Listener, bind, advertise string) (*tcpLayer, error) {
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", bind); err != nil {
			return nil, fmt.Errorf("listen on %s: %w", bind, err)
		}
	}
	l := &tcpLayer{Listener: ln, advertise: ln.Addr()}
	if advertise != "" {
		a, err := net.ResolveTCPAddr("tcp", advertise)
		if err != nil {
			ln.Close()
			return nil, fmt.Errorf("advertise address %q: %w", advertise, err)
		}
		l.advertise = a
	}
	if a, ok := ln.Addr().(*net.TCPAddr); ok && !a.IP.IsUnspecified() {
		l.dialer.LocalAddr = &net.TCPAddr{IP: a.IP}
	}
	if a, ok := l.advertise.(*net.TCPAddr); ok && a.IP.IsUnspecified() {
		ln.Close()
		return nil, errors.New("the Raft address peers dial is a wildcard address: set Config.Advertise")
	}
	return l, nil
}

// Dial implements raft.StreamLayer.
func (l *tcpLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	d := l.dialer
	d.Timeout = timeout
	return d.Dial("tcp", string(address))
}

// Addr is the address advertised to peers.
func (l *tcpLayer) Addr() net.Addr { return l.advertise }
