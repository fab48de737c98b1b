package site

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// replaceDir writes fs into a new temporary folder beside out and then puts
// that folder in out's place (see staging). On any error, or when ctx is
// done first, out is left as it was and the temporary folder is removed.
func replaceDir(ctx context.Context, out string, fs files) error {
	st, err := newStaging(ctx, out)
	if err != nil {
		return err
	}
	for name, data := range fs {
		if err := st.add(name, data); err != nil {
			st.abort()
			return err
		}
	}
	return st.commit()
}

// staging is a site being written: files go straight to a temporary folder
// beside the output folder as they are made (a large book's pages are not
// held in memory), and commit puts that folder in the output's place, with
// one atomic exchange where the system has one (Linux renameat2
// RENAME_EXCHANGE), else with two renames. The previous content of the
// output is removed only after the swap. abort, or a failed commit, removes
// the temporary folder and leaves the output as it was. add and has are
// safe for concurrent use.
type staging struct {
	ctx      context.Context // add and commit give up when it is done
	out, dir string
	mu       sync.Mutex
	names    map[string]bool
	dirs     map[string]bool
	// With track, the hash of every file and the inputs of every page
	// are kept for inc, which commit makes describe the new site.
	inc   *Incremental
	sums  map[string][sha256.Size]byte
	pages map[string]pageInputs
}

// track makes s record what it writes for inc (see Incremental).
func (s *staging) track(inc *Incremental) {
	s.inc, s.sums, s.pages = inc, map[string][sha256.Size]byte{}, map[string]pageInputs{}
}

// unchanged records the inputs of page name; a new folder has no page yet.
func (s *staging) unchanged(name string, in pageInputs) bool {
	if s.pages != nil {
		s.mu.Lock()
		s.pages[name] = in
		s.mu.Unlock()
	}
	return false
}

// newStaging checks that out can be replaced (CheckOutputDir) and creates
// the temporary folder. Failures are an *OutputError or the error of
// CheckOutputDir.
func newStaging(ctx context.Context, out string) (*staging, error) {
	if err := CheckOutputDir(out); err != nil {
		return nil, err
	}
	removeStale(out)
	parent, base := filepath.Dir(out), filepath.Base(out)
	tmp, err := os.MkdirTemp(parent, "."+base+".new-")
	if err != nil {
		return nil, &OutputError{Out: out, Err: err}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return nil, &OutputError{Out: out, Err: err}
	}
	// The owner's process id, so that a later build can tell a folder
	// left by a killed build from one a running build is writing.
	if err := os.WriteFile(filepath.Join(tmp, stagingMarker), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		os.RemoveAll(tmp)
		return nil, &OutputError{Out: out, Err: err}
	}
	return &staging{ctx: ctx, out: out, dir: tmp, names: map[string]bool{}, dirs: map[string]bool{".": true}}, nil
}

