//go:build !linux

package verify

import (
	"os/exec"
	"syscall"
)

// checkProcAttr starts a check in a process group of its own, which
// killTree ends.
func checkProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// becomeSubreaper is Linux's alone (prctl PR_SET_CHILD_SUBREAPER).
func becomeSubreaper() {}

// killTree ends the process group of a check.
func killTree(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

func startCheck(cmd *exec.Cmd) error { return cmd.Start() }
func endedCheck(pid int)             {}
