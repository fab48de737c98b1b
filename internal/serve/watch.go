package serve

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/filestamp"
)

// Watched lists what a change to rebuilds for: these folders of the
// repository root, recursively, and these files in the root itself,
// besides the book's own (see Watched).
var (
	WatchedDirs  = []string{"examples", "theme"}
	WatchedFiles = []string{"go.mod", "go.sum", NetlifyFile}
)

// Watched returns what a change to rebuilds for in the book at root:
// repository-relative folders, watched recursively (the top folder of the
// source folder and of book.toml's: book/ in bookgen's layout, src/ in
// mdBook's, then WatchedDirs), and files of the root (book.toml in mdBook's
// layout, then WatchedFiles). all is set, and dirs holds ".", when the
// source folder is the root itself (mdBook's src = "."): every file of the
// root counts. mdBook's output folder book/ is otherwise not watched.
func Watched(root string) (dirs, files []string, all bool) {
	l, _, src, _, err := book.Locate(root)
	if err != nil {
		src = l.ConfDir() // book.Load will say what is wrong with src
	}
	for _, d := range []string{l.ConfDir(), src} {
		top, _, _ := strings.Cut(d, "/")
		if top == "." && d != src {
			continue
		}
		all = all || top == "."
		if !slices.Contains(dirs, top) {
			dirs = append(dirs, top)
		}
	}
	if l == book.MdBookLayout {
		files = append(files, "book.toml")
	}
	return append(dirs, WatchedDirs...), append(files, WatchedFiles...), all
}

// watcher reports changes under the watched folders of a repository,
// either from fsnotify or, with a poll interval, by comparing every watched
// file's modification time and size at that interval (for file systems
// whose native events do not arrive: some network mounts, container bind
// mounts, WSL).
type watcher struct {
	fs   *fsnotify.Watcher // nil when polling
	poll time.Duration     // > 0 when polling
	root string
	out  string // the output folder: never watched
	// dirs, files and all are Watched(root).
	dirs, files []string
	all         bool
	// first is the polling watcher's first snapshot, taken when it is
	// made, before the first build, so that no edit falls between the two.
	first map[string]filestamp.Stamp
}

func newWatcher(root, out string, poll time.Duration) (*watcher, error) {
	w := &watcher{root: root, out: out, poll: poll}
	w.dirs, w.files, w.all = Watched(root)
	if poll > 0 {
		w.first = w.snapshot()
		return w, nil
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	w.fs = fw
	// The root itself, to see a watched folder appear or go.mod change.
	if err := fw.Add(root); err != nil {
		fw.Close()
		return nil, err
	}
	for _, d := range w.dirs {
		w.addTree(filepath.Join(root, d))
	}
	return w, nil
}

func (w *watcher) close() {
	if w.fs != nil {
		w.fs.Close()
	}
}

// addTree watches dir and every folder below it that is not skipped.
func (w *watcher) addTree(dir string) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() && p != dir {
				return fs.SkipDir
			}
			return nil
		}
		if !d.IsDir() {
			return nil
		}
		if p != dir && w.skipDir(p) {
			return fs.SkipDir
		}
		_ = w.fs.Add(p)
		return nil
	})
}

func (w *watcher) skipDir(p string) bool {
	name := filepath.Base(p)
	return strings.HasPrefix(name, ".") || name == "node_modules" || p == w.out || within(p, w.out)
}

// relevant reports whether a change to p matters, and its
// repository-relative name.
func (w *watcher) relevant(p string) (string, bool) {
	rel, err := filepath.Rel(w.root, p)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", false
	}
	rel = filepath.ToSlash(rel)
	if p == w.out || within(p, w.out) {
		return "", false
	}
	top, _, nested := strings.Cut(rel, "/")
	switch {
	case w.all:
	case !nested:
		if !slices.Contains(w.files, top) && !slices.Contains(w.dirs, top) {
			return "", false
		}
	case !slices.Contains(w.dirs, top):
		return "", false
	}
	for _, part := range strings.Split(rel, "/") {
		if strings.HasPrefix(part, ".") || part == "node_modules" {
			return "", false
		}
	}
	if scratch(filepath.Base(p)) {
		return "", false
	}
	return rel, true
}

