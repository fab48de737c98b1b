// Command disk keeps an epoch in a file the way a holder keeps its
// state: it writes a temporary file, syncs it, renames it over the old
// one, lists the folder and reads the file back. In a browser page the
// files are the page's in-memory file system, gone when the run ends.
package main

import (
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	if err := run(); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
}

func run() error {
	dir, err := os.MkdirTemp("", "disk")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := os.Mkdir(filepath.Join(dir, "state"), 0o755); err != nil {
		return err
	}
	for epoch := 6; epoch <= 7; epoch++ {
		tmp := filepath.Join(dir, "state", "epoch.tmp")
		f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(f, "%d\n", epoch); err != nil {
			return err
		}
		if err := f.Sync(); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		if err := os.Rename(tmp, filepath.Join(dir, "state", "epoch")); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir(filepath.Join(dir, "state"))
	if err != nil {
		return err
	}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			return err
		}
		fmt.Printf("state/%s: %d bytes\n", e.Name(), info.Size())
	}
	data, err := os.ReadFile(filepath.Join(dir, "state", "epoch"))
	if err != nil {
		return err
	}
	fmt.Printf("read back epoch %s", data)
	if _, err := os.Stat(filepath.Join(dir, "state", "epoch.tmp")); !os.IsNotExist(err) {
		return fmt.Errorf("epoch.tmp still there after the rename (%v)", err)
	}
	return nil
}
