package verify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Run is one process to execute: Args[0] is the program ("go"), Dir its
// working directory.
type Run struct {
	Args    []string
	Dir     string
	Timeout time.Duration // 0: no limit besides ctx
}

// Result is what a process did. Output is stdout and stderr interleaved as
// written (both go to one pipe).
type Result struct {
	Output   []byte
	ExitCode int  // -1 when the process did not exit normally
	TimedOut bool // killed after Run.Timeout
	Elapsed  time.Duration
}

// ErrStart wraps a failure to start a process at all (missing program).
var ErrStart = errors.New("cannot start")

// execFunc runs a process; tests replace it to count or fake runs.
type execFunc func(ctx context.Context, r Run) (Result, error)

// execProcess runs r in a new process group. On timeout or cancellation the
// whole group is killed with SIGKILL: "go run" builds and then starts the
// program as its child, and killing only "go" would leave the program
// running and holding the output pipe.
func execProcess(ctx context.Context, r Run) (Result, error) {
	parent := ctx
	if r.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.Timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, r.Args[0], r.Args[1:]...)
	cmd.Dir = r.Dir
	cmd.Env = os.Environ()
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Result{ExitCode: -1}, fmt.Errorf("%w %s: %v", ErrStart, r.Args[0], err)
	}
	err := cmd.Wait()
	// Whatever the outcome, leave no member of the group behind.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	res := Result{Output: out.Bytes(), ExitCode: cmd.ProcessState.ExitCode(), Elapsed: time.Since(start)}
	if err := parent.Err(); err != nil {
		return res, err
	}
	if ctx.Err() != nil {
		res.TimedOut = true
		return res, nil
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		return res, err
	}
	return res, nil
}
