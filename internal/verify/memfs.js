// memfs.js: an in-memory file system for Go programs built for js/wasm.
//
// The Go toolchain's wasm_exec.js gives a page no file system: every call
// but a write to standard output or error fails with ENOSYS, so a program
// that keeps its state in files ("mkdir /tmp/x: not implemented on js")
// cannot run in a page. This file, loaded before wasm_exec.js, defines
// globalThis.fs (which wasm_exec.js then leaves alone) as a file system
// held in memory for the life of one run: directories, regular files,
// open descriptors with their offsets, O_CREAT, O_EXCL, O_TRUNC, O_APPEND,
// rename, unlink, truncate, and stat results with the fields Go's
// syscall/fs_js.go reads. It starts with "/", "/tmp" and "/dev/null". Writes to file
// descriptors 1 and 2 go to fs.writeSync(fd, buf), which the runner (the
// page's worker, or noderun.js) replaces to collect the output, exactly as
// with wasm_exec.js's own stub.
//
// What it does not give: persistence across runs, symbolic and hard links,
// permissions (modes are kept, never enforced), file locks (Go has none on
// js), and fsync's durability (fsync succeeds: nothing is lost but the
// run itself). The calls are those of Go's syscall/fs_js.go, with Node's
// fs callback signatures; errors carry Node's codes (ENOENT, EEXIST,
// ENOTDIR, EISDIR, ENOTEMPTY, EBADF, EINVAL), which Go maps to its errnos.
"use strict";
(() => {
  const S_IFDIR = 0o040000;
  const S_IFREG = 0o100000;
  const S_IFCHR = 0o020000;
  const constants = {
    O_RDONLY: 0,
    O_WRONLY: 1,
    O_RDWR: 2,
    O_CREAT: 0o100,
    O_EXCL: 0o200,
    O_TRUNC: 0o1000,
    O_APPEND: 0o2000,
    O_DIRECTORY: 0o200000,
  };
  let nextIno = 1;
  let clock = 0;
  const now = () => {
    // Strictly increasing, so that a write always changes a stamp.
    clock = Math.max(clock + 1, Date.now());
    return clock;
  };
  const node = (mode) => {
    const t = now();
    return { ino: nextIno++, mode, data: new Uint8Array(0), size: 0, entries: mode & S_IFDIR ? new Map() : null, atime: t, mtime: t, ctime: t };
  };
  const root = node(S_IFDIR | 0o755);
  root.entries.set("tmp", node(S_IFDIR | 0o1777));
  // /dev/null reads as empty and takes every write (os/exec opens it for
  // a child's missing standard input, before it finds it cannot start one).
  const devNull = node(S_IFCHR | 0o666);
  devNull.discard = true;
  root.entries.set("dev", node(S_IFDIR | 0o755));
  root.entries.get("dev").entries.set("null", devNull);

  const fail = (code, what) => {
    const e = new Error(code + ": " + what);
    e.code = code;
    return e;
  };
  const parts = (p) => {
    if (typeof p !== "string" || p === "") throw fail("ENOENT", "empty path");
    const out = [];
    for (const s of p.split("/")) {
      if (s === "" || s === ".") continue;
      if (s === "..") out.pop();
      else out.push(s);
    }
    return out;
  };
  // lookup returns the node at path p, or throws ENOENT / ENOTDIR.
  const lookup = (p) => {
    let n = root;
    for (const s of parts(p)) {
      if (!n.entries) throw fail("ENOTDIR", p);
      n = n.entries.get(s);
      if (!n) throw fail("ENOENT", p);
    }
    return n;
  };
  // parentOf returns the directory that holds p and p's last name.
  const parentOf = (p) => {
    const ps = parts(p);
    if (ps.length === 0) throw fail("EINVAL", p);
    const name = ps.pop();
    const dir = lookup("/" + ps.join("/"));
    if (!dir.entries) throw fail("ENOTDIR", p);
    return [dir, name];
  };
  const stat = (n) => ({
    dev: 1,
    ino: n.ino,
    mode: n.mode,
    nlink: 1,
    uid: 0,
    gid: 0,
    rdev: 0,
    size: n.entries ? 0 : n.size,
    blksize: 4096,
    blocks: Math.ceil(n.size / 512),
    atimeMs: n.atime,
    mtimeMs: n.mtime,
    ctimeMs: n.ctime,
    isDirectory: () => Boolean(n.entries),
    isFile: () => (n.mode & 0o170000) === S_IFREG,
  });
  const resize = (n, size) => {
    if (n.discard) return;
    if (size > n.data.length) {
      const grown = new Uint8Array(Math.max(size, 2 * n.data.length));
      grown.set(n.data.subarray(0, n.size));
      n.data = grown;
    } else if (size < n.size) {
      n.data.fill(0, size, n.size);
    }
    n.size = size;
    n.mtime = n.ctime = now();
  };

  const fds = new Map(); // fd -> { node, pos, flags }
  let nextFd = 3;
  const fdOf = (fd) => {
    const f = fds.get(fd);
    if (!f) throw fail("EBADF", "fd " + fd);
    return f;
  };
  // call runs op and hands its result, or the error it throws, to the
  // Node-style callback.
  const call = (callback, op) => {
    let result;
    try {
      result = op();
    } catch (e) {
      if (!e.code) throw e;
      callback(e);
      return;
    }
    callback(null, result);
  };

  const fs = {
    constants,
    writeSync(fd, buf) {
      return buf.length; // replaced by the runner for fds 1 and 2
    },
    write(fd, buf, offset, length, position, callback) {
      if (fd === 1 || fd === 2) {
        call(callback, () => fs.writeSync(fd, buf.subarray(offset, offset + length)));
        return;
      }
      call(callback, () => {
        const f = fdOf(fd);
        if ((f.flags & 3) === constants.O_RDONLY) throw fail("EBADF", "fd " + fd + " is not open for writing");
        const n = f.node;
        if (n.discard) return length;
        let at = position === null || position === undefined ? f.pos : position;
        if (f.flags & constants.O_APPEND) at = n.size;
        if (at + length > n.size) resize(n, at + length);
        n.data.set(buf.subarray(offset, offset + length), at);
        n.mtime = n.ctime = now();
        if (position === null || position === undefined) f.pos = at + length;
        return length;
      });
    },
    read(fd, buf, offset, length, position, callback) {
      call(callback, () => {
        const f = fdOf(fd);
        const n = f.node;
        if (n.entries) throw fail("EISDIR", "fd " + fd);
        if (n.discard) return 0;
        const at = position === null || position === undefined ? f.pos : position;
        const count = Math.max(0, Math.min(length, n.size - at));
        buf.set(n.data.subarray(at, at + count), offset);
        if (position === null || position === undefined) f.pos = at + count;
        return count;
      });
    },
    open(path, flags, mode, callback) {
      call(callback, () => {
        let n;
        try {
          n = lookup(path);
          if (flags & constants.O_CREAT && flags & constants.O_EXCL) throw fail("EEXIST", path);
        } catch (e) {
          if (e.code !== "ENOENT" || !(flags & constants.O_CREAT)) throw e;
          const [dir, name] = parentOf(path);
          n = node(S_IFREG | (mode & 0o7777));
          dir.entries.set(name, n);
          dir.mtime = dir.ctime = now();
        }
        if (flags & constants.O_DIRECTORY && !n.entries) throw fail("ENOTDIR", path);
        if (n.entries && (flags & 3) !== constants.O_RDONLY) throw fail("EISDIR", path);
        if (flags & constants.O_TRUNC && !n.entries && !n.discard) resize(n, 0);
        const fd = nextFd++;
        fds.set(fd, { node: n, pos: 0, flags });
        return fd;
      });
    },
    close(fd, callback) {
      call(callback, () => {
        fdOf(fd);
        fds.delete(fd);
      });
    },
    fstat(fd, callback) {
      call(callback, () => stat(fdOf(fd).node));
    },
    stat(path, callback) {
      call(callback, () => stat(lookup(path)));
    },
    lstat(path, callback) {
      call(callback, () => stat(lookup(path)));
    },
    mkdir(path, perm, callback) {
      call(callback, () => {
        const [dir, name] = parentOf(path);
        if (dir.entries.has(name)) throw fail("EEXIST", path);
        dir.entries.set(name, node(S_IFDIR | (perm & 0o7777)));
        dir.mtime = dir.ctime = now();
      });
    },
    readdir(path, callback) {
      call(callback, () => {
        const n = lookup(path);
        if (!n.entries) throw fail("ENOTDIR", path);
        return [...n.entries.keys()].sort();
      });
    },
    rename(from, to, callback) {
      call(callback, () => {
        const [src, a] = parentOf(from);
        const n = src.entries.get(a);
        if (!n) throw fail("ENOENT", from);
        const pf = parts(from);
        const pt = parts(to);
        if (pt.length > pf.length && pf.every((s, i) => s === pt[i])) throw fail("EINVAL", "rename " + from + " into itself");
        const [dst, b] = parentOf(to);
        const old = dst.entries.get(b);
        if (old && old.entries && (!n.entries || old.entries.size > 0)) throw fail(n.entries ? "ENOTEMPTY" : "EISDIR", to);
        if (old && !old.entries && n.entries) throw fail("ENOTDIR", to);
        src.entries.delete(a);
        dst.entries.set(b, n);
        src.mtime = src.ctime = dst.mtime = dst.ctime = n.ctime = now();
      });
    },
    unlink(path, callback) {
      call(callback, () => {
        const [dir, name] = parentOf(path);
        const n = dir.entries.get(name);
        if (!n) throw fail("ENOENT", path);
        if (n.entries) throw fail("EISDIR", path);
        dir.entries.delete(name);
        dir.mtime = dir.ctime = now();
      });
    },
    rmdir(path, callback) {
      call(callback, () => {
        const [dir, name] = parentOf(path);
        const n = dir.entries.get(name);
        if (!n) throw fail("ENOENT", path);
        if (!n.entries) throw fail("ENOTDIR", path);
        if (n.entries.size > 0) throw fail("ENOTEMPTY", path);
        dir.entries.delete(name);
        dir.mtime = dir.ctime = now();
      });
    },
    fsync(fd, callback) {
      call(callback, () => {
        fdOf(fd);
      });
    },
    ftruncate(fd, length, callback) {
      call(callback, () => resize(fdOf(fd).node, length));
    },
    truncate(path, length, callback) {
      call(callback, () => {
        const n = lookup(path);
        if (n.entries) throw fail("EISDIR", path);
        resize(n, length);
      });
    },
    chmod(path, mode, callback) {
      call(callback, () => {
        const n = lookup(path);
        n.mode = (n.mode & ~0o7777) | (mode & 0o7777);
        n.ctime = now();
      });
    },
    fchmod(fd, mode, callback) {
      call(callback, () => {
        const n = fdOf(fd).node;
        n.mode = (n.mode & ~0o7777) | (mode & 0o7777);
        n.ctime = now();
      });
    },
    chown(path, uid, gid, callback) {
      call(callback, () => {
        lookup(path);
      });
    },
    fchown(fd, uid, gid, callback) {
      call(callback, () => {
        fdOf(fd);
      });
    },
    lchown(path, uid, gid, callback) {
      call(callback, () => {
        lookup(path);
      });
    },
    utimes(path, atime, mtime, callback) {
      call(callback, () => {
        const n = lookup(path);
        n.atime = atime * 1000;
        n.mtime = mtime * 1000;
        n.ctime = now();
      });
    },
    link(path, link, callback) {
      callback(fail("ENOSYS", "hard links"));
    },
    symlink(path, link, callback) {
      callback(fail("ENOSYS", "symbolic links"));
    },
    readlink(path, callback) {
      call(callback, () => {
        lookup(path);
        throw fail("EINVAL", path + " is not a symbolic link");
      });
    },
  };
  globalThis.fs = fs;
})();
