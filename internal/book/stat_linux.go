//go:build linux

package book

import (
	"io/fs"
	"syscall"
)

// sysStat is the part of a file's status only the system's own record
// has: which file it is (device, inode) and when its status last changed,
// which no program can set back.
type sysStat struct {
	dev, ino          uint64
	ctimeSec, ctimeNs int64
}

func sysStatOf(fi fs.FileInfo) sysStat {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return sysStat{}
	}
	sec, nsec := st.Ctim.Unix()
	return sysStat{dev: uint64(st.Dev), ino: uint64(st.Ino), ctimeSec: sec, ctimeNs: nsec}
}
