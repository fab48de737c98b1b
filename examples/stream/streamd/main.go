// Command streamd serves epoch-fenced streams over HTTP with the Durable
// Streams protocol on /v1/stream/<name>.
//
//	go run ./examples/stream/streamd -addr 127.0.0.1:4437 -data /tmp/streamd
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/ownership-book/ownership/examples/stream"
	"github.com/ownership-book/ownership/examples/stream/server"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:4437", "HTTP listen address (loopback by default)")
	data := flag.String("data", "", "data directory for the Raft log, stable store and snapshots (\"\": a temporary one)")
	longPoll := flag.Duration("long-poll", 20*time.Second, "how long a long-poll read waits for data")
	maxBody := flag.Int64("max-body", 16<<20, "largest request body in bytes (larger: 413)")
	flag.Parse()
	_ = data

	m := stream.NewMachine()
	srv := &server.Server{M: m, A: server.Local{M: m}, LongPoll: *longPoll, MaxBody: *maxBody}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "streamd: serving on http://%s%s\n", ln.Addr(), server.Prefix)
	log.Fatal(http.Serve(ln, srv))
}
