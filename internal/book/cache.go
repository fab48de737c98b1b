package book

import (
	"io/fs"
	"sync"
	"time"

	"github.com/ownership-book/ownership/internal/filestamp"
)

// Cache keeps the chapter files a Load read, so that the next Load of the
// same book (bookgen serve, after an edit) reads again only the chapters
// whose file changed: reading every chapter of a 1,000-chapter book is
// milliseconds on the path from a save to the reload. A chapter's text is
// taken from the cache when its file's stamp (os.Stat after symbolic
// links: size, modification time, mode and, where the system has them,
// inode, device and change time; package filestamp) is the one it had when
// it was read, and the stamp was settled at that read: file systems stamp
// times coarsely, so a file written again just after it was read can keep
// its stamp, and such a file is read again until its times are safely in
// the past (filestamp.RacyWindow). Everything else Load checks (the
// summary, book.toml, whether each file exists, is regular and inside the
// repository) is checked on every Load. The zero Cache is ready; a nil
// *Cache caches nothing. A Cache is safe for concurrent use.
type Cache struct {
	mu    sync.Mutex
	files map[string]cachedFile // by absolute path
	hits  int                   // chapters taken from the cache (tests)
	// window is the racy window (0: filestamp.RacyWindow); tests
	// shorten it.
	window time.Duration
}

type cachedFile struct {
	stat filestamp.Stamp
	src  []byte
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
	if !ok || e.stat != filestamp.Of(fi) {
		return nil, false
	}
	c.hits++
	return e.src, true
}

// put remembers src, the text of file read at time read, when its status
// fi can vouch for it later (its stamp is settled).
func (c *Cache) put(file string, fi fs.FileInfo, src []byte, read time.Time) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.files == nil {
		c.files = map[string]cachedFile{}
	}
	st := filestamp.Of(fi)
	if !st.Settled(read, c.window) {
		delete(c.files, file)
		return
	}
	c.files[file] = cachedFile{stat: st, src: src}
}
