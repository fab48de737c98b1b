package verify

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMemFSMatchesHost runs testdata/memfs on the host and, built for
// js/wasm, in Node with the file the page loads (memfs.js before the
// toolchain's wasm_exec.js: PageExec), and requires the
// same output line for line. The errno texts of Go's js port start with a
// capital letter ("File exists"), so lines are compared with their first
// letters folded. The control runs the same binary with the toolchain's
// wasm_exec.js alone, whose stub file system fails every call: the
// comparison must then fail, at the first folder made.
func TestMemFSMatchesHost(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no node on PATH (CI is set): the page's file system cannot be checked")
		}
		t.Skip("no node on PATH")
	}
	src, err := filepath.Abs(filepath.Join("testdata", "memfs"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	host := goCommand(t, src, nil, "run", ".")
	wasm := filepath.Join(tmp, "memfs.wasm")
	goCommand(t, src, []string{"GOOS=js", "GOARCH=wasm"}, "build", "-o", wasm, ".")
	goroot := strings.TrimSpace(string(goCommand(t, src, nil, "env", "GOROOT")))
	var toolchain []byte
	for _, p := range []string{"lib/wasm/wasm_exec.js", "misc/wasm/wasm_exec.js"} {
		if toolchain, err = os.ReadFile(filepath.Join(goroot, p)); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	runner := filepath.Join(tmp, "noderun.js")
	if err := os.WriteFile(runner, nodeRunner, 0o644); err != nil {
		t.Fatal(err)
	}
	page := func(script []byte) []string {
		p := filepath.Join(tmp, "exec.js")
		if err := os.WriteFile(p, script, 0o644); err != nil {
			t.Fatal(err)
		}
		out, _ := exec.Command(node, runner, p, wasm, "memfs").CombinedOutput()
		return foldLines(out)
	}
	want := foldLines(host)
	if len(want) < 30 {
		t.Fatalf("the host run printed %d lines:\n%s", len(want), host)
	}
	if got := page(PageExec(toolchain)); !sameLines(got, want) {
		t.Errorf("in node with memfs.js the program printed\n%s\non the host\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := page(toolchain); sameLines(got, want) || !strings.Contains(strings.Join(got, "\n"), "not implemented on js") {
		t.Errorf("with wasm_exec.js's stub file system the program printed\n%s\nwhich should differ from the host's and say the calls are not implemented", strings.Join(got, "\n"))
	}
}

func goCommand(t *testing.T, dir string, env []string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s%s", strings.Join(args, " "), err, out, stderrOf(err))
	}
	return out
}

func stderrOf(err error) []byte {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.Stderr
	}
	return nil
}

// foldLines splits out into lines with each line's first letter after a
// colon folded to lower case, so that Go's js errno texts ("File
// exists") read as the host's ("file exists").
func foldLines(out []byte) []string {
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(string(bytes.ReplaceAll(out, []byte("\r"), nil)), "\n"), "\n") {
		if i := strings.LastIndex(l, ": "); i >= 0 && i+2 < len(l) {
			l = l[:i+2] + strings.ToLower(l[i+2:i+3]) + l[i+3:]
		}
		lines = append(lines, l)
	}
	return lines
}

func sameLines(a, b []string) bool {
	return strings.Join(a, "\n") == strings.Join(b, "\n")
}
