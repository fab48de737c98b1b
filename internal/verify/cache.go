package verify

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ownership-book/ownership/internal/atomicfile"
)

// The cache. A check's entry is found by a name derived from what does not
// depend on file contents (the check kind, its subject or command, the Go
// version and the Go environment), and is valid only while every file it
// depended on still has the content it had when the check passed. The entry
// records those files with their hashes, and the listing of every directory
// holding them, so validating an entry re-hashes files and re-reads
// directories but starts no process: a prose-only edit runs no go command.
// The files are found once, when the check runs, with "go list -deps -test"
// (every package of the main module the check's packages import, their own
// files and testdata, and the files their //go:embed lines name, which may
// sit in subdirectories), plus go.mod and go.sum; for a transcript whose
// packages are a pattern ("go test ./examples/..."), also the listing of
// every directory the pattern could match. A file a program opens at
// run time outside its package directory and testdata is not known and
// not in the key.
//
// Only passing checks are stored. Entries are JSON files under
// CacheDir/verify/, written atomically.

// manifest is what a check depended on.
type manifest struct {
	// Files maps a repository-relative slash path to the hex sha256 of its
	// content, "-" when the file did not exist.
	Files map[string]string `json:"files"`
	// Dirs maps a repository-relative directory to the hex sha256 of its
	// sorted entry names (a "/" suffix marks a directory).
	Dirs map[string]string `json:"dirs"`
}

// entry is one cached passing check.
type entry struct {
	Kind     string   `json:"kind"`
	Subject  string   `json:"subject"`
	Key      string   `json:"key"` // the static part of the key, spelled out
	Manifest manifest `json:"manifest"`
	// Output and ExitCode are a transcript command's, replayed against the
	// expected text on a cache hit.
	Output   string `json:"output,omitempty"`
	ExitCode int    `json:"exit_code,omitempty"`
	// Tests is a package test's outcome per top-level function ("pass",
	// "skip", "empty": see readTestEvents), read by the claims that name
	// them.
	Tests map[string]string `json:"tests,omitempty"`
	// Program is a wasm check's build (see wasm.go), and PageOutputs what
	// each of its transcript commands printed in a JavaScript engine,
	// judged against the transcripts again on a cache hit.
	Program     *Program     `json:"program,omitempty"`
	PageOutputs []pageOutput `json:"page_outputs,omitempty"`
}

type cache struct {
	dir string  // CacheDir/verify
	h   *hashes // this verification's hashes of the repository's files
}

func newCache(root, dir string) *cache {
	return &cache{dir: dir, h: newHashes(root)}
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func (c *cache) path(key string) string {
	return filepath.Join(c.dir, sum([]byte(key))+".json")
}

// lookup returns the entry stored under key if every file and directory it
// depended on is unchanged. The entry is shared (see readEntry): the
// caller does not modify it.
func (c *cache) lookup(key string) (*entry, bool) {
	e := entries.get(c.path(key), readEntry)
	if e == nil || e.Key != key {
		return nil, false
	}
	for f, h := range e.Manifest.Files {
		if c.h.file(f) != h {
			return nil, false
		}
	}
	for d, h := range e.Manifest.Dirs {
		if c.h.dir(d) != h {
			return nil, false
		}
	}
	return e, true
}

// store writes e under e.Key atomically.
func (c *cache) store(e *entry) error {
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(e, "", "\t")
	if err != nil {
		return err
	}
	return writeAtomic(c.path(e.Key), data, 0o644)
}

// writeAtomic writes data so that a reader sees the old or the new
// content, never a part (atomicfile.Write).
func writeAtomic(name string, data []byte, perm fs.FileMode) error {
	return atomicfile.Write(name, data, perm)
}

// newManifest records go.mod, go.sum, every regular file directly in each
// of l.dirs (repository-relative), everything under their testdata/, and
// each embedded file in l.embeds with the listing of every directory
// between its package directory and itself (so that a file added to an
// embedded directory is noticed too).
func newManifest(h *hashes, l listed) manifest {
	root := h.root
	dirs := l.dirs
	m := manifest{Files: map[string]string{}, Dirs: map[string]string{}}
	for _, f := range []string{"go.mod", "go.sum"} {
		m.Files[f] = h.file(f)
	}
	var addDir func(d string, recursive bool)
	addDir = func(d string, recursive bool) {
		if _, ok := m.Dirs[d]; ok && !recursive {
			return
		}
		m.Dirs[d] = h.dir(d)
		ents, _ := os.ReadDir(filepath.Join(root, filepath.FromSlash(d)))
		for _, e := range ents {
			p := path.Join(d, e.Name())
			switch {
			case e.Type().IsRegular():
				m.Files[p] = h.file(p)
			case e.IsDir() && (recursive || e.Name() == "testdata"):
				addDir(p, true)
			}
		}
	}
	for _, d := range dirs {
		addDir(d, false)
	}
	for _, e := range l.embeds {
		m.Files[e.file] = h.file(e.file)
		for d := path.Dir(e.file); d != e.pkgDir && d != "." && d != "/"; d = path.Dir(d) {
			if _, ok := m.Dirs[d]; !ok {
				m.Dirs[d] = h.dir(d)
			}
		}
	}
	return m
}

// addPatternTrees records, for each package pattern with "..." among args
// ("./examples/stream/..."), the listing of every directory under the
// pattern's fixed part, so that a package added there (which go list could
// not name before it existed) invalidates the entry.
func (m manifest) addPatternTrees(h *hashes, args []string) {
	root := h.root
	for _, a := range args {
		i := strings.Index(a, "...")
		if i < 0 {
			continue
		}
		base := a[:i]
		if strings.HasSuffix(base, "/") {
			base = strings.TrimSuffix(base, "/")
		} else {
			base = path.Dir(base) // "./examples/str..." matches names under ./examples
		}
		base = path.Clean(strings.TrimPrefix(base, "./"))
		if base == ".." || strings.HasPrefix(base, "../") || path.IsAbs(base) {
			continue
		}
		_ = filepath.WalkDir(filepath.Join(root, filepath.FromSlash(base)), func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return nil
			}
			rel = filepath.ToSlash(rel)
			if n := d.Name(); rel != base && (strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
				return filepath.SkipDir
			}
			if _, ok := m.Dirs[rel]; !ok {
				m.Dirs[rel] = h.dir(rel)
			}
			return nil
		})
	}
}

