package verify

// Mutants: the negative controls of claims.
//
// A claim may name, after the link to its check and in the same paragraph
// (or table row), one or more mutants: links to folders
// <package>/testdata/mutants/<name>/ (relative to the chapter, like any
// link),
//
//	[TestMayMutate](../examples/ownership/fence_test.go#TestMayMutate)
//	kills [mutant owned-by-anyone](../examples/ownership/testdata/mutants/owned-by-anyone/).
//
// A mutant's folder holds one .go file, a copy of the package's file of the
// same name with a small change: the rule the claim rests on, broken. go
// ignores testdata folders, so a mutant is never built with the package;
// verify runs the claim's check with the mutant in place of the real file
// through go test -overlay (the tree is never edited):
//
//	go test -json -vet=off -count=1 -overlay <the replacement> -run '^TestX$' ./examples/x
//
// and requires the check to fail. A check that passes with the mutant
// applied cannot see what the claim says it checks: the build fails at the
// claim's line. A mutant that does not compile fails at its own file:line.
// A killed mutant is cached like any check (the key names the check, the
// mutant's content and every file of the packages involved), so a prose
// edit runs none; a surviving one is never cached.

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/expand"
	"github.com/ownership-book/ownership/internal/markdown"
)

// Mutant is one mutant a claim names.
type Mutant struct {
	// Name is the mutant's folder name ("owned-by-anyone").
	Name string
	// Dir is the repository-relative folder
	// ("examples/ownership/testdata/mutants/owned-by-anyone"), File the
	// mutant file in it and Replaces the package file it stands in for
	// ("examples/ownership/fence.go").
	Dir, File, Replaces string
	// LinkFile, LinkLine and Dest tell where the link to the mutant is
	// written and its destination as written.
	LinkFile string
	LinkLine int
	Dest     string
	// Diff is the unified diff from Replaces to File (labels are the
	// repository paths), 3 lines of context.
	Diff string
	// Killed is set when the claim's check failed with the mutant applied
	// in this verification (run now or answered by the cache) and passed
	// without it.
	Killed bool
}

// mutantFiles remembers the content of mutant and replaced files by stamp.
var mutantFiles = newStampMemo[*[]byte]()

func readMemo(p string) ([]byte, error) {
	var rerr error
	b := mutantFiles.get(p, func(p string) (*[]byte, bool) {
		data, err := os.ReadFile(p)
		if err != nil {
			rerr = err
			return nil, false
		}
		return &data, true
	})
	if b == nil {
		if rerr == nil {
			rerr = os.ErrNotExist
		}
		return nil, rerr
	}
	return *b, nil
}

// diffs remembers unified diffs by the content of both sides.
var diffs sync.Map // [2][32]byte -> string

func unifiedDiff(oldName, newName string, old, new []byte) string {
	k := [2][32]byte{sha256.Sum256(old), sha256.Sum256(new)}
	if d, ok := diffs.Load(k); ok {
		return d.(string)
	}
	d := udiff.Unified(oldName, newName, string(old), string(new))
	diffs.Store(k, d)
	return d
}

// A mutant changes one rule: at most maxMutantHunks places of the file
// it replaces (a moved statement is two) and maxMutantLines lines. A
// mutant is a whole copy of the file, so one made from an older version
// of it differs in the places that changed since: those limits catch the
// copy drifting from the file, which would otherwise go on testing code
// that no longer exists.
const (
	maxMutantHunks = 2
	maxMutantLines = 20
)

// diffSize returns the hunks of a unified diff and its changed lines.
func diffSize(d string) (hunks, changed int) {
	for _, l := range strings.Split(d, "\n") {
		switch {
		case strings.HasPrefix(l, "@@"):
			hunks++
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		case strings.HasPrefix(l, "+"), strings.HasPrefix(l, "-"):
			changed++
		}
	}
	return hunks, changed
}

