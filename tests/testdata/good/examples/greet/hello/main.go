// Command hello prints the greeting of epoch 3.
package main

import (
	"fmt"

	"example.com/good/examples/greet"
)

func main() {
	fmt.Println(greet.Greet(3))
}
