package build

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/ownership-book/ownership/internal/verify"
)

// buildRepo builds the repository of files (see writeRepo) into a
// temporary site and returns the result and error of Build.
func buildRepo(t *testing.T, files map[string]string) (*Result, error) {
	t.Helper()
	root := writeRepo(t, files)
	return buildRoot(t, root)
}

func buildRoot(t *testing.T, root string) (*Result, error) {
	t.Helper()
	opt := Options{Root: root, Out: filepath.Join(t.TempDir(), "site")}
	opt.Verify.CacheDir = t.TempDir()
	return Build(t.Context(), opt)
}

// TestEditorLeftoversNotPublished checks that the files editors leave
// beside the ones they edit (Emacs, Vim, JetBrains, sed -i, backups) are
// not copied to the site, while an image beside them is.
func TestEditorLeftoversNotPublished(t *testing.T) {
	leftovers := []string{"4913", "#ch.md#", ".#ch.md", "ch.md~", "fig.png~", ".ch.md.swp", "ch.md.swp",
		"ch.md.swx", "fig.png.bck", "ch.md.bak", "ch.md___jb_tmp___", "ch.md___jb_old___", "fig.png___jb_bak___", "sedAb12x9"}
	files := map[string]string{
		"book/SUMMARY.md": "# Summary\n\n- [Ch](ch.md)\n",
		"book/ch.md":      "# Ch\n\n![f](fig.png)\n",
		"book/fig.png":    "png",
	}
	for _, n := range leftovers {
		files["book/"+n] = "leftover"
		files["book/img/"+n] = "leftover"
	}
	res, err := buildRepo(t, files)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(res.Files, "fig.png") {
		t.Errorf("fig.png not copied: %v", res.Files)
	}
	for _, f := range res.Files {
		base := f[strings.LastIndex(f, "/")+1:]
		if slices.Contains(leftovers, base) {
			t.Errorf("editor leftover %s published", f)
		}
	}
	if _, err := os.Stat(filepath.Join(res.Out, "4913")); err == nil {
		t.Error("4913 written to the site")
	}
}

// TestSymlinkedBookFiles checks that a symbolic link under book/ to a file
// inside the repository is published like the file, and that one leading
// outside the repository is refused: at the line of the image that names
// it, and, when no chapter names it, as the link itself. Link check and
// copy agree on what exists.
func TestSymlinkedBookFiles(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.png")
	if err := os.WriteFile(outside, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"book/SUMMARY.md":    "# Summary\n\n- [Ch](ch.md)\n",
		"book/ch.md":         "# Ch\n\n![in](img/in.png)\n",
		"figures/shared.png": "shared",
	}
	root := writeRepo(t, files)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "book", "img"), 0o755))
	must(os.Symlink("../../figures/shared.png", filepath.Join(root, "book", "img", "in.png")))
	res, err := buildRoot(t, root)
	if err != nil {
		t.Fatalf("a link inside the repository: %v", err)
	}
	if got, err := os.ReadFile(filepath.Join(res.Out, "img", "in.png")); err != nil || string(got) != "shared" {
		t.Errorf("img/in.png on the site = %q, %v; want the linked file's content", got, err)
	}

	must(os.Symlink(outside, filepath.Join(root, "book", "img", "out.png")))
	_, err = buildRoot(t, root)
	if err == nil || !strings.Contains(err.Error(), "book/img/out.png: symbolic link to "+outside+", outside the repository") {
		t.Errorf("unreferenced link outside: err = %v, want book/img/out.png refused", err)
	}
	must(os.WriteFile(filepath.Join(root, "book", "ch.md"), []byte("# Ch\n\n![in](img/in.png)\n\n![out](img/out.png)\n"), 0o644))
	_, err = buildRoot(t, root)
	if err == nil || !strings.Contains(err.Error(), "book/ch.md:5: image \"img/out.png\" names book/img/out.png, a symbolic link that leads outside the repository") {
		t.Errorf("image naming a link outside: err = %v, want book/ch.md:5 refused", err)
	}
}

