package site

import (
	"errors"

	"golang.org/x/sys/unix"
)

// exchange atomically swaps the folders a and b.
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}

// processRuns reports whether a process of id pid exists (kill(pid, 0)
// succeeds or is refused for lack of permission).
func processRuns(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}
