package site

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// replaceDir writes fs into a new temporary folder beside out and then puts
// that folder in out's place: with one atomic exchange where the system has
// one (Linux renameat2 RENAME_EXCHANGE), else with two renames. The previous
// content of out is removed only after the swap. On any error out is left
// as it was and the temporary folder is removed.
func replaceDir(out string, fs files) (err error) {
	if err := checkReplaceable(out); err != nil {
		return err
	}
	parent, base := filepath.Dir(out), filepath.Base(out)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+base+".new-")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	for name, data := range fs {
		p := filepath.Join(tmp, filepath.FromSlash(name))
		if dir := path.Dir(name); dir != "." {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	if _, err := os.Lstat(out); errors.Is(err, os.ErrNotExist) {
		return os.Rename(tmp, out)
	}
	if exchange(tmp, out) == nil {
		// tmp now holds the previous site.
		return os.RemoveAll(tmp)
	}
	old := tmp + ".old"
	if err := os.Rename(out, old); err != nil {
		return err
	}
	if err := os.Rename(tmp, out); err != nil {
		if rerr := os.Rename(old, out); rerr != nil {
			return fmt.Errorf("%w (and restoring %s from %s failed: %v)", err, out, old, rerr)
		}
		return err
	}
	return os.RemoveAll(old)
}

// checkReplaceable accepts a missing or empty folder, or one that holds the
// Marker of an earlier build.
func checkReplaceable(out string) error {
	fi, err := os.Lstat(out)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("output %s exists and is not a folder", out)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		return err
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
