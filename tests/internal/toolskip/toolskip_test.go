package toolskip

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSkipIsNotCached runs a probe test that skips when its tool is
// missing, installs the tool, and runs it again: the second run must run
// the test (it passes) instead of printing the skip "(cached)". A plain
// t.Skip is run the same way as a control, and is cached.
func TestSkipIsNotCached(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not on PATH")
	}
	for _, plain := range []bool{false, true} {
		name := map[bool]string{false: "toolskip", true: "plain t.Skip (control)"}[plain]
		t.Run(name, func(t *testing.T) {
			bin := t.TempDir()
			// A tool name of its own per run, so that no earlier run's
			// cache entry answers.
			tool := "toolskip-probe-" + filepath.Base(filepath.Dir(bin))
			run := func() string {
				cmd := exec.Command(goCmd, "test", "-v", "./testdata/probe")
				cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
					"TOOLSKIP_PROBE_TOOL="+tool, "CI=")
				if plain {
					cmd.Env = append(cmd.Env, "TOOLSKIP_PROBE_PLAIN=1")
				}
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("go test: %v\n%s", err, out)
				}
				return string(out)
			}
			if out := run(); !strings.Contains(out, "--- SKIP") {
				t.Fatalf("without the tool the probe did not skip:\n%s", out)
			}
			if err := os.WriteFile(filepath.Join(bin, tool), []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			out := run()
			cached := strings.Contains(out, "(cached)")
			if !plain && (cached || !strings.Contains(out, "--- PASS")) {
				t.Errorf("after installing the tool the skip was replayed from the test cache:\n%s", out)
			}
			if plain && !cached {
				t.Errorf("control: a plain t.Skip was not cached, so this test shows nothing:\n%s", out)
			}
		})
	}
}
