package verify

import (
	"io/fs"
	"syscall"
)

func stampOf(fi fs.FileInfo) stamp {
	s := stamp{size: fi.Size(), mtime: fi.ModTime().UnixNano(), mode: fi.Mode()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.ctime = st.Ctim.Nano()
		s.ino = st.Ino
	}
	return s
}