// resolveMutants reads the mutants of claim c (its links ms) under root
// and returns them with an error at the link's line for each that is not
// a mutant: no such folder, not exactly one .go file, no package file of
// that name to replace, a _test.go file, or identical to the real file.
func resolveMutants(root string, d *expand.Doc, c Claim, ms []markdown.MutantLink) ([]Mutant, diag.List) {
	var out []Mutant
	var errs diag.List
	for _, ml := range ms {
		o := d.Origin(ml.Line)
		fail := func(format string, args ...any) {
			errs = append(errs, diag.Errorf(o.File, o.Line, "claim %s: mutant %q: "+format, append([]any{c.Func, ml.Dest}, args...)...))
		}
		_, pkgDir, name, _ := markdown.MutantTarget(d.Chapter.File(), ml.Dest)
		ents, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(ml.Dir)))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				fail("the folder %s does not exist", ml.Dir)
			} else {
				fail("%v", err)
			}
			continue
		}
		var gofiles []string
		for _, e := range ents {
			if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".go") {
				gofiles = append(gofiles, e.Name())
			}
		}
		if len(gofiles) != 1 {
			fail("%s holds %d .go files; a mutant is one .go file, named as the file of %s it replaces", ml.Dir, len(gofiles), pkgDir)
			continue
		}
		base := gofiles[0]
		if strings.HasSuffix(base, "_test.go") {
			fail("%s replaces a test file; a mutant changes the code under test, never its check", path.Join(ml.Dir, base))
			continue
		}
		m := Mutant{Name: name, Dir: ml.Dir, File: path.Join(ml.Dir, base), Replaces: path.Join(pkgDir, base),
			LinkFile: o.File, LinkLine: o.Line, Dest: ml.Dest}
		real, err := readMemo(filepath.Join(root, filepath.FromSlash(m.Replaces)))
		if err != nil {
			fail("%s has no file %s for %s to replace", pkgDir, base, m.File)
			continue
		}
		mut, err := readMemo(filepath.Join(root, filepath.FromSlash(m.File)))
		if err != nil {
			fail("%v", err)
			continue
		}
		m.Diff = unifiedDiff(m.Replaces, m.File, real, mut)
		if m.Diff == "" {
			fail("%s is identical to %s: it breaks nothing", m.File, m.Replaces)
			continue
		}
		if hunks, changed := diffSize(m.Diff); hunks > maxMutantHunks || changed > maxMutantLines {
			places := fmt.Sprintf("%d places", hunks)
			if hunks == 1 {
				places = "1 place"
			}
			fail("%s differs from %s in %s, %d changed lines; a mutant changes one rule (at most %d places, %d lines). If %s changed since the mutant was made from it, make the mutant again from the file as it is", m.File, m.Replaces, places, changed, maxMutantHunks, maxMutantLines, m.Replaces)
			continue
		}
		out = append(out, m)
	}
	return out, errs
}

// mutantRun is one (check, mutant) pair to run: several claims may name
// the same.
type mutantRun struct {
	pkg, fn string // the check: "./examples/x", "TestX"
	m       Mutant
}

func (r mutantRun) id() string { return r.pkg + "\x00" + r.fn + "\x00" + r.m.File }

// mutantOutcome is what a mutant job found.
type mutantOutcome struct {
	id     string
	killed bool
	output string // the check's output under the mutant, when it survived
}

// mutantRuns returns the distinct (check, mutant) pairs of claims, in
// order of first appearance.
func mutantRuns(claims []Claim) []mutantRun {
	var out []mutantRun
	seen := map[string]bool{}
	for _, c := range claims {
		for _, m := range c.Mutants {
			r := mutantRun{pkg: c.Package, fn: c.Func, m: m}
			if !seen[r.id()] {
				seen[r.id()] = true
				out = append(out, r)
			}
		}
	}
	return out
}

