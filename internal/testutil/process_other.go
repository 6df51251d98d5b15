//go:build !linux

package testutil

import "os/exec"

// dieWithParent does nothing where the kernel has no parent-death signal: cmd's process
// outlives a test process that is killed, as any child does.
func dieWithParent(*exec.Cmd) {}
