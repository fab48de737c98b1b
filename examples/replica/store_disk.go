//go:build !js

package replica

import raftboltdb "github.com/hashicorp/raft-boltdb/v2"

// openDiskStore opens (or creates) the raft-boltdb file at path, the log
// and stable store of a voter with a data directory.
func openDiskStore(path string) (diskStore, error) {
	return raftboltdb.New(raftboltdb.Options{Path: path})
}
