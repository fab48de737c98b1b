// Command disk writes a file, which a browser page has no disk for.
package main

import (
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	dir, err := os.MkdirTemp("", "disk")
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "epoch"), []byte("7\n"), 0o644); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println("wrote epoch 7 to disk")
}
