package build

import (
	"context"
	"path"
	"path/filepath"
	"strings"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/diag"
)

// Also returns the options of each book the main book at opt.Root lists in
// its book.toml's [bookgen] also-build (book.Config.AlsoBuild), in the order
// listed: the same options with Book set to the folder and Out to the
// folder of that name inside opt's output ("manual" is built from
// manual/ into site/manual/). The stage caches of opt (Loads, Expands,
// Renders, Incremental) belong to the main book and are not passed on.
// A book.toml that cannot be read is an error; one that lists nothing
// gives none.
func Also(opt Options) ([]Options, error) {
	if opt.Book != "" {
		return nil, nil // only the main book lists others
	}
	_, _, _, cfg, err := book.Locate(opt.Root)
	if err != nil {
		return nil, err
	}
	var out []Options
	for _, dir := range cfg.AlsoBuild {
		o := opt
		o.Book = dir
		o.Out = filepath.Join(opt.OutDir(), filepath.FromSlash(dir))
		o.Loads, o.Expands, o.Renders, o.Incremental = nil, nil, nil, nil
		out = append(out, o)
	}
	return out, nil
}

// BuildAll builds the main book and every book it lists in [bookgen]
// also-build (see Also) into the subfolders of its output. The listed books
// are verified first (Test: their checks are run and cached, their pages
// rendered and dropped), so that a problem in any of them fails the run
// before the main site is replaced: the last good site stays. Then the main
// book is built and swapped in, and each listed book is built into its
// subfolder (its checks now cached). A main site that already has a file
// under a listed book's folder is an error naming it. Results are in the
// order built (main first); err is the first failure.
func BuildAll(ctx context.Context, opt Options) ([]*Result, error) {
	also, err := Also(opt)
	if err != nil {
		return nil, err
	}
	for _, o := range also {
		if res, err := Test(ctx, o); err != nil {
			return []*Result{res}, err
		}
	}
	main, err := Build(ctx, opt)
	results := []*Result{main}
	if err != nil {
		return results, err
	}
	for _, o := range also {
		prefix := path.Clean(filepath.ToSlash(o.Book)) + "/"
		for _, f := range main.Files {
			if strings.HasPrefix(f, prefix) {
				return results, diag.Errorf(book.ConfigFile, 0, "also-build %q: the book's own site has %s, where the other book would go; rename one", o.Book, f)
			}
		}
		res, err := Build(ctx, o)
		results = append(results, res)
		if err != nil {
			return results, err
		}
	}
	return results, nil
}

// TestAll is Test of the main book and of every book it lists in [bookgen]
// also-build, in that order; it stops at the first that fails.
func TestAll(ctx context.Context, opt Options) ([]*Result, error) {
	also, err := Also(opt)
	if err != nil {
		return nil, err
	}
	var results []*Result
	for _, o := range append([]Options{opt}, also...) {
		res, err := Test(ctx, o)
		results = append(results, res)
		if err != nil {
			return results, err
		}
	}
	return results, nil
}
