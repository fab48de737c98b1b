//go:build unix

package owner

import (
	"os"
	"syscall"
)

// lockDir takes an exclusive advisory lock (flock) on dir/lock, held until
// the returned file is closed or the process ends. It fails with ErrInUse if
// another open, in this process or another, holds it.
func lockDir(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if err == syscall.EWOULDBLOCK {
			return nil, ErrInUse
		}
		return nil, err
	}
	return f, nil
}
