package greet

import (
	"fmt"
	"testing"
)

func TestGreet(t *testing.T) {
	if got := Greet(3); got != "hello, epoch 3" {
		t.Fatalf("Greet(3) = %q", got)
	}
}

func ExampleGreet() {
	fmt.Println(Greet(4))
	// Output: hello, epoch 4
}
