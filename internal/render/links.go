package render

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/diag"
)

// rewrite maps a link destination written in chapter chPath to the one the
// page gets. It returns the chapter link to check, if any. A link to a page
// that is not there (a missing file or folder page, a .md file that is not
// a chapter, a path that leaves the repository) is an error returned with
// the destination mdBook would write (".md" made ".html"), used when the
// book's broken links are warnings; any other error comes with "".
func (r *Renderer) rewrite(chPath, dest string) (string, *Link, *diag.Error) {
	if dest == "" {
		return dest, nil, nil
	}
	if strings.HasPrefix(dest, "#") {
		frag := dest[1:]
		if f, err := url.PathUnescape(frag); err == nil {
			frag = f // "#%CE%B5" names the id "ε"
		}
		return dest, &Link{Target: chPath, Fragment: frag}, nil
	}
	u, err := url.Parse(dest)
	if err != nil || u.Scheme != "" || u.Host != "" || strings.HasPrefix(dest, "/") || u.Path == "" {
		return dest, nil, nil // absolute, site-absolute or unparsable: leave alone
	}
	if r.book.Config.Unchecked(path.Join(path.Dir(chPath), u.Path)) {
		// [bookgen] unchecked-links: a sibling book's page
		// ("../std/index.html"), left as written, never sent to
		// the repository even when the path exists there.
		return dest, nil, nil
	}
	repoPath := path.Join(path.Dir(r.book.RepoPath(chPath)), u.Path)
	if repoPath == ".." || strings.HasPrefix(repoPath, "../") {
		return dest, nil, &diag.Error{Msg: fmt.Sprintf("link %q leaves the repository", dest)}
	}
	if bookPath, ok := r.book.InSrc(repoPath); ok {
		if ch, ok := r.pages[bookPath]; ok && !r.chapters[bookPath] {
			// A link to a chapter's page ("chapter_1.html#x"), as
			// mdBook authors may write: checked like one to its file.
			return dest, &Link{Target: ch, Fragment: u.Fragment}, nil
		}
		if strings.HasSuffix(bookPath, ".md") || r.chapters[bookPath] {
			// The chapter's page, where book.HTMLPath puts it:
			// "a/b.md" is "a/b.html", "a/README.md" is "a/index.html".
			out := htmlDest(u)
			if !r.chapters[bookPath] {
				return out, nil, &diag.Error{Msg: fmt.Sprintf("link %q names %s, which is not a chapter in SUMMARY.md", dest, repoPath)}
			}
			return out, &Link{Target: bookPath, Fragment: u.Fragment}, nil
		}
		if r.book.Root != "" {
			fi, err := r.stat(repoPath)
			if err != nil {
				return brokenDest(dest, err), nil, missing("link", dest, repoPath, err)
			}
			// A folder is a page only through its index: a chapter
			// index.md (written as index.html) or a copied index.html.
			if _, index := r.pages[path.Join(bookPath, "index.html")]; fi.IsDir() && !index {
				if _, err := r.stat(path.Join(repoPath, "index.html")); err != nil {
					return dest, nil, &diag.Error{Msg: fmt.Sprintf("link %q names the folder %s, which has no page on the site (no index.md chapter or index.html in it)", dest, repoPath)}
				}
			}
		}
		return dest, nil, nil // an asset copied with the book
	}
	fi, err := r.stat(repoPath)
	if err != nil {
		return brokenDest(dest, err), nil, missing("link", dest, repoPath, err)
	}
	repo := strings.TrimSuffix(r.book.Config.Repository, "/")
	if repo == "" {
		return dest, nil, nil
	}
	kind := "blob"
	if fi.IsDir() {
		kind = "tree"
	}
	out := repo + "/" + kind + "/main/" + (&url.URL{Path: repoPath}).EscapedPath()
	if u.Fragment != "" {
		out += "#" + u.EscapedFragment()
	}
	return out, nil, nil
}

// htmlDest is the destination of a link to the chapter file u names, as
// book.HTMLPath writes its page: "a/b.md#x" is "a/b.html#x", "a/README.md"
// is "a/index.html".
func htmlDest(u *url.URL) string {
	ep := u.EscapedPath()
	i := strings.LastIndexByte(ep, '/')
	base, err := url.PathUnescape(ep[i+1:])
	if err != nil {
		base = ep[i+1:]
	}
	out := ep[:i+1] + (&url.URL{Path: book.HTMLPath(base)}).EscapedPath()
	if u.RawQuery != "" {
		out += "?" + u.RawQuery
	}
	if u.Fragment != "" {
		out += "#" + u.EscapedFragment()
	}
	return out
}

// brokenDest is what rewrite returns with the error for a link whose file
// r.stat did not find: the destination as written when the file does not
// exist (a broken link, a warning when the book asks), "" when it was
// refused (hidden, not a regular file, or outside the repository: always an
// error).
func brokenDest(dest string, err error) string {
	if errors.Is(err, ErrNotPublished) || errors.Is(err, ErrOutside) || errors.Is(err, ErrNotRegular) {
		return ""
	}
	return dest
}

// isExternal reports whether dest is an absolute http or https URL.
func isExternal(dest string) bool {
	u, err := url.Parse(dest)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// checkImage accepts an image that is a URL or a file of the source folder
// (book/; the site stage copies those); anything else would be missing from the site.
func (r *Renderer) checkImage(chPath, dest string) *diag.Error {
	u, err := url.Parse(dest)
	if dest == "" || err != nil || u.Scheme != "" || u.Host != "" || strings.HasPrefix(dest, "/") || u.Path == "" {
		return nil
	}
	if r.book.Config.Unchecked(path.Join(path.Dir(chPath), u.Path)) {
		return nil
	}
	repoPath := path.Join(path.Dir(r.book.RepoPath(chPath)), u.Path)
	if _, ok := r.book.InSrc(repoPath); !ok {
		return &diag.Error{Msg: fmt.Sprintf("image %q is outside %s/; only files under %s/ are copied to the site", dest, r.book.RepoPath(""), r.book.RepoPath(""))}
	}
	if r.book.Root != "" {
		if _, err := r.stat(repoPath); err != nil {
			return missing("image", dest, repoPath, err)
		}
	}
	return nil
}

// missing is the error for a link or image whose file r.stat did not find
// or refused.
func missing(what, dest, repoPath string, err error) *diag.Error {
	if errors.Is(err, ErrNotPublished) {
		return &diag.Error{Msg: fmt.Sprintf("%s %q names %s, a hidden file or an editor's leftover, which the site does not publish", what, dest, repoPath)}
	}
	if nr := (*notRegularError)(nil); errors.As(err, &nr) {
		return &diag.Error{Msg: fmt.Sprintf("%s %q names %s, %s, not a regular file; the site publishes only regular files", what, dest, repoPath, nr.kind)}
	}
	if errors.Is(err, ErrOutside) {
		return &diag.Error{Msg: fmt.Sprintf("%s %q names %s, a symbolic link that leads outside the repository; the site publishes only files inside it", what, dest, repoPath)}
	}
	return &diag.Error{Msg: fmt.Sprintf("%s %q names %s, which does not exist", what, dest, repoPath)}
}
