package main

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestFenceDefaultFlag: streamd -fence-default required creates every
// stream without a Stream-Fence header fence-required, so that after a
// producer's append a POST without producer headers is refused with 403 and
// Producer-Outcome: producer-required; an unknown value stops streamd with a
// message naming the flag.
func TestFenceDefaultFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	cmd, base := startChild(t, "-addr "+freeAddr(t)+" -fence-default required")
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	req, _ := http.NewRequest("PUT", base+"/v1/stream/log", nil)
	req.Header.Set("Content-Type", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusCreated || resp.Header.Get("Stream-Fence") != "required" {
		t.Fatalf("PUT without Stream-Fence: %v %v", resp, err)
	}
	resp.Body.Close()
	if st, _, err := appendAs(context.Background(), base, 1, 0); err != nil || st != http.StatusOK {
		t.Fatalf("producer append: %d %v", st, err)
	}
	req, _ = http.NewRequest("POST", base+"/v1/stream/log", strings.NewReader("intruder\n"))
	req.Header.Set("Content-Type", "text/plain")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Producer-Outcome") != "producer-required" {
		t.Fatalf("header-less POST: %d, Producer-Outcome %q; want 403 producer-required", resp.StatusCode, resp.Header.Get("Producer-Outcome"))
	}

	bad := exec.Command(os.Args[0], "-test.run=^$")
	bad.Env = append(os.Environ(), "STREAMD_TEST_CHILD=1", "STREAMD_TEST_ARGS=-addr "+freeAddr(t)+" -fence-default sometimes")
	out, err := bad.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "-fence-default") {
		t.Errorf("streamd -fence-default sometimes: %v, %s", err, out)
	}
}
