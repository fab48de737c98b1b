// Package calc adds.
package calc

// Next returns the epoch after e.
func Next(e int) int { return e + 2 }
