package site

import (
	"context"
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
func replaceDir(ctx context.Context, out string, fs files) (err error) {
	if err := CheckOutputDir(out); err != nil {
		return err
	}
	parent, base := filepath.Dir(out), filepath.Base(out)
	tmp, err := os.MkdirTemp(parent, "."+base+".new-")
	if err != nil {
		return &OutputError{Out: out, Err: err}
	}
	swapped := false
	defer func() {
		if err != nil && !swapped {
			os.RemoveAll(tmp)
			err = &OutputError{Out: out, Err: err}
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	for name, data := range fs {
		if err := ctx.Err(); err != nil {
			return err
		}
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
	if err := ctx.Err(); err != nil {
		return err // the last moment to give up with out unchanged
	}
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
