// Command epoch prints the current epoch.
package main

import "fmt"

func main() {
	fmt.Println("epoch", 1+3)
}
