package testutil

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel send SIGKILL to cmd's process when the thread that starts it
// exits (PR_SET_PDEATHSIG); StartWithParent keeps that thread for the process's life.
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
