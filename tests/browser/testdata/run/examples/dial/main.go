// Command dial opens a socket, so it cannot run in a browser.
package main

import (
	"fmt"
	"net"
)

func main() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	l.Close()
	fmt.Println("listened on loopback")
}