// add writes the file name (a slash path inside the site). Two files of one
// name are an error; a failed write is an *OutputError.
func (s *staging) add(name string, data []byte) error {
	var sum [sha256.Size]byte
	if s.sums != nil {
		sum = sha256.Sum256(data)
	}
	p, mkdir, err := s.reserve(name, sum)
	if err != nil {
		return err
	}
	return s.create(p, mkdir, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// stream adds the file name, written by write as it produces it: print.html,
// the whole book, is never held in memory whole.
func (s *staging) stream(name string, write func(io.Writer) error) error {
	p, mkdir, err := s.reserve(name, [sha256.Size]byte{})
	if err != nil {
		return err
	}
	var h hash.Hash
	err = s.create(p, mkdir, func(f *os.File) error {
		bw := bufio.NewWriterSize(f, 1<<20)
		var w io.Writer = bw
		if s.sums != nil {
			h = sha256.New()
			w = io.MultiWriter(bw, h)
		}
		if err := write(w); err != nil {
			return err
		}
		return bw.Flush()
	})
	if err != nil || h == nil {
		return err
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	s.mu.Lock()
	s.sums[name] = sum
	s.mu.Unlock()
	return nil
}

// streamHashed adds a file of the folder dir written by write as it
// produces it, named as hashedName names it (base, the first four bytes
// of its content's SHA-256 in hex, ext), and returns that name: the
// search index of a large book is never held in memory whole to learn its
// name.
func (s *staging) streamHashed(dir, base, ext string, write func(io.Writer) error) (string, error) {
	if err := s.ctx.Err(); err != nil {
		return "", err
	}
	tmp := filepath.Join(s.dir, filepath.FromSlash(dir), "."+base+ext+".partial")
	h := sha256.New()
	err := s.create(tmp, true, func(f *os.File) error {
		bw := bufio.NewWriterSize(f, 1<<20)
		if err := write(io.MultiWriter(bw, h)); err != nil {
			return err
		}
		return bw.Flush()
	})
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	name := path.Join(dir, nameForSum(base, ext, sum))
	p, _, err := s.reserve(name, sum)
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return "", &OutputError{Out: s.out, Err: err}
	}
	return name, nil
}

// reserve claims name for one file of the site, with its hash when the
// staging tracks them, and returns its path and whether its folder is
// new.
func (s *staging) reserve(name string, sum [sha256.Size]byte) (p string, mkdir bool, err error) {
	if err := s.ctx.Err(); err != nil {
		return "", false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.names[name] {
		return "", false, fmt.Errorf("two files of the site are named %s", name)
	}
	s.names[name] = true
	if s.sums != nil {
		s.sums[name] = sum
	}
	dir := path.Dir(name)
	mkdir = !s.dirs[dir]
	s.dirs[dir] = true
	return filepath.Join(s.dir, filepath.FromSlash(name)), mkdir, nil
}

// create creates the file p, its folder first when mkdir says it is new,
// and fills it with fill. A failure to write is an *OutputError; fill's
// own error is returned as it is.
func (s *staging) create(p string, mkdir bool, fill func(*os.File) error) error {
	if mkdir {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return &OutputError{Out: s.out, Err: err}
		}
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil && !mkdir {
		// Another goroutine may still be creating the folder.
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return &OutputError{Out: s.out, Err: err}
		}
		f, err = os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	}
	if err != nil {
		return &OutputError{Out: s.out, Err: err}
	}
	ferr := fill(f)
	cerr := f.Close()
	var pe *fs.PathError
	switch {
	case ferr != nil && errors.As(ferr, &pe):
		return &OutputError{Out: s.out, Err: ferr}
	case ferr != nil:
		return ferr
	case cerr != nil:
		return &OutputError{Out: s.out, Err: cerr}
	}
	return nil
}

// later adds the file made by make at once.
func (s *staging) later(name string, make func() ([]byte, error)) error {
	data, err := make()
	if err != nil {
		return err
	}
	return s.add(name, data)
}

// has reports whether the file name was added.
func (s *staging) has(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.names[name]
}

// list returns the names added, sorted.
func (s *staging) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.names))
	for n := range s.names {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// abort removes the temporary folder.
func (s *staging) abort() { os.RemoveAll(s.dir) }

// commit puts the temporary folder in the output's place.
func (s *staging) commit() error {
	if err := s.swap(); err != nil {
		return err
	}
	if s.inc != nil {
		s.inc.record(s.out, s.sums, s.pages)
	}
	return nil
}

func (s *staging) swap() (err error) {
	if err := s.ctx.Err(); err != nil {
		os.RemoveAll(s.dir)
		return err // the last moment to give up with out unchanged
	}
	out, tmp := s.out, s.dir
	if err := os.Remove(filepath.Join(tmp, stagingMarker)); err != nil {
		os.RemoveAll(tmp)
		return &OutputError{Out: out, Err: err}
	}
	swapped := false
	defer func() {
		if err != nil && !swapped {
			os.RemoveAll(tmp)
			err = &OutputError{Out: out, Err: err}
		}
	}()
	if _, err := os.Lstat(out); errors.Is(err, os.ErrNotExist) {
		return os.Rename(tmp, out)
	}
	if exchange(tmp, out) == nil {
		// tmp now holds the previous site.
		swapped = true
		if err := os.RemoveAll(tmp); err != nil {
			return fmt.Errorf("site written to %s, but removing the previous one failed: %w", out, err)
		}
		return nil
	}
	old := tmp + ".old"
	if err := os.Rename(out, old); err != nil {
		return err
	}
	if err := os.Rename(tmp, out); err != nil {
		if rerr := os.Rename(old, out); rerr != nil {
			swapped = true // out is gone: do not claim it is untouched
			return fmt.Errorf("%w (and restoring %s from %s failed: %v)", err, out, old, rerr)
		}
		return err
	}
	swapped = true
	if err := os.RemoveAll(old); err != nil {
		return fmt.Errorf("site written to %s, but removing the previous one in %s failed: %w", out, old, err)
	}
	return nil
}

// stagingMarker is the file a staging folder holds while it is written:
// the process id of the build writing it, in decimal. It is removed just
// before the folder takes the output's place.
const stagingMarker = ".bookgen-staging"

// staleName matches the folders a build makes beside its output folder
// out: ".out.new-123456789" (os.MkdirTemp's random digits) while the new
// site is written, and the same name with ".old" while the previous site
// is removed after a swap without an atomic exchange.
func staleName(base, name string) bool {
	rest, ok := strings.CutPrefix(name, "."+base+".new-")
	if !ok {
		return false
	}
	rest = strings.TrimSuffix(rest, ".old")
	if rest == "" {
		return false
	}
	for _, c := range rest {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// removeStale removes the folders beside out that a killed build left
// behind (SIGKILL during the write, a power cut), and only those: a
// folder named as staleName says that holds either stagingMarker naming a
// process that no longer runs, or Marker without stagingMarker (a previous
// site moved aside by a swap, or a site whose swap was cut short). A folder
// a running build (bookgen serve beside bookgen build) is writing, a
// folder of the same name that bookgen did not write, and anything else
// are left alone. Failures are ignored: the build goes on beside them.
func removeStale(out string) {
	parent, base := filepath.Dir(out), filepath.Base(out)
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !staleName(base, e.Name()) {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		if data, err := os.ReadFile(filepath.Join(dir, stagingMarker)); err == nil {
			pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
			if err != nil || pid <= 0 || pid == os.Getpid() || processRuns(pid) {
				continue
			}
		} else if _, err := os.Lstat(filepath.Join(dir, Marker)); err != nil {
			continue
		}
		os.RemoveAll(dir)
	}
}

// OutputError is a failure to write the site into its output folder Out
// (a parent that cannot be created or written, a full disk). The folder
// Out is left as it was. Err is the underlying error, such as an
// *fs.PathError matching fs.ErrPermission.
type OutputError struct {
	Out string
	Err error
}

func (e *OutputError) Error() string {
	return fmt.Sprintf("cannot write the site to %s: %v (the previous site, if any, is untouched)", e.Out, e.Err)
}

func (e *OutputError) Unwrap() error { return e.Err }

// CheckOutputDir checks that out (an absolute path) can be replaced by a
// build: it is missing, empty or an earlier build's output (it holds
// Marker), and a folder can be created beside it (see probeParent).
func CheckOutputDir(out string) error {
	if err := checkReplaceable(out); err != nil {
		return err
	}
	return probeParent(out)
}

// probeParent creates out's parent folders when missing and checks that a
// folder can be created in the parent, where the new site is written before
// it takes out's place. Failures are an *OutputError.
func probeParent(out string) error {
	parent, base := filepath.Dir(out), filepath.Base(out)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return &OutputError{Out: out, Err: err}
	}
	probe, err := os.MkdirTemp(parent, "."+base+".new-")
	if err != nil {
		return &OutputError{Out: out, Err: err}
	}
	return os.Remove(probe)
}

// checkReplaceable accepts a missing or empty folder, or one that holds the
// Marker of an earlier build.
func checkReplaceable(out string) error {
	fi, err := os.Lstat(out)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &OutputError{Out: out, Err: err}
	}
	if !fi.IsDir() {
		return fmt.Errorf("output %s exists and is not a folder", out)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		return &OutputError{Out: out, Err: err}
	}
	if len(entries) == 0 {
		return nil
	}
	if _, err := os.Stat(filepath.Join(out, Marker)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("output folder %s was not written by bookgen (it has no %s file); remove it or choose another output folder", out, Marker)
		}
		return err
	}
	return nil
}
