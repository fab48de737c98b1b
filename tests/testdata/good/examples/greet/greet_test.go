package greet

import "testing"

func TestGreet(t *testing.T) {
	if got := Greet(3); got != "hello, epoch 3" {
		t.Fatalf("Greet(3) = %q", got)
	}
}
