// Package broken does not compile.
package broken

// Epoch is not a number.
func Epoch() int {
	return "three"
}
