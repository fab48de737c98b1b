// Command fail refuses a stale epoch and exits with status 3.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Println("epoch 2 refused: holder has epoch 3")
	fmt.Fprintln(os.Stderr, "stale epoch")
	os.Exit(3)
}
