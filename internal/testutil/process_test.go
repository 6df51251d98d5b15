//go:build linux

package testutil

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/example/myapp-operator/hack/procstat"
)

// parentLogEnv turns the test binary into the parent of TestStartProcessDiesWithItsParent: it
// names the log of the child the parent starts.
const parentLogEnv = "TESTUTIL_PARENT_CHILD_LOG"

// TestProcessParent is the parent: it starts `sleep 300` with StartProcess from a goroutine
// whose OS thread then ends (locked, it returns), waits until that thread is gone, prints
// "child <pid>" and waits for its stdin to close. A child tied to the thread that happened to
// call StartProcess would have died with it.
func TestProcessParent(t *testing.T) {
	log := os.Getenv(parentLogEnv)
	if log == "" {
		t.Skip("run by TestStartProcessDiesWithItsParent")
	}
	type started struct {
		p   *Process
		tid int
		err error
	}
	var s started
	for {
		ch := make(chan started)
		go func() {
			runtime.LockOSThread()
			if syscall.Gettid() == syscall.Getpid() {
				// The runtime never ends the main thread: take another one.
				runtime.UnlockOSThread()
				ch <- started{}
				return
			}
			p, err := StartProcess("sleep", log, "sleep", nil, "300")
			ch <- started{p, syscall.Gettid(), err} // and the thread ends: still locked
		}()
		if s = <-ch; s.tid != 0 {
			break
		}
	}
	if s.err != nil {
		t.Fatal(s.err)
	}
	task := fmt.Sprintf("/proc/self/task/%d", s.tid)
	if !poll(10*time.Second, func() bool { _, err := os.Stat(task); return os.IsNotExist(err) }) {
		t.Fatalf("thread %d did not end", s.tid)
	}
	fmt.Printf("child %d\n", s.p.Pid())
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// TestStartProcessDiesWithItsParent: a process started with StartProcess survives the end of
// the thread that started it, and dies within seconds once its parent is SIGKILLed.
func TestStartProcessDiesWithItsParent(t *testing.T) {
	parent := exec.Command(os.Args[0], "-test.run=^TestProcessParent$")
	parent.Env = append(os.Environ(), parentLogEnv+"="+filepath.Join(t.TempDir(), "sleep.log"))
	// The parent waits on its stdin: were this test killed, the pipe closes and the parent
	// exits, and with it the child.
	stdin, err := parent.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stdin.Close(); _ = parent.Process.Kill(); _ = parent.Wait() })

	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	child := 0
	timeout := time.After(30 * time.Second)
	for child == 0 {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("the parent exited before it started its child")
			}
			if rest, found := strings.CutPrefix(line, "child "); found {
				if child, err = strconv.Atoi(rest); err != nil {
					t.Fatalf("the parent printed %q", line)
				}
			}
		case <-timeout:
			t.Fatal("the parent did not start its child within 30 s")
		}
	}
	t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) })
	st, err := procstat.Read(child)
	if err != nil || st.State == "Z" || killPending(child) {
		t.Fatalf("the child %d died with the thread that started it (state %q, %v)", child, st.State, err)
	}

	if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	gone := func() bool {
		now, err := procstat.Read(child)
		return err != nil || now.Start != st.Start || now.State == "Z"
	}
	if !poll(10*time.Second, gone) {
		t.Fatalf("the child %d still runs 10 s after its parent was SIGKILLed", child)
	}
}

// killPending tells whether a SIGKILL waits to be delivered to a process, which it is between
// the kernel's sending it and the process's end.
func killPending(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return true
	}
	for _, line := range strings.Split(string(b), "\n") {
		name, value, _ := strings.Cut(line, ":")
		if name != "SigPnd" && name != "ShdPnd" {
			continue
		}
		mask, err := strconv.ParseUint(strings.TrimSpace(value), 16, 64)
		if err == nil && mask&(1<<(syscall.SIGKILL-1)) != 0 {
			return true
		}
	}
	return false
}

// poll checks cond every 20 ms until it holds or timeout passes.
func poll(timeout time.Duration, cond func() bool) bool {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(timeout)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			return cond()
		}
	}
	return true
}
