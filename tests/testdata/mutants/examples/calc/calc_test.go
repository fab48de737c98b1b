package calc

import (
	"fmt"
	"testing"
)

func TestNext(t *testing.T) {
	if got := Next(3); got != 4 {
		t.Fatalf("Next(3) = %d, want 4", got)
	}
}

func ExampleNext() {
	fmt.Println(Next(1))
	// Output: 2
}
