package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeTools puts scripts named after tools first in PATH (and nothing
// else: the directory replaces PATH, so a tool not given is missing).
func fakeTools(t *testing.T, scripts map[string]string) string {
	t.Helper()
	bin := t.TempDir()
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin)
	return bin
}

// TestEnsureSuiteRunsNpmCI checks that on a fresh clone (no node_modules)
// with Node installed the suite installs itself with "npm ci" from the lock
// instead of skipping.
func TestEnsureSuiteRunsNpmCI(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(t.TempDir(), "npm.log")
	fakeTools(t, map[string]string{
		"node": "echo v20.20.2\n",
		"npx":  "exit 0\n",
		"npm": "echo \"$PWD $*\" >> " + log + "\n" +
			"/bin/mkdir -p node_modules/@durable-streams/server-conformance-tests\n" +
			"echo '{}' > node_modules/@durable-streams/server-conformance-tests/package.json\n",
	})
	if why := ensureSuite(dir); why != "" {
		t.Fatalf("ensureSuite = %q, want the suite installed", why)
	}
	got, err := os.ReadFile(log)
	if err != nil {
		t.Fatalf("npm was not run: %v", err)
	}
	if want := dir + " ci --no-audit --no-fund\n"; string(got) != want {
		t.Errorf("npm ran as %q, want %q", got, want)
	}
	// Installed: the next call runs nothing.
	os.Remove(log)
	if why := ensureSuite(dir); why != "" {
		t.Fatalf("second ensureSuite = %q", why)
	}
	if _, err := os.Stat(log); err == nil {
		t.Error("npm ran again although node_modules is there")
	}
}

// TestEnsureSuiteSkipNamesCommand checks that every reason to skip names
// the one command that enables the test.
func TestEnsureSuiteSkipNamesCommand(t *testing.T) {
	cases := map[string]map[string]string{
		"no node":  {},
		"old node": {"node": "echo v18.19.0\n", "npm": "exit 0\n"},
		"npm fails": {
			"node": "echo v22.1.0\n",
			"npm":  "echo 'npm error network' >&2; exit 1\n",
		},
	}
	for name, tools := range cases {
		t.Run(name, func(t *testing.T) {
			fakeTools(t, tools)
			why := ensureSuite(t.TempDir())
			if why == "" {
				t.Fatal("ensureSuite succeeded")
			}
			if !strings.Contains(why, "`apt-get install nodejs npm`") && !strings.Contains(why, "`cd tests/conformance && npm ci`") {
				t.Errorf("reason %q names no command that enables the test", why)
			}
		})
	}
}
