package conformance

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// suiteMarker is a file npm ci writes when it installs the pinned suite.
const suiteMarker = "node_modules/@durable-streams/server-conformance-tests/package.json"

// minNode is the oldest Node the pinned vitest and vite run on (vite 8
// needs 20.19).
var minNode = [3]int{20, 19, 0}

var (
	suiteMu   sync.Mutex
	suiteDone = map[string]string{}
)

// suiteOnce is ensureSuite run once per directory for the test binary.
func suiteOnce(dir string) string {
	suiteMu.Lock()
	defer suiteMu.Unlock()
	if why, ok := suiteDone[dir]; ok {
		return why
	}
	why := ensureSuite(dir)
	suiteDone[dir] = why
	return why
}

// ensureSuite makes the conformance suite's npm packages present in
// dir/node_modules: when they are missing and Node is installed it runs
// "npm ci" from the committed package-lock.json, as .ci/run does. It
// returns "" when the suite can run, else why not, naming the one command
// that would make it run.
func ensureSuite(dir string) string {
	if _, err := os.Stat(filepath.Join(dir, suiteMarker)); err == nil {
		if _, err := exec.LookPath("npx"); err != nil {
			return "npx is not on PATH (tests/conformance/node_modules is there, but Node is not): install Node.js 20.19 or later, e.g. `apt-get install nodejs npm`"
		}
		return ""
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return "Node.js is not installed (no npm on PATH), so the Durable Streams conformance suite cannot run: install Node.js 20.19 or later, e.g. `apt-get install nodejs npm`, and this test installs the suite itself"
	}
	if v, err := nodeVersion(); err != nil {
		return fmt.Sprintf("cannot tell the Node.js version (%v): install Node.js 20.19 or later, e.g. `apt-get install nodejs npm`", err)
	} else if less(v, minNode) {
		return fmt.Sprintf("Node.js %d.%d.%d is older than the suite's vitest needs (20.19): install a newer one, e.g. `apt-get install nodejs npm` from a current Debian", v[0], v[1], v[2])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Sprintf("tests/conformance/node_modules is missing and `npm ci` there failed (%v): run `cd tests/conformance && npm ci` to see why\n%s", err, tail(string(out), 20))
	}
	if _, err := os.Stat(filepath.Join(dir, suiteMarker)); err != nil {
		return fmt.Sprintf("`npm ci` in tests/conformance did not install the suite (%v): run `cd tests/conformance && npm ci`", err)
	}
	return ""
}

var versionRE = regexp.MustCompile(`v?(\d+)\.(\d+)\.(\d+)`)

// nodeVersion returns what "node --version" prints, as numbers.
func nodeVersion() ([3]int, error) {
	out, err := exec.Command("node", "--version").Output()
	if err != nil {
		return [3]int{}, err
	}
	m := versionRE.FindStringSubmatch(strings.TrimSpace(string(out)))
	if m == nil {
		return [3]int{}, fmt.Errorf("node --version printed %q", out)
	}
	var v [3]int
	for i := range v {
		v[i], _ = strconv.Atoi(m[i+1])
	}
	return v, nil
}

func less(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}
