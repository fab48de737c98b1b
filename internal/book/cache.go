package book

import (
	"io/fs"
	"sync"
	"time"
)

// Cache keeps the chapter files a Load read, so that the next Load of the
// same book (bookgen serve, after an edit) reads again only the chapters
// whose file changed: reading every chapter of a 1,000-chapter book is
// milliseconds on the path from a save to the reload. A chapter's text is
// taken from the cache when its file's status (os.Stat after symbolic
// links: size, modification time, mode and, where the system has them,
// inode, device and change time) is the one it had when it was read, and
// its modification time was more than racyWindow older than that read:
// file systems stamp times coarsely, so a file written again just after it
// was read can keep its modification time, and such a file is read again
// until its time is safely in the past. Everything else Load checks (the
// summary, book.toml, whether each file exists, is regular and inside the
// repository) is checked on every Load. The zero Cache is ready; a nil
// *Cache caches nothing. A Cache is safe for concurrent use.
type Cache struct {
	mu    sync.Mutex
	files map[string]cachedFile // by absolute path
	hits  int                   // chapters taken from the cache (tests)
}

// racyWindow is how much older than its read a file's modification time
// must be for its status to vouch for its content.
const racyWindow = time.Second

type cachedFile struct {
	stat fileStat
	src  []byte
}

// fileStat is what Cache compares of a file's status.
type fileStat struct {
	size  int64
	mtime time.Time
	mode  fs.FileMode
	sys   sysStat // inode, device, change time (stat_linux.go)
}

func statOf(fi fs.FileInfo) fileStat {
	return fileStat{size: fi.Size(), mtime: fi.ModTime(), mode: fi.Mode(), sys: sysStatOf(fi)}
}

// Load is the package's Load through c.
func (c *Cache) Load(root string) (*Book, error) {
	return load(root, "", c)
}

// LoadDir is the package's LoadDir through c.
func (c *Cache) LoadDir(root, dir string) (*Book, error) {
	return load(root, dir, c)
}

func (c *Cache) get(file string, fi fs.FileInfo) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.files[file]
	if !ok || e.stat != statOf(fi) {
		return nil, false
	}
	c.hits++
	return e.src, true
}

// put remembers src, the text of file read at time read, when its status
// fi can vouch for it later (see racyWindow).
func (c *Cache) put(file string, fi fs.FileInfo, src []byte, read time.Time) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.files == nil {
		c.files = map[string]cachedFile{}
	}
	if !fi.ModTime().Before(read.Add(-racyWindow)) {
		delete(c.files, file)
		return
	}
	c.files[file] = cachedFile{stat: statOf(fi), src: src}
}
