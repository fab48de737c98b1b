//go:build js

package replica

import "errors"

// openDiskStore refuses a data directory in a browser page (GOOS=js): bolt
// needs mmap and file locks, which the page does not have. A voter there
// keeps its log in memory (Config.Dir empty), through the same Open.
func openDiskStore(path string) (diskStore, error) {
	return nil, errors.New("a data directory needs a disk, which a browser page does not have; leave Config.Dir empty to keep the log in memory")
}
