// Command fail refuses a stale epoch and exits with status 3.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Println("epoch 2 refused: holder has epoch 3")
	fmt.Fprintln(os.Stderr, "stale epoch: the write of epoch 2 arrived after the holder's epoch 3 was granted, so the resource refused it and kept the newer state")
	os.Exit(3)
}
