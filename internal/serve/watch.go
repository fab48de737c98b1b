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
)

// Watched lists what a change to rebuilds for: these folders of the
// repository root, recursively, and these files in the root itself.
var (
	WatchedDirs  = []string{"book", "examples", "theme"}
	WatchedFiles = []string{"go.mod", "go.sum"}
)

// watcher reports changes under the watched folders of a repository.
type watcher struct {
	fs   *fsnotify.Watcher
	root string
	out  string // the output folder: never watched
}

func newWatcher(root, out string) (*watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	w := &watcher{fs: fw, root: root, out: out}
	// The root itself, to see a watched folder appear or go.mod change.
	if err := fw.Add(root); err != nil {
		fw.Close()
		return nil, err
	}
	for _, d := range WatchedDirs {
		w.addTree(filepath.Join(root, d))
	}
	return w, nil
}

func (w *watcher) close() { w.fs.Close() }

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
	if !nested {
		if !slices.Contains(WatchedFiles, top) && !slices.Contains(WatchedDirs, top) {
			return "", false
		}
	} else if !slices.Contains(WatchedDirs, top) {
		return "", false
	}
	for _, part := range strings.Split(rel, "/") {
		if strings.HasPrefix(part, ".") || part == "node_modules" {
			return "", false
		}
	}
	name := filepath.Base(p)
	if strings.HasSuffix(name, "~") || strings.HasSuffix(name, ".swp") || strings.HasSuffix(name, ".swx") ||
		strings.HasPrefix(name, "#") || name == "4913" {
		return "", false // editor scratch files
	}
	return rel, true
}

// run calls rebuild with the changed paths once no change has arrived for
// quiet, until ctx is done. Changes that arrive during a rebuild lead to
// another rebuild after it.
func (w *watcher) run(ctx context.Context, quiet time.Duration, rebuild func(changed []string)) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var changed []string
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
			if !slices.Contains(changed, rel) {
				changed = append(changed, rel)
			}
			timer.Reset(quiet)
		case <-w.fs.Errors:
			// An overflow loses events: rebuild to be safe.
			timer.Reset(quiet)
		case <-timer.C:
			c := changed
			changed = nil
			rebuild(c)
		}
	}
}

// within reports whether p is inside dir.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && !strings.HasPrefix(rel, "..")
}
