//go:build !linux

package filestamp

import "io/fs"

// Of returns the stamp of fi. Here it has no change time, device or inode:
// size, modification time and mode decide.
func Of(fi fs.FileInfo) Stamp {
	return Stamp{Size: fi.Size(), Mtime: fi.ModTime().UnixNano(), Mode: fi.Mode()}
}