// listed is what the cache learns from go list: the repository-relative
// directories of the main module's packages involved, and their embedded
// files.
type listed struct {
	dirs   []string
	embeds []embedFile
}

// embedFile is a file a //go:embed line names, repository-relative, with
// the directory of the package that embeds it.
type embedFile struct {
	file, pkgDir string
}

// listPackage is the part of "go list -json" output the cache needs.
type listPackage struct {
	ImportPath string
	Dir        string
	// EmbedFiles, TestEmbedFiles and XTestEmbedFiles are relative to Dir.
	EmbedFiles      []string
	TestEmbedFiles  []string
	XTestEmbedFiles []string
	Module          *struct {
		Path string
		Main bool
	}
}

// listCall is one "go list" shared by the checks that need it.
type listCall struct {
	done chan struct{}
	l    listed
	err  error
}

// localDirs runs "go list -e -deps -test -json args..." in root and returns
// the repository-relative directories of the main module's packages in the
// result (the packages named by args and every local package they or their
// tests import) and the files those packages embed. Concurrent and repeated
// calls with the same arguments share one go list run.
func (v *verifier) localDirs(ctx context.Context, extra []string, args []string) (listed, error) {
	key := strings.Join(extra, "\x00") + "\x00" + strings.Join(args, "\x00")
	v.mu.Lock()
	c, ok := v.listed[key]
	if !ok {
		c = &listCall{done: make(chan struct{})}
		v.listed[key] = c
	}
	v.mu.Unlock()
	if ok {
		<-c.done
		return c.l, c.err
	}
	c.l, c.err = v.goList(ctx, extra, args)
	close(c.done)
	return c.l, c.err
}

func (v *verifier) goList(ctx context.Context, extra []string, args []string) (listed, error) {
	cmd := append(append([]string{v.goCmd, "list"}, extra...), "-e", "-deps", "-test", "-json")
	cmd = append(cmd, args...)
	res, err := v.exec(ctx, Run{Args: cmd, Dir: v.root, Timeout: listTimeout, Machine: true})
	if err != nil {
		return listed{}, err
	}
	switch {
	case res.TimedOut:
		return listed{}, fmt.Errorf("go list %s: timeout after %s\n%s", strings.Join(args, " "), fmtDuration(listTimeout), clipOutput(string(res.Stderr)))
	case res.OutputLimited:
		return listed{}, fmt.Errorf("go list %s: printed more than %d MiB", strings.Join(args, " "), MaxOutput>>20)
	case res.ExitCode != 0:
		return listed{}, fmt.Errorf("go list %s: exit status %d\n%s", strings.Join(args, " "), res.ExitCode, clipOutput(string(res.Stderr)))
	}
	seen := map[string]bool{}
	var dirs []string
	var embeds []embedFile
	seenEmbed := map[string]bool{}
	dec := json.NewDecoder(bytes.NewReader(res.Output))
	for dec.More() {
		var p listPackage
		if err := dec.Decode(&p); err != nil {
			e := fmt.Errorf("go list %s: cannot decode its -json output: %v", strings.Join(args, " "), err)
			if len(res.Stderr) > 0 {
				e = fmt.Errorf("%w\n%s", e, clipOutput(string(res.Stderr)))
			}
			return listed{}, e
		}
		if p.Module == nil || !p.Module.Main || p.Dir == "" {
			continue
		}
		rel, err := filepath.Rel(v.root, p.Dir)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		rel = filepath.ToSlash(rel)
		if !seen[rel] {
			seen[rel] = true
			dirs = append(dirs, rel)
		}
		for _, list := range [][]string{p.EmbedFiles, p.TestEmbedFiles, p.XTestEmbedFiles} {
			for _, f := range list {
				f = path.Join(rel, filepath.ToSlash(f))
				if !seenEmbed[f] {
					seenEmbed[f] = true
					embeds = append(embeds, embedFile{file: f, pkgDir: rel})
				}
			}
		}
	}
	sort.Strings(dirs)
	sort.Slice(embeds, func(i, j int) bool { return embeds[i].file < embeds[j].file })
	return listed{dirs: dirs, embeds: embeds}, nil
}

