//go:build !js

package main

import (
	"log"

	"github.com/hashicorp/memberlist"
)

// newTransport binds memberlist's network transport (UDP for probes, TCP
// for streams) to 127.0.0.1 on a free port, and returns it with the port.
func newTransport(name string, quiet *log.Logger) (memberlist.NodeAwareTransport, int, error) {
	var nt *memberlist.NetTransport
	var err error
	for range 10 { // TCP and UDP must get the same free port; retry a race
		nt, err = memberlist.NewNetTransport(&memberlist.NetTransportConfig{BindAddrs: []string{"127.0.0.1"}, BindPort: 0, Logger: quiet})
		if err == nil {
			return nt, nt.GetAutoBindPort(), nil
		}
	}
	return nil, 0, err
}
