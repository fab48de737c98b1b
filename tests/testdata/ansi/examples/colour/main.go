// Command colour prints its verdicts with terminal colour escapes, as
// many command-line tools do, to check that bookgen compares, blesses and
// shows the text without them.
package main

import "fmt"

func main() {
	fmt.Println("\x1b]0;colour\x07holder: \x1b[1mnode-1\x1b[0m")
	fmt.Println("epoch 3: \x1b[32mgranted\x1b[0m")
	fmt.Println("epoch 2: \x1b[1;31mfenced\x1b[0m")
}
