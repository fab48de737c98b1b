package cluster_test

import (
	"io"
	"net"
	"sync"
)

// proxy is a TCP proxy in front of one voter's Raft address. Each voter
// binds its Raft transport to its own loopback address (127.0.0.2,
// 127.0.0.3, …) and dials its peers from it, so the proxy knows which voter
// a connection comes from by its source address. allow decides, per source
// address, whether a connection may pass; cutting closes the connections
// that may no longer pass, and refuses new ones until healed.
type proxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	allow func(src string) bool
	conns map[net.Conn]string // client side → source IP
}

func newProxy(listen, target string) (*proxy, error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, err
	}
	p := &proxy{ln: ln, target: target, allow: func(string) bool { return true }, conns: map[net.Conn]string{}}
	go p.accept()
	return p, nil
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func srcIP(c net.Conn) string {
	host, _, _ := net.SplitHostPort(c.RemoteAddr().String())
	return host
}

func (p *proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		src := srcIP(c)
		p.mu.Lock()
		ok := p.allow(src)
		if ok {
			p.conns[c] = src
		}
		p.mu.Unlock()
		if !ok {
			c.Close()
			continue
		}
		go p.pipe(c)
	}
}

func (p *proxy) pipe(c net.Conn) {
	defer func() {
		p.mu.Lock()
		delete(p.conns, c)
		p.mu.Unlock()
		c.Close()
	}()
	u, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer u.Close()
	done := make(chan struct{}, 2)
	go func() { io.Copy(u, c); done <- struct{}{} }()
	go func() { io.Copy(c, u); done <- struct{}{} }()
	<-done
}

// setAllow installs a new rule and closes every connection it refuses.
func (p *proxy) setAllow(allow func(src string) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.allow = allow
	for c, src := range p.conns {
		if !allow(src) {
			c.Close()
		}
	}
}

func (p *proxy) close() {
	p.ln.Close()
	p.setAllow(func(string) bool { return false })
}
