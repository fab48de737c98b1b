// Package probe is run by toolskip's test with go test, twice: it needs a
// tool named by TOOLSKIP_PROBE_TOOL and skips without it.
package probe

import (
	"os"
	"os/exec"
	"testing"

	"github.com/ownership-book/ownership/tests/internal/toolskip"
)

func TestNeedsTool(t *testing.T) {
	if _, err := exec.LookPath(os.Getenv("TOOLSKIP_PROBE_TOOL")); err != nil {
		if os.Getenv("TOOLSKIP_PROBE_PLAIN") != "" {
			t.Skip("tool missing") // what the tests did before toolskip
		}
		toolskip.Missing(t, "tool missing; install it")
	}
}