// mutantJob runs the check of r with its mutant applied. The outcome says
// whether the check failed (the mutant is killed). Errors: a mutant that
// does not compile (at the mutant's file:line); a check that did not run
// under the mutant. A surviving mutant is reported by settleMutants, at
// each claim that names it.
func (v *verifier) mutantJob(r mutantRun) job {
	return func(ctx context.Context) jobResult {
		var res jobResult
		subject := r.fn + " with " + r.m.File
		// res.mutant is set only when the check ran to an outcome (or
		// the cache answered): a mutant that does not compile, or under
		// which the check did not run, is reported here and not again as
		// a survivor.
		out := &mutantOutcome{id: r.id()}
		fail := func(file string, line int, detail, format string, args ...any) jobResult {
			e := diag.Errorf(file, line, format, args...)
			e.Detail = detail
			res.errs = append(res.errs, e)
			return res
		}
		abs := func(p string) string { return filepath.Join(v.root, filepath.FromSlash(p)) }
		mut, err := readMemo(abs(r.m.File))
		if err != nil {
			return fail(r.m.LinkFile, r.m.LinkLine, "", "mutant %s: %v", r.m.File, err)
		}
		key, err := v.staticKey(ctx, "mutant", r.pkg, r.fn, r.m.Replaces, r.m.File, sum(mut))
		if err != nil {
			return fail(r.m.LinkFile, r.m.LinkLine, "", "mutant %s: %v", r.m.File, err)
		}
		if _, ok := v.cache.lookup(key); ok {
			v.logf("verify: mutant %s: cached", subject)
			res.checks = append(res.checks, Check{Kind: "mutant", Subject: subject, Cached: true})
			out.killed = true
			res.mutant = out
			return res
		}
		l, err := v.localDirs(ctx, nil, []string{r.pkg})
		if err != nil {
			return fail(r.m.LinkFile, r.m.LinkLine, "", "mutant %s: %v", r.m.File, err)
		}
		pkgDir := path.Dir(r.m.Replaces)
		builds := false
		for _, d := range l.dirs {
			builds = builds || d == pkgDir
		}
		if !builds {
			return fail(r.m.LinkFile, r.m.LinkLine, "", "claim %s: mutant %s replaces a file of %s, which go test %s does not build; name a mutant of the code the check runs", r.fn, r.m.Name, pkgDir, r.pkg)
		}
		m := newManifest(v.cache.h, l)
		tmp, err := os.MkdirTemp("", "bookgen-mutant-")
		if err != nil {
			return fail(r.m.LinkFile, r.m.LinkLine, "", "mutant %s: %v", r.m.File, err)
		}
		defer os.RemoveAll(tmp)
		overlay := filepath.Join(tmp, "overlay.json")
		ov, _ := json.Marshal(map[string]map[string]string{"Replace": {abs(r.m.Replaces): abs(r.m.File)}})
		if err := os.WriteFile(overlay, ov, 0o644); err != nil {
			return fail(r.m.LinkFile, r.m.LinkLine, "", "mutant %s: %v", r.m.File, err)
		}
		// -count=1: a mutant's verdict comes from a run, never from go's
		// cache of test results.
		args := []string{v.goCmd, "test", "-json", "-vet=off", "-count=1", "-timeout=" + testBinaryTimeout.String(), "-overlay", overlay, "-run", "^" + regexp.QuoteMeta(r.fn) + "$", r.pkg}
		// A property test that fails under the mutant may write a
		// failure file (rapid: testdata/rapid/...) into the package; the
		// tree is not to be edited, so whatever the run adds there goes.
		before := litter(v.root, l.dirs)
		run, err := v.exec(ctx, Run{Args: args, Dir: v.root, Timeout: PackageTimeout})
		removeLitter(v.root, l.dirs, before)
		res.checks = append(res.checks, Check{Kind: "mutant", Subject: subject, Elapsed: run.Elapsed})
		if err != nil {
			return fail(r.m.LinkFile, r.m.LinkLine, "", "mutant %s: %v", r.m.File, err)
		}
		status, outputs, text := readTestEvents(run.Output)
		switch st := status[r.fn]; {
		case st == "fail":
			out.killed = true
			res.mutant = out
			v.logf("verify: mutant %s: killed (%v)", subject, run.Elapsed.Round(time.Millisecond))
			if err := v.cache.store(&entry{Kind: "mutant", Subject: subject, Key: key, Manifest: m}); err != nil {
				v.logf("verify: cache: %v", err)
			}
		case st == "pass" || st == "empty":
			out.output = clipOutput(outputs[r.fn])
			res.mutant = out
			v.logf("verify: mutant %s: SURVIVED (%v)", subject, run.Elapsed.Round(time.Millisecond))
		case st == "skip":
			return fail(r.m.LinkFile, r.m.LinkLine, clipOutput(outputs[r.fn]), "claim %s was skipped with mutant %s applied; a skipped check kills nothing", r.fn, r.m.Name)
		case run.TimedOut:
			return fail(r.m.LinkFile, r.m.LinkLine, clipOutput(string(text)), "claim %s with mutant %s applied: timeout after %s", r.fn, r.m.Name, fmtDuration(PackageTimeout))
		default:
			// It did not run: the mutant does not compile (go names the
			// overlay's source, the mutant file), or the package stops
			// before the check (a panic in init).
			if file, line, msg := v.locate(path.Dir(r.m.File), string(text)); line > 0 && file == r.m.File {
				return fail(file, line, clipOutput(string(text)), "mutant %s does not compile: %s", r.m.Name, msg)
			}
			_, _, msg := v.locate(pkgDir, string(text))
			return fail(r.m.LinkFile, r.m.LinkLine, clipOutput(string(text)), "claim %s did not run with mutant %s applied: %s", r.fn, r.m.Name, msg)
		}
		return res
	}
}

