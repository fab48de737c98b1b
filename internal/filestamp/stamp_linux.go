//go:build linux

package filestamp

import (
	"io/fs"
	"syscall"
)

// Of returns the stamp of fi, from os.Stat or os.Lstat.
func Of(fi fs.FileInfo) Stamp {
	s := Stamp{Size: fi.Size(), Mtime: fi.ModTime().UnixNano(), Mode: fi.Mode()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.Ctime = st.Ctim.Nano()
		s.Dev, s.Ino = uint64(st.Dev), st.Ino
	}
	return s
}
