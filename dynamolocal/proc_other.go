//go:build !linux

package dynamolocal

import "os/exec"

// setProcAttr does nothing here: only Linux can kill the java process when
// its parent dies, so elsewhere a crashed test binary can leave it running.
func setProcAttr(*exec.Cmd) {}