// goVersion is recorded in the goversion.json file of the cache with the
// go binary's path, size and modification time, so that a later
// verification learns the version without running "go version".
type goVersion struct {
	Path    string `json:"path"`
	Size    int64  `json:"size"`
	ModTime int64  `json:"mtime_ns"`
	Version string `json:"version"`
}

// goVersionOnce returns the output of "go version" for v.goCmd, from the
// cache when the binary is unchanged.
func (v *verifier) goVersion(ctx context.Context) (string, error) {
	v.verOnce.Do(func() {
		p, err := exec.LookPath(v.goCmd)
		if err != nil {
			v.verErr = fmt.Errorf("%w %s: %v", ErrStart, v.goCmd, err)
			return
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		fi, err := os.Stat(p)
		if err != nil {
			v.verErr = err
			return
		}
		want := goVersion{Path: p, Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}
		file := filepath.Join(v.cache.dir, "goversion.json")
		if data, err := os.ReadFile(file); err == nil {
			var got goVersion
			if json.Unmarshal(data, &got) == nil && got.Path == want.Path && got.Size == want.Size && got.ModTime == want.ModTime && got.Version != "" {
				v.version = got.Version
				return
			}
		}
		res, err := v.exec(ctx, Run{Args: []string{v.goCmd, "version"}, Dir: v.root, Timeout: listTimeout, Machine: true})
		switch {
		case err != nil:
			v.verErr = fmt.Errorf("go version: %v", err)
			return
		case res.ExitCode != 0 || res.TimedOut || res.OutputLimited:
			v.verErr = fmt.Errorf("go version: exit status %d\n%s", res.ExitCode, clipOutput(string(res.Stderr)))
			return
		}
		want.Version = strings.TrimSpace(string(res.Output))
		if want.Version == "" {
			v.verErr = fmt.Errorf("go version printed nothing on stdout\n%s", clipOutput(string(res.Stderr)))
			return
		}
		v.version = want.Version
		if data, err := json.Marshal(want); err == nil && os.MkdirAll(v.cache.dir, 0o755) == nil {
			_ = writeAtomic(file, data, 0o644)
		}
	})
	return v.version, v.verErr
}

// goEnvKey is the part of the environment that changes what go commands do.
func goEnvKey() string {
	var b strings.Builder
	for _, k := range []string{"GOTOOLCHAIN", "GOFLAGS", "GOOS", "GOARCH", "GOEXPERIMENT", "CGO_ENABLED", "GOROOT", "GOPATH", "GOWORK"} {
		fmt.Fprintf(&b, "%s=%s\x00", k, os.Getenv(k))
	}
	return b.String()
}

// addArgPaths records the files and folders that a command's own arguments
// name, so that editing them invalidates the entry as editing the program
// does: bookgen's manual runs "go run ./cmd/bookgen test --root
// manual/fixtures/broken-link", whose output depends on the fixture book as
// much as on bookgen. Every word after "go run" or "go test" (and the value
// of a "-flag=value" word) that is a relative path inside the root, other
// than the root itself, naming an existing file records that file; naming a
// folder, its listing and every file and folder below it, except names
// starting with "." or "_" below its top (caches a program keeps there).
func (m manifest) addArgPaths(h *hashes, words []string) {
	if len(words) < 3 {
		return
	}
	root := h.root
	for _, w := range words[2:] {
		if strings.HasPrefix(w, "-") {
			_, v, ok := strings.Cut(w, "=")
			if !ok {
				continue
			}
			w = v
		}
		if w == "" || filepath.IsAbs(w) || strings.Contains(w, "...") {
			continue
		}
		rel := path.Clean(filepath.ToSlash(w))
		if rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
			continue
		}
		fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel)))
		switch {
		case err != nil:
			continue
		case fi.Mode().IsRegular():
			m.Files[rel] = h.file(rel)
		case fi.IsDir():
			_ = filepath.WalkDir(filepath.Join(root, filepath.FromSlash(rel)), func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return nil
				}
				r, err := filepath.Rel(root, p)
				if err != nil {
					return nil
				}
				r = filepath.ToSlash(r)
				if n := d.Name(); r != rel && (strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
					if d.IsDir() {
						return filepath.SkipDir
					}
					return nil
				}
				switch {
				case d.IsDir():
					m.Dirs[r] = h.dir(r)
				case d.Type().IsRegular():
					m.Files[r] = h.file(r)
				}
				return nil
			})
		}
	}
}
