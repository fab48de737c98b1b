// Command spawn starts another process, which a browser page cannot.
package main

import (
	"fmt"
	"os"
	"os/exec"
)

func main() {
	out, err := exec.Command("/bin/sh", "-c", "echo epoch 7").Output()
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Printf("the child printed: %s", out)
}
