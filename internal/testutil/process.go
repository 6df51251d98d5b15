package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
)

// Process is a program a test runs in the background, its output going to a log file.
type Process struct {
	Name, Log string
	cmd       *exec.Cmd
	exited    chan struct{}
}

// StartProcess runs bin with args, in the test's environment plus env, writing its output to
// logPath. The process dies with the test's process, even when that is SIGKILLed (see
// StartWithParent).
func StartProcess(name, logPath, bin string, env []string, args ...string) (*Process, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	p := &Process{Name: name, Log: logPath, cmd: exec.Command(bin, args...), exited: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	waited, err := StartWithParent(p.cmd)
	if err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	go func() {
		<-waited
		_ = logFile.Close()
		close(p.exited)
	}()
	return p, nil
}

// StartWithParent starts cmd, as cmd.Start does, so that the kernel kills its process with
// SIGKILL when the process that started it dies, however it dies: a test binary killed by
// `go test -timeout`, by a CI job's cancel or by the OOM killer takes the servers and
// commands it started with it, where they would otherwise run on, holding ports and a
// cluster, for as long as nothing stops them. (Only the process started: what it starts in
// turn is its own to stop. Processes the suites cannot start themselves, envtest's
// kube-apiserver and etcd, carry the run's marker instead, which `localcluster sweep` finds.)
//
// On Linux this is PR_SET_PDEATHSIG, which the kernel fires when the thread that started the
// process exits, not the whole process, and Go starts a process on whichever OS thread the
// calling goroutine runs on; the runtime ends a thread when a goroutine locked to it returns
// without unlocking it, which any library may do. So the process is started from a goroutine
// locked to its OS thread that stays locked, in cmd.Wait, until the process has exited: the
// thread then lives exactly as long as the test's process needs it to. It costs one OS thread
// per running process. Elsewhere cmd simply starts.
//
// The channel receives cmd.Wait's result once the process has exited; callers must not call
// cmd.Wait themselves.
func StartWithParent(cmd *exec.Cmd) (<-chan error, error) {
	dieWithParent(cmd)
	started, waited := make(chan error, 1), make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// Unlocked once the process is reaped: the thread has nothing left to keep alive.
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		waited <- cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return waited, nil
}

// RunWithParent runs cmd to completion, as cmd.Run does, killed if the test's process dies
// first (see StartWithParent). Set cmd.Stdout and cmd.Stderr to capture its output.
func RunWithParent(cmd *exec.Cmd) error {
	waited, err := StartWithParent(cmd)
	if err != nil {
		return err
	}
	return <-waited
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
