// Package conformance runs the Durable Streams server conformance suite
// (npm @durable-streams/server-conformance-tests, pinned in package.json)
// against streamd.
package conformance

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ownership-book/ownership/tests/internal/toolskip"
)

// vitestReport is the part of vitest's JSON report this test reads.
type vitestReport struct {
	NumTotalTests   int `json:"numTotalTests"`
	NumPassedTests  int `json:"numPassedTests"`
	NumFailedTests  int `json:"numFailedTests"`
	NumPendingTests int `json:"numPendingTests"`
	TestResults     []struct {
		AssertionResults []struct {
			FullName string `json:"fullName"`
			Status   string `json:"status"`
		} `json:"assertionResults"`
	} `json:"testResults"`
}

// missing skips the test when a tool is missing, unless CI is set, where a
// missing tool is a failure. what says what is missing and the one command
// that provides it. The skip is never replayed from go test's cache once
// the tool is installed (see toolskip).
func missing(t *testing.T, what string) {
	t.Helper()
	toolskip.Missing(t, what)
}

// TestConformance builds streamd, starts it on free loopback ports with a
// long-poll timeout of 1s, runs the whole suite (or the tests matched by
// CONFORMANCE_FILTER, a vitest -t pattern) and fails on any failed test:
// once against a single voter, once against voter B of a three-voter
// cluster (whose followers forward requests to the leader). A full run must
// pass every one of the suite's non-opt-in tests: 332 in version 0.3.6, the
// number the stream chapter states.
// suiteNonOptIn is how many tests of @durable-streams/server-conformance-tests
// 0.3.6 (pinned in package.json) are not opt-in.
const suiteNonOptIn = 332

func TestConformance(t *testing.T) {
	t.Run("voters=1", func(t *testing.T) { run(t, 1, "A") })
	t.Run("voters=3,via=B", func(t *testing.T) { run(t, 3, "B") })
}

func run(t *testing.T, voters int, via string) {
	if why := suiteOnce("."); why != "" {
		missing(t, why)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "streamd")
	build := exec.Command("go", "build", "-o", bin, "./examples/stream/streamd")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build streamd: %v\n%s", err, out)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	srv := exec.CommandContext(ctx, bin, "-addr", "127.0.0.1:0", "-long-poll", "1s",
		"-data", filepath.Join(dir, "data"), "-cluster", fmt.Sprint(voters))
	stderr, err := srv.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatalf("start streamd: %v", err)
	}
	defer func() {
		srv.Process.Kill()
		srv.Wait()
	}()
	base := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			if i := strings.Index(line, "serving on "); i >= 0 && strings.Contains(line, "voter "+via+" ") {
				u := strings.TrimSuffix(strings.Fields(line[i+len("serving on "):])[0], "/v1/stream/")
				select {
				case base <- u:
				default:
				}
			}
		}
	}()
	var url string
	select {
	case url = <-base:
	case <-time.After(30 * time.Second):
		t.Fatal("streamd did not report its address within 30s")
	}
	t.Logf("streamd at %s", url)

	report := filepath.Join(dir, "report.json")
	args := []string{"vitest", "run", "--reporter=dot", "--reporter=json", "--outputFile=" + report}
	if f := os.Getenv("CONFORMANCE_FILTER"); f != "" {
		args = append(args, "-t", f)
	}
	cmd := exec.CommandContext(ctx, "npx", args...)
	cmd.Env = append(os.Environ(), "STREAM_URL="+url, "LONG_POLL_MS=1000")
	out, runErr := cmd.CombinedOutput()
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("vitest wrote no report (%v): %v\n%s", runErr, err, out)
	}
	var rep vitestReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("vitest report: %v", err)
	}
	for _, f := range rep.TestResults {
		for _, a := range f.AssertionResults {
			if a.Status == "failed" {
				t.Errorf("failed: %s", a.FullName)
			}
		}
	}
	t.Logf("conformance: %d passed, %d failed, %d skipped (of %d)",
		rep.NumPassedTests, rep.NumFailedTests, rep.NumPendingTests, rep.NumTotalTests)
	if rep.NumFailedTests > 0 || runErr != nil {
		t.Fatalf("conformance suite failed (%v):\n%s", runErr, tail(string(out), 60))
	}
	if rep.NumPassedTests == 0 {
		t.Fatal("conformance suite ran no test")
	}
	if os.Getenv("CONFORMANCE_FILTER") == "" && rep.NumPassedTests != suiteNonOptIn {
		t.Fatalf("%d tests passed, want all %d non-opt-in tests of the suite", rep.NumPassedTests, suiteNonOptIn)
	}
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
