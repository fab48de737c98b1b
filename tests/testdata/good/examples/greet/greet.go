// Package greet greets.
package greet

import "fmt"

// ANCHOR: greet
// Greet returns the greeting of epoch e.
func Greet(e int) string {
	return fmt.Sprintf("hello, epoch %d", e)
}

// ANCHOR_END: greet
