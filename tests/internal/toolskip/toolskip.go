// Package toolskip skips a test whose external tool (Chromium, Node) is
// missing, in a way that Go's test cache cannot replay once the tool is
// installed.
//
// go test caches a result under the test's inputs: the environment
// variables it read and the files inside the module it opened or stat'ed.
// A browser found with exec.LookPath lives outside the module
// (/usr/bin/chromium), so installing it changes no input, and a plain
// t.Skip would be printed "(cached)" on every later run. Missing writes the
// skip's reason to tests/artifacts/skipped-<test>.txt and opens it: go test
// refuses to cache a result that read a file modified less than 2 s before
// it finished (cmd/go, "file used as input is too new"), so a skip is never
// cached, while a pass is cached as usual.
package toolskip

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Missing reports that a tool the test needs is missing: under CI (the CI
// environment variable set) it fails the test, elsewhere it skips it. msg
// says what is missing and the command that provides it.
func Missing(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s (CI is set, so a missing tool is a failure; .ci/run installs it)", msg)
	}
	if err := uncacheable(t.Name(), msg); err != nil {
		t.Logf("toolskip: %v (go test may cache this skip; run with -count=1 after installing the tool)", err)
	}
	t.Skip(msg)
}

// uncacheable writes msg to tests/artifacts/skipped-<name>.txt in the
// module and reads it back, so that the test's result is not cached.
func uncacheable(name, msg string) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	dir := filepath.Join(root, "tests", "artifacts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	file := filepath.Join(dir, "skipped-"+strings.NewReplacer("/", "_", " ", "_").Replace(name)+".txt")
	if err := os.WriteFile(file, []byte(msg+"\n"), 0o644); err != nil {
		return err
	}
	_, err = os.ReadFile(file)
	return err
}

// moduleRoot is the first directory upwards from the working directory
// (the test's package directory) that holds a go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}
