// Command memfs exercises the file system calls a program makes (folders,
// exclusive creation, offsets, appends, truncation, renames over files and
// folders, removal, listing, /dev/null) and prints each outcome, so that
// its output on a host and in a JavaScript engine with memfs.js can be
// compared line by line (TestMemFSMatchesHost).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

func errno(err error) string {
	if err == nil {
		return "ok"
	}
	var e syscall.Errno
	if errors.As(err, &e) {
		return e.Error()
	}
	return "error without errno"
}

func main() {
	dir, err := os.MkdirTemp("", "memfs")
	if err != nil {
		fmt.Println("MkdirTemp:", err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	at := func(p string) string { return filepath.Join(dir, p) }
	fmt.Println("mkdir d:", errno(os.Mkdir(at("d"), 0o755)))
	fmt.Println("mkdir d again:", errno(os.Mkdir(at("d"), 0o755)))
	fmt.Println("mkdir a/b (no a):", errno(os.Mkdir(at("a/b"), 0o755)))
	f, err := os.OpenFile(at("d/f"), os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644)
	fmt.Println("create d/f exclusively:", errno(err))
	_, err = os.OpenFile(at("d/f"), os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644)
	fmt.Println("create d/f exclusively again:", errno(err))
	n, err := f.Write([]byte("epoch 7"))
	fmt.Println("write:", n, errno(err))
	_, err = f.Seek(0, io.SeekStart)
	fmt.Println("seek to 0:", errno(err))
	buf := make([]byte, 16)
	n, err = f.Read(buf)
	fmt.Printf("read: %q %s\n", buf[:n], errno(err))
	n, err = f.Read(buf)
	fmt.Println("read at the end:", n, err == io.EOF)
	n, err = f.WriteAt([]byte("8"), 6)
	fmt.Println("write at 6:", n, errno(err))
	n, err = f.ReadAt(buf[:7], 0)
	fmt.Printf("read at 0: %q %s\n", buf[:n], errno(err))
	fmt.Println("sync:", errno(f.Sync()))
	fmt.Println("truncate to 5:", errno(f.Truncate(5)))
	fi, err := f.Stat()
	fmt.Println("size after truncate:", fi.Size(), errno(err), fi.Mode().IsRegular())
	fmt.Println("close:", errno(f.Close()))
	a, err := os.OpenFile(at("d/f"), os.O_WRONLY|os.O_APPEND, 0)
	fmt.Println("open for append:", errno(err))
	a.Write([]byte("+1"))
	a.Close()
	data, err := os.ReadFile(at("d/f"))
	fmt.Printf("after append: %q %s\n", data, errno(err))
	fmt.Println("write g:", errno(os.WriteFile(at("d/g"), []byte("old"), 0o600)))
	fmt.Println("rename f over g:", errno(os.Rename(at("d/f"), at("d/g"))))
	data, err = os.ReadFile(at("d/g"))
	fmt.Printf("g now: %q %s\n", data, errno(err))
	_, err = os.Stat(at("d/f"))
	fmt.Println("f after the rename:", errno(err), errors.Is(err, os.ErrNotExist))
	fmt.Println("truncate g by name to 3:", errno(os.Truncate(at("d/g"), 3)))
	fmt.Println("chmod g 0640:", errno(os.Chmod(at("d/g"), 0o640)))
	fi, err = os.Stat(at("d/g"))
	fmt.Println("g:", fi.Size(), fi.Mode().Perm(), errno(err))
	os.Mkdir(at("d/e"), 0o700)
	os.WriteFile(at("d/e/x"), nil, 0o600)
	os.Mkdir(at("d/c"), 0o700)
	entries, err := os.ReadDir(at("d"))
	fmt.Print("d holds:")
	for _, e := range entries {
		fmt.Printf(" %s(dir=%v)", e.Name(), e.IsDir())
	}
	fmt.Println(" ", errno(err))
	fmt.Println("rename c over non-empty e:", errno(os.Rename(at("d/c"), at("d/e"))))
	fmt.Println("rename e over file g:", errno(os.Rename(at("d/e"), at("d/g"))))
	fmt.Println("rename d into itself:", errno(os.Rename(at("d"), at("d/e/d"))))
	fmt.Println("remove non-empty e:", errno(syscall.Rmdir(at("d/e"))))
	fmt.Println("unlink directory c:", errno(syscall.Unlink(at("d/c"))))
	fmt.Println("rmdir file g:", errno(syscall.Rmdir(at("d/g"))))
	_, err = os.OpenFile(at("d"), os.O_WRONLY, 0)
	fmt.Println("open d for writing:", errno(err))
	_, err = os.ReadFile(at("d/g/x"))
	fmt.Println("read below a file:", errno(err))
	fmt.Println("remove all of e:", errno(os.RemoveAll(at("d/e"))))
	_, err = os.Stat(at("d/e/x"))
	fmt.Println("e/x after:", errors.Is(err, os.ErrNotExist))
	null, err := os.OpenFile("/dev/null", os.O_RDWR, 0)
	fmt.Println("open /dev/null:", errno(err))
	n, err = null.Write([]byte("lost"))
	fmt.Println("write /dev/null:", n, errno(err))
	n, err = null.Read(buf)
	fmt.Println("read /dev/null:", n, err == io.EOF)
	null.Close()
}
