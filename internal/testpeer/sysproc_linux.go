package testpeer

import (
	"os/exec"
	"syscall"
)

// DieWithParent has the kernel kill cmd's process when the test binary
// exits, however it exits (a timeout's panic, a kill), and starts it in a
// process group of its own, so that a terminal's signals reach only the
// test binary, which stops its children in order.
func DieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	cmd.SysProcAttr.Setpgid = true
}

func setCredential(cmd *exec.Cmd, uid, gid uint32) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uid, Gid: gid}
}
