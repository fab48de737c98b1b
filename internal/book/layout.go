package book

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/ownership-book/ownership/internal/diag"
)

// Layout tells where a book's book.toml and chapters are.
type Layout int

const (
	// NoLayout: neither of the two below.
	NoLayout Layout = iota
	// BookgenLayout: book/SUMMARY.md or book/book.toml below the root
	// (beside go.mod). [book] src is relative to book/ and defaults to
	// ".": the chapters are in book/ itself.
	BookgenLayout
	// MdBookLayout: book.toml at the root, or no book.toml and
	// src/SUMMARY.md (mdBook builds such a book with its defaults), and
	// neither book/book.toml nor book/SUMMARY.md, so that mdBook's output
	// folder book/ is not taken for a book. [book] src defaults to "src",
	// as in mdBook.
	MdBookLayout
)

// LayoutOf tells the layout of the book whose root is the folder root,
// looking only at which files exist.
func LayoutOf(root string) Layout {
	switch {
	case isRegular(filepath.Join(root, "book", "SUMMARY.md")) || isRegular(filepath.Join(root, "book", "book.toml")):
		return BookgenLayout
	case isRegular(filepath.Join(root, "book.toml")), isRegular(filepath.Join(root, "src", "SUMMARY.md")):
		// mdBook's MDBook::load reads book.toml when there is one and
		// takes Config::default() otherwise.
		return MdBookLayout
	}
	return NoLayout
}

// ConfDir returns the repository-relative slash path of the folder of
// book.toml in layout l: "." for mdBook's layout, "book" otherwise.
func (l Layout) ConfDir() string {
	if l == MdBookLayout {
		return "."
	}
	return "book"
}

// defaultSrc is [book] src when book.toml does not set it.
func (l Layout) defaultSrc() string {
	if l == MdBookLayout {
		return "src"
	}
	return "."
}

// Locate returns the layout of the book at root (BookgenLayout when there
// is none, so that Load says what is missing), the repository-relative
// slash path of its book.toml and of its source folder ("book", "src",
// "book/src"), and the parsed book.toml (the defaults when it does not
// exist). A [book] src that is absolute or leaves root is a *diag.Error
// at book.toml's line of src. A book in mdBook's layout whose book.toml has
// no [bookgen] table (or that has no book.toml) and does not set
// broken-links gets Config.BrokenLinks = BrokenLinksWarn.
func Locate(root string) (l Layout, confFile, src string, cfg *Config, err error) {
	return LocateIn(root, "")
}

// LocateIn is Locate for the book in the folder dir of the repository at
// root (see LoadDir): bookgen's layout with dir in place of book/. dir ""
// is Locate; a dir that is absolute or leaves root is an error.
func LocateIn(root, dir string) (l Layout, confFile, src string, cfg *Config, err error) {
	confDir := ""
	if dir == "" {
		l = LayoutOf(root)
		if l == NoLayout {
			l = BookgenLayout
		}
		confDir = l.ConfDir()
	} else {
		confDir = path.Clean(filepath.ToSlash(dir))
		if path.IsAbs(confDir) || filepath.IsAbs(dir) || confDir == "." || confDir == ".." || strings.HasPrefix(confDir, "../") {
			return BookgenLayout, "", "", nil, fmt.Errorf("book folder %q: give a folder inside the repository root %s, relative to it", dir, root)
		}
		l = BookgenLayout
	}
	confFile = path.Join(confDir, "book.toml")
	env := envOverrides(os.Environ())
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(confFile)))
	switch {
	case errors.Is(err, fs.ErrNotExist) && len(env) == 0:
		cfg = &Config{Language: "en", Timeout: DefaultTimeout, FigureTimeout: DefaultFigureTimeout}
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return l, confFile, "", nil, diag.Errorf(confFile, 0, "%v", err)
	default:
		// No book.toml but MDBOOK_ variables: mdBook sets them over its
		// defaults, which an empty book.toml gives.
		if cfg, err = parseConfig(data, confFile, env); err != nil {
			return l, confFile, "", nil, err
		}
	}
	cfg.Plain = l == MdBookLayout && !cfg.BookgenTable
	if cfg.Plain && cfg.BrokenLinksLine == 0 {
		// A plain mdBook book: mdBook checks no link and builds one
		// to a missing page; bookgen says so and builds it too.
		cfg.BrokenLinks = BrokenLinksWarn
	}
	s := cfg.Src
	if s == "" {
		s = l.defaultSrc()
	}
	if path.IsAbs(s) || filepath.IsAbs(s) || strings.Contains(s, "\\") {
		return l, confFile, "", nil, diag.Errorf(confFile, cfg.SrcLine, "src %q is an absolute path; give a folder relative to %s", cfg.Src, confFile)
	}
	src = path.Join(confDir, s)
	if src == ".." || strings.HasPrefix(src, "../") {
		return l, confFile, "", nil, diag.Errorf(confFile, cfg.SrcLine, "src %q leaves the repository root %s; the chapters must be inside it", cfg.Src, root)
	}
	return l, confFile, src, cfg, nil
}

// RepoPath returns the repository-relative slash path of p, a slash path
// relative to the book's source folder ("a/b.md" is "book/a/b.md" in
// bookgen's layout, "src/a/b.md" in mdBook's).
func (b *Book) RepoPath(p string) string {
	return path.Join(b.src(), p)
}

// InSrc returns the path relative to the source folder of the
// repository-relative slash path p, and whether p is inside that folder
// ("book/a.md" is "a.md", true in bookgen's layout).
func (b *Book) InSrc(p string) (string, bool) {
	if b.src() == "." {
		return p, p != ".." && !strings.HasPrefix(p, "../")
	}
	return strings.CutPrefix(p, b.src()+"/")
}

// src is Src, "book" for a Book made by hand (as Item.File reads it).
func (b *Book) src() string {
	if b.Src == "" {
		return "book"
	}
	return b.Src
}

// RepoOf returns the repository that holds the book whose root is the
// absolute folder root: the nearest folder at or above root that is the top
// of a git work tree (holds a file or folder named .git), or root itself
// when none does. Give root with its symbolic links resolved, as git sees
// it. Includes may read any file inside it (mdBook's guide includes
// ../../../examples/x.rs from guide/src/format/).
func RepoOf(root string) string {
	for dir := root; ; {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return root
		}
		dir = parent
	}
}

// RepoRoot returns Repo, or Root for a Book made by hand.
func (b *Book) RepoRoot() string {
	if b.Repo == "" {
		return b.Root
	}
	return b.Repo
}

func isRegular(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}
