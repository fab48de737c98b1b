// Package calc counts epochs.
package calc

// Next returns the epoch after e.
func Next(e int) int {
	return e + 2
}

// Prev returns the epoch before e (a function the file no longer has).
func Prev(e int) int {
	// step 0
	// step 1
	// step 2
	// step 3
	// step 4
	// step 5
	// step 6
	// step 7
	// step 8
	// step 9
	// step 10
	// step 11
	// step 12
	// step 13
	// step 14
	// step 15
	// step 16
	// step 17
	// step 18
	// step 19
	return e - 1
}