// scratch reports whether name is an editor's or tool's temporary or
// backup file (book.Scratch, the list the site stage's copy uses too).
// Names starting with "." are skipped before this is asked.
func scratch(name string) bool { return book.Scratch(name) }

// run calls rebuild with the changed paths once no change has arrived for
// quiet, until ctx is done. Changes that arrive during a rebuild lead to
// another rebuild after it. When polling, changes arrive only once per
// poll interval, so the quiet period is lengthened by one interval: a burst
// is over when a whole poll found nothing new, not between two polls.
func (w *watcher) run(ctx context.Context, quiet time.Duration, rebuild func(changed []string)) {
	changes := make(chan string, 64)
	if w.poll > 0 {
		quiet += w.poll
		go w.pollLoop(ctx, changes)
	} else {
		go w.notifyLoop(ctx, changes)
	}
	debounce(ctx, changes, quiet, rebuild)
}

// debounce collects the paths from in and calls rebuild with them once none
// has arrived for quiet. An empty path means "something changed, unknown
// what" (an event overflow): it triggers a rebuild without naming a path.
func debounce(ctx context.Context, in <-chan string, quiet time.Duration, rebuild func(changed []string)) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var changed []string
	for {
		select {
		case <-ctx.Done():
			return
		case rel, ok := <-in:
			if !ok {
				return
			}
			if rel != "" && !slices.Contains(changed, rel) {
				changed = append(changed, rel)
			}
			timer.Reset(quiet)
		case <-timer.C:
			c := changed
			changed = nil
			rebuild(c)
		}
	}
}

// notifyLoop turns fsnotify events into relevant paths, watching folders
// created later.
func (w *watcher) notifyLoop(ctx context.Context, out chan<- string) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.fs.Events:
			if !ok {
				return
			}
			rel, ok := w.relevant(ev.Name)
			if !ok {
				continue
			}
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() {
					w.addTree(ev.Name)
				}
			}
			out <- rel
		case _, ok := <-w.fs.Errors:
			if !ok {
				return
			}
			// An overflow loses events: rebuild to be safe.
			out <- ""
		}
	}
}

// snapshot stamps every relevant file and folder.
func (w *watcher) snapshot() map[string]filestamp.Stamp {
	m := map[string]filestamp.Stamp{}
	stamp := func(p string, fi fs.FileInfo) {
		if rel, ok := w.relevant(p); ok {
			m[rel] = filestamp.Of(fi)
		}
	}
	for _, f := range w.files {
		p := filepath.Join(w.root, f)
		if fi, err := os.Stat(p); err == nil {
			stamp(p, fi)
		}
	}
	for _, d := range w.dirs {
		_ = filepath.WalkDir(filepath.Join(w.root, d), func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if e.IsDir() && w.skipDir(p) && p != filepath.Join(w.root, d) {
				return fs.SkipDir
			}
			if fi, err := e.Info(); err == nil {
				stamp(p, fi)
			}
			return nil
		})
	}
	return m
}

// pollLoop compares snapshots every w.poll and sends what differs:
// files created, removed, or with another stamp (filestamp.Stamp: size,
// times, inode, mode).
func (w *watcher) pollLoop(ctx context.Context, out chan<- string) {
	prev := w.first
	if prev == nil {
		prev = w.snapshot()
	}
	t := time.NewTicker(w.poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cur := w.snapshot()
		var diff []string
		for rel, st := range cur {
			if old, ok := prev[rel]; !ok || (!st.Mode.IsDir() && old != st) {
				diff = append(diff, rel)
			}
		}
		for rel := range prev {
			if _, ok := cur[rel]; !ok {
				diff = append(diff, rel)
			}
		}
		slices.Sort(diff)
		for _, rel := range diff {
			select {
			case out <- rel:
			case <-ctx.Done():
				return
			}
		}
		prev = cur
	}
}

// within reports whether p is inside dir.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && !strings.HasPrefix(rel, "..")
}
