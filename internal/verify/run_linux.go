package verify

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// checkProcAttr starts a check in a session of its own (setsid(2)): the
// check has no controlling terminal, so a program that opens /dev/tty
// fails at once (ENXIO) instead of waiting for a reader, and its process
// group (the session's id, equal to the process id) is what killTree
// ends. Setsid also makes a new process group: Setpgid would fail after it.
func checkProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

var subreaperOnce sync.Once

// becomeSubreaper makes bookgen the child subreaper of everything its
// checks start (prctl(2) PR_SET_CHILD_SUBREAPER, Linux 3.4): a process
// whose parent ends is handed to bookgen rather than to init, so that a
// program that daemonises (forks, setsid, the parent exits) is still
// bookgen's to end (see sweepOrphans). Failure leaves the session kill
// alone to do the work.
func becomeSubreaper() {
	subreaperOnce.Do(func() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) })
}

// procStat is what /proc/<pid>/stat says of a process (proc(5)).
type procStat struct {
	pid, ppid, session int
	zombie             bool
}

// processes lists every process of the system readable in /proc.
func processes() []procStat {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []procStat
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// "pid (comm) state ppid pgrp session ...": comm may hold
		// spaces and parentheses, so fields are counted after the last ')'.
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(data[i+1:])
		if len(f) < 4 {
			continue
		}
		ppid, _ := strconv.Atoi(string(f[1]))
		sid, _ := strconv.Atoi(string(f[3]))
		out = append(out, procStat{pid: pid, ppid: ppid, session: sid, zombie: string(f[0]) == "Z"})
	}
	return out
}

// killTree ends every process of the session a check leads (sid is the
// check's process id): its process group and any member that moved to a
// group of its own (setpgid). A member that also left the session
// (setsid) is found by sweepOrphans once its parent is gone.
func killTree(sid int) {
	_ = syscall.Kill(-sid, syscall.SIGKILL)
	for _, p := range processes() {
		if p.session == sid && p.pid != sid {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
	}
}

var (
	runningMu sync.Mutex
	running   = map[int]bool{} // checks started and not yet waited for
)

// startCheck starts cmd and records it as running, under the lock that
// sweepOrphans holds, so that a check just started is never taken for an
// orphan.
func startCheck(cmd *exec.Cmd) error {
	runningMu.Lock()
	defer runningMu.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	running[cmd.Process.Pid] = true
	return nil
}

// endedCheck forgets the check pid and, when no other check runs, ends
// and reaps the orphans checks left (sweepOrphans): a daemon a running
// check started may be what that check talks to, so it is left until
// every check has ended.
func endedCheck(pid int) {
	runningMu.Lock()
	defer runningMu.Unlock()
	delete(running, pid)
	if len(running) == 0 {
		sweepOrphans()
	}
}

// sweepOrphans kills and reaps every child of bookgen that is a check's
// orphan: handed to bookgen as subreaper, in a session other than
// bookgen's own (every check leads a session of its own, and what it
// starts inherits that session or makes a new one). Children bookgen
// starts itself outside checks stay in its session and are left alone.
// Called with runningMu held and no check running.
func sweepOrphans() {
	me, mySid := os.Getpid(), unix.Getpgrp()
	if sid, err := unix.Getsid(0); err == nil {
		mySid = sid
	}
	for _, p := range processes() {
		if p.ppid != me || p.session == mySid || running[p.pid] {
			continue
		}
		if !p.zombie {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(p.pid, &ws, 0, nil)
	}
}
