// Command longline prints one 2.4 MB line without a newline and then
// never ends, as a program stuck in a loop might: bookgen must report the
// timeout with a bounded excerpt of that output.
package main

import (
	"os"
	"strings"
	"time"
)

func main() {
	os.Stdout.WriteString(strings.Repeat("x", 2_400_000))
	time.Sleep(time.Hour)
}
