package qemu

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill QEMU when this process dies, even by
// SIGKILL, which leaves no chance to kill it: a killed test or hil run
// leaves no machine running. (os/exec takes package syscall's type.)
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
