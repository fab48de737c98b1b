// Package atomicfile writes a file so that a reader sees its old content
// or its new content, never a part of either.
package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Write writes data to a temporary file beside name (".name.tmp*", so a
// crash leaves only a hidden file) with permissions perm, and renames it
// over name. On error nothing is left beside name and name is unchanged.
func Write(name string, data []byte, perm fs.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp*")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr, os.Chmod(f.Name(), perm)); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), name); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}
