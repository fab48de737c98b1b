//go:build js

package main

//bookgen:page-note memberlist's probes travel over its in-memory transport (memberlist.MockNetwork): the page's network gives UDP and TCP one port space, so the network transport cannot bind both

import (
	"log"

	"github.com/hashicorp/memberlist"
)

// pageNet connects the members in a browser page (GOOS=js), where the
// standard library's in-process network gives UDP and TCP one port space
// and memberlist's network transport, which binds both on one port,
// cannot start. The failure detector above it is the same code.
var pageNet memberlist.MockNetwork

func newTransport(name string, _ *log.Logger) (memberlist.NodeAwareTransport, int, error) {
	t := pageNet.NewTransport(name)
	_, port, err := t.FinalAdvertiseAddr("", 0)
	if err != nil {
		return nil, 0, err
	}
	return t, port, nil
}
