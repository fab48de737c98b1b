package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ownership-book/ownership/tests/internal/toolskip"
)

// TestPageStoreInNode runs examples/replica's js-only tests (the page's
// stand-in for bolt's raft.db, store_js.go) in Node with the toolchain's
// go_js_wasm_exec, since a host's go test never compiles them.
func TestPageStoreInNode(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		toolskip.Missing(t, "the page's store is tested in Node: install nodejs")
	}
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	runner := filepath.Join(strings.TrimSpace(string(goroot)), "lib", "wasm", "go_js_wasm_exec")
	cmd := exec.Command("go", "test", "-count=1", "-tags", "hashicorpmetrics", "-exec", runner, "-run", "^TestPageStore$", "-v", "./examples/replica/")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestPageStore") {
		t.Fatalf("GOOS=js go test ./examples/replica -run TestPageStore: %v\n%s", err, out)
	}
}
