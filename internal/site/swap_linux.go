package site

import "golang.org/x/sys/unix"

// exchange atomically swaps the folders a and b.
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}
