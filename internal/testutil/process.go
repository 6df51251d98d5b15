package testutil

import (
	"fmt"
	"os"
	"os/exec"
)

// Process is a program a test runs in the background, its output going to a log file.
type Process struct {
	Name, Log string
	cmd       *exec.Cmd
	exited    chan struct{}
}

// StartProcess runs bin with args, in the test's environment plus env, writing its output to
// logPath.
func StartProcess(name, logPath, bin string, env []string, args ...string) (*Process, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	p := &Process{Name: name, Log: logPath, cmd: exec.Command(bin, args...), exited: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	if err := p.cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	go func() {
		_ = p.cmd.Wait()
		_ = logFile.Close()
		close(p.exited)
	}()
	return p, nil
}

// Pid is the process's id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited is closed once the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Signal sends sig to the process unless it has exited already.
func (p *Process) Signal(sig os.Signal) {
	select {
	case <-p.exited:
	default:
		_ = p.cmd.Process.Signal(sig)
	}
}
