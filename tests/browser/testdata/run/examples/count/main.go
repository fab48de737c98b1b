// Command count prints the epochs it counts: a program the run panel
// offers flags for.
package main

import (
	"flag"
	"fmt"
	"strings"
)

func main() {
	n := flag.Int("n", 3, "how many epochs to count")
	word := flag.String("word", "epoch", "what to call each")
	var shout bool
	flag.BoolVar(&shout, "shout", false, "print in capitals")
	flag.Parse()
	for i := 1; i <= *n; i++ {
		line := fmt.Sprintf("%s %d", *word, i)
		if shout {
			line = strings.ToUpper(line)
		}
		fmt.Println(line)
	}
	fmt.Printf("counted %d, args %q\n", *n, flag.Args())
}
