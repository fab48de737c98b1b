// Command seq prints a D2 sequence diagram of one fenced append.
package main

import "fmt"

func main() {
	fmt.Println("shape: sequence_diagram")
	fmt.Println("A -> stream: append epoch 7")
	fmt.Println("stream -> A: 403 epoch-closed")
}
