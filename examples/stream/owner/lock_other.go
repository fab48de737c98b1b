//go:build !unix

package owner

import "os"

// lockDir opens dir/lock. Without flock this platform gets no protection
// against a second open of one directory.
func lockDir(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
}
