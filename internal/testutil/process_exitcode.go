package testutil

// ExitCode is the process's exit code once it has exited (-1 when a signal ended it), or -2
// while it still runs.
func (p *Process) ExitCode() int {
	select {
	case <-p.exited:
		return p.cmd.ProcessState.ExitCode()
	default:
		return -2
	}
}
