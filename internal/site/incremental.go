package site

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sync"

	"github.com/ownership-book/ownership/internal/render"
)

// Incremental carries what one build of a site wrote to the next build of
// the same site (bookgen serve), so that a rebuild writes only the files
// whose content changed and does not even make the pages whose inputs did
// not change: after an edit to one chapter's prose that is that chapter's
// page, print.html and the search index. Set Options.Incremental to the
// same value on every build; the zero value is ready. The first build
// writes the whole site as a build without it does.
//
// In place of the atomic swap of a whole new folder, the changed files are
// written each to a temporary file and renamed over the old one, and files
// the site no longer has are removed, once the whole build has succeeded
// in memory: a failed build still changes nothing. Pages are named the
// same on every build (the search index is assets/search.json, not
// content-hashed) so that a change to the index does not change every
// page; serve sends every file with Cache-Control: no-store.
type Incremental struct {
	mu    sync.Mutex
	out   string                       // the output folder the state describes, "" before a build
	sums  map[string][sha256.Size]byte // every file of the site and the hash of its content
	pages map[string]pageInputs        // what each chapter page was made from

	// Caches of what a rebuild would otherwise make from every chapter
	// (cache.go); they do not depend on the output folder.
	sidebar  sidebarCache
	print    printCache
	ids      idCache
	notFound pageMemo // 404.html
}

// pageInputs identifies what a chapter page is made from: the rendered
// chapter (a render.Cache hands out the same *Page while the chapter's
// Markdown is unchanged, and holding it here keeps its address from being
// reused) and everything the book's pages share.
type pageInputs struct {
	page   *render.Page
	index  int
	shared [sha256.Size]byte
}

// inPlace collects the files of an incremental build: unchanged content is
// dropped, changed content is kept in memory until commit.
type inPlace struct {
	inc      *Incremental
	out      string
	mu       sync.Mutex
	names    map[string]bool
	pending  map[string][]byte
	pages    map[string]pageInputs
	deferred []deferredFile
}

// deferredFile is a file an incremental build writes after its pages.
type deferredFile struct {
	name string
	make func() ([]byte, error)
}

// later counts name as a file of the site now and makes it in finish.
func (w *inPlace) later(name string, make func() ([]byte, error)) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.names[name] {
		return fmt.Errorf("two files of the site are named %s", name)
	}
	w.names[name] = true
	w.deferred = append(w.deferred, deferredFile{name, make})
	return nil
}

// stream is later, the file made by write into memory when finish runs.
func (w *inPlace) stream(name string, write func(io.Writer) error) error {
	return w.later(name, func() ([]byte, error) {
		var buf bytes.Buffer
		err := write(&buf)
		return buf.Bytes(), err
	})
}

// finish makes and writes the deferred files (Result.Finish). A failure
// drops the state, so that the next build writes the whole site again.
// Once ctx is done it stops between files and returns ctx.Err(): the files
// not written keep the previous build's content and hash, so the next
// build's finish writes them (or finish is called again).
func (w *inPlace) finish(ctx context.Context) error {
	inc := w.inc
	for _, d := range w.deferred {
		if err := ctx.Err(); err != nil {
			return err
		}
		data, err := d.make()
		if err == nil && ctx.Err() != nil {
			return ctx.Err()
		}
		if err == nil {
			sum := sha256.Sum256(data)
			inc.mu.Lock()
			if old, ok := inc.sums[d.name]; !ok || old != sum {
				if err = replaceFile(filepath.Join(w.out, filepath.FromSlash(d.name)), data); err == nil {
					inc.sums[d.name] = sum
				}
			}
			inc.mu.Unlock()
		}
		if err != nil {
			inc.mu.Lock()
			inc.out, inc.sums, inc.pages = "", nil, nil
			inc.mu.Unlock()
			return err
		}
	}
	return nil
}

// begin returns the writer of the next build into out, or nil when inc has
// no earlier build of out on disk (the build then stages a whole site).
func (inc *Incremental) begin(out string) *inPlace {
	inc.mu.Lock()
	defer inc.mu.Unlock()
	if inc.out != out || inc.sums == nil {
		return nil
	}
	if _, err := os.Stat(filepath.Join(out, Marker)); err != nil {
		return nil
	}
	return &inPlace{inc: inc, out: out, names: map[string]bool{}, pending: map[string][]byte{}, pages: map[string]pageInputs{}}
}

func (w *inPlace) add(name string, data []byte) error {
	sum := sha256.Sum256(data)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.names[name] {
		return fmt.Errorf("two files of the site are named %s", name)
	}
	w.names[name] = true
	if old, ok := w.inc.sums[name]; !ok || old != sum {
		w.pending[name] = data
	}
	return nil
}

func (w *inPlace) has(name string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.names[name]
}

// unchanged reports whether the page name was made from in before, and if
// so counts it as written.
func (w *inPlace) unchanged(name string, in pageInputs) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pages[name] = in
	if w.inc.pages[name] != in || w.names[name] {
		return false
	}
	if _, ok := w.inc.sums[name]; !ok {
		return false
	}
	w.names[name] = true
	return true
}

func (w *inPlace) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	names := make([]string, 0, len(w.names))
	for n := range w.names {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func (w *inPlace) abort() {}

// commit writes the changed files (each through a temporary file renamed
// over the old one), removes the files the site no longer has, and records
// the new state. A failure is an *OutputError; the state is then dropped,
// so that the next build writes the whole site again.
func (w *inPlace) commit() error {
	inc := w.inc
	inc.mu.Lock()
	defer inc.mu.Unlock()
	fail := func(err error) error {
		inc.out, inc.sums, inc.pages = "", nil, nil
		return &OutputError{Out: w.out, Err: err}
	}
	names := make([]string, 0, len(w.pending))
	for n := range w.pending {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		if err := replaceFile(filepath.Join(w.out, filepath.FromSlash(name)), w.pending[name]); err != nil {
			return fail(err)
		}
		inc.sums[name] = sha256.Sum256(w.pending[name])
	}
	for name := range inc.sums {
		if !w.names[name] {
			if err := os.Remove(filepath.Join(w.out, filepath.FromSlash(name))); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fail(err)
			}
			delete(inc.sums, name)
			removeEmptyParents(w.out, path.Dir(name))
		}
	}
	inc.pages = w.pages
	return nil
}

// record makes inc describe the site just written to out by a whole build.
func (inc *Incremental) record(out string, written map[string][sha256.Size]byte, pages map[string]pageInputs) {
	inc.mu.Lock()
	defer inc.mu.Unlock()
	inc.out, inc.sums, inc.pages = out, written, pages
}

// replaceFile writes data to p through a temporary file in the same folder
// and a rename, so that a reader sees the old file or the new one.
func replaceFile(p string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".bookgen-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// removeEmptyParents removes dir (a slash path inside out) and its parents
// while they are empty.
func removeEmptyParents(out, dir string) {
	for dir != "." && dir != "/" && dir != "" {
		if os.Remove(filepath.Join(out, filepath.FromSlash(dir))) != nil {
			return
		}
		dir = path.Dir(dir)
	}
}