// TestBookFileClashesWithGeneratedName checks that a file under book/
// whose site path bookgen writes itself is refused, naming the file,
// instead of replacing the generated page or failing without a name.
func TestBookFileClashesWithGeneratedName(t *testing.T) {
	for _, name := range []string{"print.html", "404.html", "index.html", "favicon.svg", "sitemap.xml", "robots.txt", "assets/book.0123abcd.css", "assets/vendor/x.js"} {
		t.Run(name, func(t *testing.T) {
			files := map[string]string{
				"book/SUMMARY.md": "# Summary\n\n- [Ch](ch.md)\n",
				"book/ch.md":      "# Ch\n",
				"book/" + name:    "mine",
			}
			root := writeRepo(t, files)
			if err := os.WriteFile(filepath.Join(root, "book", "book.toml"), []byte("[book]\ntitle = \"X\"\n\n[output.html]\nsite-url = \"https://example.org/\"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := buildRoot(t, root)
			if err == nil || !strings.HasPrefix(err.Error(), "book/"+name+": would be written to the site as "+name) {
				t.Errorf("err = %v, want book/%s refused by name", err, name)
			}
		})
	}
}

// TestInterruptAtRenderAndWrite checks that Ctrl-C (the context cancelled)
// as the render or the write stage starts stops the build with the
// context's error and leaves the previous site as it was: verification is
// not the only stage that listens.
func TestInterruptAtRenderAndWrite(t *testing.T) {
	for _, at := range []string{"render", "write"} {
		t.Run(at, func(t *testing.T) {
			root := writeRepo(t, map[string]string{
				"book/SUMMARY.md": "# Summary\n\n- [Ch](ch.md)\n",
				"book/ch.md":      "# Ch\n\nfirst\n",
			})
			opt := Options{Root: root, Out: filepath.Join(t.TempDir(), "site")}
			opt.Verify.CacheDir = t.TempDir()
			if _, err := Build(t.Context(), opt); err != nil {
				t.Fatal(err)
			}
			before, err := os.ReadFile(filepath.Join(opt.OutDir(), "ch.html"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "book", "ch.md"), []byte("# Ch\n\nsecond\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			stageHook = func(s string) {
				if s == at {
					cancel()
				}
			}
			defer func() { stageHook = nil }()
			_, err = Build(ctx, opt)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Build = %v, want context.Canceled", err)
			}
			after, err := os.ReadFile(filepath.Join(opt.OutDir(), "ch.html"))
			if err != nil || string(after) != string(before) {
				t.Errorf("ch.html changed by an interrupted build (%v)", err)
			}
			entries, _ := os.ReadDir(filepath.Dir(opt.OutDir()))
			if len(entries) != 1 {
				t.Errorf("output parent holds %d entries, want only the site (no temporary folder left)", len(entries))
			}
		})
	}
}

// TestRawHTMLWarningsReachTheBuild checks that raw HTML the deployed
// Content-Security-Policy (netlify.toml's) blocks is a warning of the
// build (which still succeeds), printed as "file:line: warning: ...".
func TestRawHTMLWarningsReachTheBuild(t *testing.T) {
	res, err := buildRepo(t, map[string]string{
		"netlify.toml":    "[[headers]]\nfor = \"/*\"\n[headers.values]\nContent-Security-Policy = \"script-src 'self'\"\n",
		"book/SUMMARY.md": "# Summary\n\n- [Ch](ch.md)\n",
		"book/ch.md":      "# Ch\n\n<script src=\"https://cdn.example.org/x.js\"></script>\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	PrintWarnings(&b, res)
	if !strings.HasPrefix(b.String(), "book/ch.md:3: warning: raw HTML <script src=\"https://cdn.example.org/x.js\"> loads a script from another site") {
		t.Errorf("warnings printed:\n%s", b.String())
	}
}

// TestSymlinkedFolderAndUnpublishedFiles checks that a symbolic link under
// book/ to a folder inside the repository publishes the folder's files
// (without looping on a link to an ancestor), and that an image naming a
// file the copy leaves out (an editor's leftover, a hidden file) is an
// error at its line rather than a broken image on the site.
func TestSymlinkedFolderAndUnpublishedFiles(t *testing.T) {
	root := writeRepo(t, map[string]string{
		"book/SUMMARY.md":    "# Summary\n\n- [Ch](ch.md)\n",
		"book/ch.md":         "# Ch\n\n![f](figs/shared.png)\n",
		"figures/shared.png": "shared",
	})
	if err := os.Symlink("../figures", filepath.Join(root, "book", "figs")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..", filepath.Join(root, "figures", "up")); err != nil {
		t.Fatal(err)
	}
	if _, err := buildRoot(t, root); err == nil || !strings.Contains(err.Error(), "book/figs/up: symbolic link to "+realPath(t, root)+", a folder that holds book/ itself") {
		t.Errorf("a link to the repository root: err = %v, want book/figs/up refused", err)
	}
	if err := os.Remove(filepath.Join(root, "figures", "up")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".", filepath.Join(root, "figures", "self")); err != nil {
		t.Fatal(err)
	}
	res, err := buildRoot(t, root)
	if err != nil {
		t.Fatalf("a linked folder inside the repository: %v", err)
	}
	if got, err := os.ReadFile(filepath.Join(res.Out, "figs", "shared.png")); err != nil || string(got) != "shared" {
		t.Errorf("figs/shared.png = %q, %v", got, err)
	}
	for _, f := range res.Files {
		if strings.Contains(f, "self/") {
			t.Errorf("a link to its own folder was followed: %s", f)
		}
	}
	for _, tc := range []struct{ file, want string }{
		{"fig.png~", "book/ch.md:3: image \"fig.png~\" names book/fig.png~, a hidden file or an editor's leftover"},
		{".draft.png", "book/ch.md:3: image \".draft.png\" names book/.draft.png, a hidden file or an editor's leftover"},
	} {
		if err := os.WriteFile(filepath.Join(root, "book", tc.file), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "book", "ch.md"), []byte("# Ch\n\n!["+tc.file+"]("+tc.file+")\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := buildRoot(t, root); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("image %s: err = %v, want %q", tc.file, err, tc.want)
		}
	}
}

func realPath(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestStaleStagingFoldersRemoved checks that a build removes the staging
// folders a killed build left beside its output (".site.new-N" holding the
// id of a process that has ended, ".site.new-N.old" holding a previous
// site) and leaves alone what is not recognisably its own: a folder a
// running process is writing, one without a bookgen marker, one whose name
// only looks alike.
func TestStaleStagingFoldersRemoved(t *testing.T) {
	root := writeRepo(t, map[string]string{
		"book/SUMMARY.md": "# Summary\n\n- [Ch](ch.md)\n",
		"book/ch.md":      "# Ch\n",
	})
	parent := t.TempDir()
	opt := Options{Root: root, Out: filepath.Join(parent, "site")}
	opt.Verify.CacheDir = t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	deadPid := strconv.Itoa(dead.Process.Pid)
	live := exec.Command("sleep", "60")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { live.Process.Kill(); live.Wait() }()
	dirs := map[string]map[string]string{
		".site.new-111":     {".bookgen-staging": deadPid + "\n", "ch.html": "half"},
		".site.new-222.old": {".bookgen-site": "", "ch.html": "old"},
		".site.new-333":     {".bookgen-staging": strconv.Itoa(live.Process.Pid) + "\n"},
		".site.new-444":     {"notes.txt": "mine"},
		".site.new-x":       {".bookgen-staging": deadPid + "\n"},
		".other.new-555":    {".bookgen-staging": deadPid + "\n"},
	}
	for d, fs := range dirs {
		for n, c := range fs {
			if err := os.MkdirAll(filepath.Join(parent, d), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(parent, d, n), []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := Build(t.Context(), opt); err != nil {
		t.Fatal(err)
	}
	var left []string
	entries, _ := os.ReadDir(parent)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	want := []string{".other.new-555", ".site.new-333", ".site.new-444", ".site.new-x", "site"}
	if !slices.Equal(left, want) {
		t.Errorf("beside the output after the build: %v, want %v", left, want)
	}
	if _, err := os.Stat(filepath.Join(opt.OutDir(), ".bookgen-staging")); err == nil {
		t.Error("the staging marker reached the site")
	}
}

// TestNothingOutlivesACheck builds a book whose transcript runs a program
// that daemonises (starts sleep in a session of its own and exits without
// waiting for it) and one that looks for a terminal: after the build the
// daemon no longer runs, and the check ran in a session of its own, with
// no controlling terminal, so that opening /dev/tty fails at once.
func TestNothingOutlivesACheck(t *testing.T) {
	root := writeRepo(t, map[string]string{
		"book/SUMMARY.md": "# Summary\n\n- [Ch](ch.md)\n",
		"book/ch.md": "# Ch\n\n```console\n$ go run ./examples/daemon\nstarted\n```\n\n" +
			"```console\n$ go run ./examples/tty\nown session: true\n/dev/tty: no such device or address\n```\n",
		"examples/daemon/main.go": `package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

func main() {
	cmd := exec.Command("sleep", "300")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	if err := os.WriteFile("daemon.pid", []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		panic(err)
	}
	fmt.Println("started")
}
`,
		"examples/tty/main.go": `package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

func main() {
	sid, _, _ := syscall.RawSyscall(syscall.SYS_GETSID, 0, 0, 0)
	fmt.Println("own session:", int(sid) == syscall.Getpgrp())
	f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		fmt.Println("/dev/tty:", err)
		return
	}
	f.Close()
	fmt.Println("/dev/tty: opened")
}
`,
	})
	_, err := buildRoot(t, root)
	data, rerr := os.ReadFile(filepath.Join(root, "daemon.pid"))
	if rerr != nil {
		t.Fatalf("the daemon did not start (%v); build: %v", rerr, err)
	}
	pid, _ := strconv.Atoi(string(data))
	if kerr := syscall.Kill(pid, 0); kerr == nil {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the daemon (pid %d) outlived the build", pid)
	}
	if err != nil {
		t.Errorf("build: %v", err)
	}
}

// slowD2 is a d2 diagram dagre takes seconds to lay out (see
// render.TestFigureBudget): a chain of n nodes and 2n labelled
// connections between pairs picked by a fixed sequence.
func slowD2(n int) string {
	var b strings.Builder
	for i := 0; i+1 < n; i++ {
		fmt.Fprintf(&b, "n%d -> n%d\n", i, i+1)
	}
	x := uint32(1)
	for i := 0; i < 2*n; i++ {
		x = x*1664525 + 1013904223
		a := int(x>>8) % n
		x = x*1664525 + 1013904223
		c := int(x>>8) % n
		fmt.Fprintf(&b, "n%d -> n%d: edge %d\n", a, c, i)
	}
	return b.String()
}

// TestFigureBudgetFromBookToml checks that book.toml's [bookgen]
// figure-timeout bounds one figure's drawing: a diagram that takes longer
// fails the build at its fence's line, naming the budget, and while it
// runs the build's progress names the figure.
func TestFigureBudgetFromBookToml(t *testing.T) {
	root := writeRepo(t, map[string]string{
		"book/SUMMARY.md": "# Summary\n\n- [Ch](ch.md)\n",
		"book/ch.md":      "# Ch\n\n```d2\n" + slowD2(20) + "```\n",
	})
	if err := os.WriteFile(filepath.Join(root, "book", "book.toml"), []byte("[book]\ntitle = \"X\"\n\n[bookgen]\nfigure-timeout = \"1500ms\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	opt := Options{Root: root, Out: filepath.Join(t.TempDir(), "site")}
	opt.Verify.CacheDir = t.TempDir()
	var mu sync.Mutex
	var running []string
	opt.Verify.Progress = func(p verify.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if p.Total == 0 && len(p.Running) > 0 {
			running = append(running, ProgressText(p, p.Since[0]))
		}
	}
	_, err := Build(t.Context(), opt)
	if err == nil || !strings.HasPrefix(err.Error(), "book/ch.md:3: ```d2 figure: drawing the figure took longer than its budget of 1.5s ([bookgen] figure-timeout in book.toml)") {
		t.Fatalf("err = %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(running) == 0 || running[0] != "drawing d2 figure at book/ch.md:3 (0s)" {
		t.Errorf("progress while drawing: %q", running)
	}
}

// TestSpecialFileIsABrokenLink checks that a chapter's link or image to a
// named pipe under book/ is an error at its line, as the site stage never
// copies such a file (and reading it would wait for a writer): the link
// check and the copy agree.
func TestSpecialFileIsABrokenLink(t *testing.T) {
	for _, tc := range []struct{ md, want string }{
		{"# Ch\n\nSee [the log](log.txt).\n", `book/ch.md:3: link "log.txt" names book/log.txt, a named pipe, not a regular file; the site publishes only regular files`},
		{"# Ch\n\n![fig](fig.png)\n", `book/ch.md:3: image "fig.png" names book/fig.png, a named pipe, not a regular file`},
	} {
		root := writeRepo(t, map[string]string{
			"book/SUMMARY.md": "# Summary\n\n- [Ch](ch.md)\n",
			"book/ch.md":      tc.md,
		})
		for _, name := range []string{"log.txt", "fig.png"} {
			if err := syscall.Mkfifo(filepath.Join(root, "book", name), 0o644); err != nil {
				t.Fatalf("mkfifo: %v", err)
			}
		}
		if _, err := buildRoot(t, root); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err = %v, want %q", err, tc.want)
		}
	}
}
