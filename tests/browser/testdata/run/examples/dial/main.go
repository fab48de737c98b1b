// Command dial listens and dials on loopback: in a browser page it runs on
// the standard library's in-process network for js/wasm.
package main

import (
	"bufio"
	"fmt"
	"net"
)

func main() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		fmt.Fprintln(c, "epoch 7")
		c.Close()
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		fmt.Println(err)
		return
	}
	line, _ := bufio.NewReader(c).ReadString('\n')
	c.Close()
	fmt.Print("listened on loopback, read: ", line)
}