// settleMutants sets Killed on every mutant of the claims that passed
// whose job says the check failed under it, and returns an error at the
// claim's line for every mutant that survived.
func settleMutants(claims []Claim, results []jobResult) diag.List {
	done := map[string]*mutantOutcome{}
	for _, r := range results {
		if r.mutant != nil {
			done[r.mutant.id] = r.mutant
		}
	}
	var errs diag.List
	for i := range claims {
		c := &claims[i]
		for j := range c.Mutants {
			m := &c.Mutants[j]
			o := done[mutantRun{pkg: c.Package, fn: c.Func, m: *m}.id()]
			if o == nil {
				continue // its job reported why
			}
			if o.killed {
				m.Killed = c.Passed
				continue
			}
			e := diag.Errorf(c.File, c.Line, "%s does not fail when mutant %s is applied: the check cannot see what the claim says it checks", c.Func, m.Name)
			e.Detail = fmt.Sprintf("go test -overlay replaced %s with %s (%s:%d) and %s still passed:\n%s", m.Replaces, m.File, m.LinkFile, m.LinkLine, c.Func, m.Diff)
			if o.output != "" {
				e.Detail += "\nIts output under the mutant:\n" + o.output
			}
			errs = append(errs, e)
		}
	}
	return errs
}

// litterDirs are the folders of a package where a failing test leaves
// files: rapid's failure files.
var litterDirs = []string{"testdata/rapid"}

// litter returns the files under the litterDirs of dirs (repository-
// relative package folders).
func litter(root string, dirs []string) map[string]bool {
	set := map[string]bool{}
	for _, d := range dirs {
		for _, ld := range litterDirs {
			base := filepath.Join(root, filepath.FromSlash(d), filepath.FromSlash(ld))
			_ = filepath.WalkDir(base, func(p string, e os.DirEntry, err error) error {
				if err == nil {
					set[p] = true
				}
				return nil
			})
		}
	}
	return set
}

// removeLitter removes the files and folders under the litterDirs of dirs
// that were not in before, deepest first.
func removeLitter(root string, dirs []string, before map[string]bool) {
	var added []string
	for p := range litter(root, dirs) {
		if !before[p] {
			added = append(added, p)
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(added)))
	for _, p := range added {
		_ = os.Remove(p)
	}
}
