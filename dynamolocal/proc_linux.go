package dynamolocal

import (
	"os/exec"
	"syscall"
)

// setProcAttr asks Linux to kill the java process when the process that
// started it dies without calling Close (a panic, a test timeout, a kill).
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
