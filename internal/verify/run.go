package verify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"time"
)

// MaxOutput bounds what one process may print, stdout and stderr together,
// in bytes. A program that prints more (a loop that never ends) is killed
// with its process group when it reaches the bound, instead of filling the
// machine's memory until its timeout.
const MaxOutput = 16 << 20

// Run is one process to execute: Args[0] is the program ("go"), Dir its
// working directory.
type Run struct {
	Args    []string
	Dir     string
	Timeout time.Duration // 0: no limit besides ctx
	// Machine marks a command whose stdout is machine-readable ("go list
	// -json", "go version"): stderr is kept apart in Result.Stderr, so that
	// what go says there ("go: downloading ..." on a cold module cache, a
	// warning caused by GOFLAGS) never reaches the decoder. A caller shows
	// Stderr only when the command failed.
	Machine bool
	// Env holds NAME=value pairs added to bookgen's own environment
	// ("GOOS=js", "GOARCH=wasm" for a WebAssembly build).
	Env []string
}

// Result is what a process did. Output is stdout and stderr interleaved as
// written (both go to one pipe), or stdout alone for a Run.Machine command.
type Result struct {
	Output []byte
	// Stderr is what a Run.Machine command wrote to stderr (nil otherwise).
	Stderr   []byte
	ExitCode int  // -1 when the process did not exit normally
	TimedOut bool // killed after Run.Timeout
	// OutputLimited is set when the process was killed for printing more
	// than MaxOutput bytes; Output then holds the first MaxOutput.
	OutputLimited bool
	Elapsed       time.Duration
}

// ErrStart wraps a failure to start a process at all (missing program).
var ErrStart = errors.New("cannot start")

// execFunc runs a process; tests replace it to count or fake runs.
type execFunc func(ctx context.Context, r Run) (Result, error)

// execProcess runs r in a session of its own, with no controlling
// terminal and stdin empty (checkProcAttr). On timeout or cancellation
// the whole session is killed with SIGKILL: "go run" builds and then
// starts the program as its child, and killing only "go" would leave the
// program running and holding the output pipe. When it ends, nothing it
// started is left running, even a program that daemonised (killTree,
// then sweepOrphans with bookgen as child subreaper).
func execProcess(ctx context.Context, r Run) (Result, error) {
	parent := ctx
	if r.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.Timeout)
		defer cancel()
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	cmd := exec.CommandContext(ctx, r.Args[0], r.Args[1:]...)
	cmd.Dir = r.Dir
	cmd.Env = append(os.Environ(), r.Env...)
	out := &capBuffer{max: MaxOutput, full: stop}
	cmd.Stdout = out
	cmd.Stderr = out
	var errOut *capBuffer
	if r.Machine {
		errOut = &capBuffer{max: MaxOutput, full: stop}
		cmd.Stderr = errOut
	}
	cmd.SysProcAttr = checkProcAttr()
	cmd.Cancel = func() error {
		killTree(cmd.Process.Pid)
		return nil
	}
	cmd.WaitDelay = 5 * time.Second
	becomeSubreaper()
	start := time.Now()
	if err := startCheck(cmd); err != nil {
		return Result{ExitCode: -1}, fmt.Errorf("%w %s: %v", ErrStart, r.Args[0], err)
	}
	err := cmd.Wait()
	// Whatever the outcome, leave nothing it started behind: the
	// members of its session now, its orphans once no check runs.
	killTree(cmd.Process.Pid)
	endedCheck(cmd.Process.Pid)
	res := Result{Output: out.bytes(), ExitCode: cmd.ProcessState.ExitCode(), Elapsed: time.Since(start)}
	if errOut != nil {
		res.Stderr = errOut.bytes()
	}
	if err := parent.Err(); err != nil {
		return res, err
	}
	if out.isFull() || (errOut != nil && errOut.isFull()) {
		res.OutputLimited = true
		return res, nil
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

// capBuffer keeps the first max bytes written to it and calls full once
// when a write would go past them.
type capBuffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	max  int
	over bool
	full func()
}

func (c *capBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.over {
		return len(p), nil
	}
	if room := c.max - c.buf.Len(); len(p) > room {
		c.buf.Write(p[:room])
		c.over = true
		c.full()
		return len(p), nil
	}
	return c.buf.Write(p)
}

func (c *capBuffer) bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Bytes()
}

func (c *capBuffer) isFull() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.over
}
