// Command rlimit reads the process's limit on open files: a system call
// that GOOS=js does not have, so its WebAssembly build fails.
package main

import (
	"fmt"
	"syscall"
)

func main() {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("a limit on open files")
}
