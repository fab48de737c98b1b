//go:build !linux

package book

import "io/fs"

// sysStat is empty where the system's record of a file is not at hand:
// size, modification time and mode decide (see Cache).
type sysStat struct{}

func sysStatOf(fs.FileInfo) sysStat { return sysStat{} }
