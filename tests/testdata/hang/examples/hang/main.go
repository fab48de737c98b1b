// Command hang never finishes.
package main

import "time"

func main() {
	time.Sleep(time.Hour)
}
