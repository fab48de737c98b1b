// Command demo prints two decisions of the epoch rule.
package main

import (
	"fmt"

	"example.com/browserbook/examples/epoch"
)

func main() {
	for _, e := range []uint64{3, 2} {
		verdict := "refused"
		if epoch.Accept(3, e) {
			verdict = "accepted"
		}
		fmt.Printf("epoch %d %s\n", e, verdict)
	}
}
