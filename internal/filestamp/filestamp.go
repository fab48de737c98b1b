// Package filestamp says when a file's status can vouch for its content.
// bookgen remembers what it computed from a file (a chapter's text, a
// file's hash, a decoded cache entry) under the file's stamp, and uses the
// value again while the stamp is the same, so that a rebuild after a save
// reads only what changed.
//
// A stamp can stay the same across a write that lands within the file
// system's timestamp granularity of the read (git calls such an index entry
// "racily clean"). So a value may be remembered only when the file's newest
// timestamp is more than a window older than the moment it was read
// (Settled); a file written more recently is read again each time, which
// costs only the files just edited.
package filestamp

import (
	"io/fs"
	"time"
)

// RacyWindow is how long after a file's last change a value computed from
// it is not remembered: more than any file system's timestamp granularity
// (FAT's is 2 s) and than the clock steps of a network file system's
// server.
const RacyWindow = 3 * time.Second

// Stamp is what stat says of a path that changes when its content does:
// size, modification and change times (ns since the Unix epoch), device,
// inode and mode. Change time, device and inode are zero where the
// platform does not give them (stamp_other.go); there a write that keeps
// a file's size and modification time is not seen. Stamps are comparable
// with ==.
type Stamp struct {
	Size         int64
	Mtime, Ctime int64
	Dev, Ino     uint64
	Mode         fs.FileMode
}

// Newest is the later of the stamp's modification and change times, in ns
// since the Unix epoch.
func (s Stamp) Newest() int64 { return max(s.Mtime, s.Ctime) }

// Settled reports whether a value computed from a file read at time read,
// whose stamp is s, may be remembered under s: the file's newest timestamp
// is more than window before the read. A window of 0 means RacyWindow.
func (s Stamp) Settled(read time.Time, window time.Duration) bool {
	if window == 0 {
		window = RacyWindow
	}
	return read.UnixNano()-s.Newest() > int64(window)
}
