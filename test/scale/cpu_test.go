package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/example/myapp-operator/internal/testutil"
)

func TestFindProcess(t *testing.T) {
	// An argument no other process has: sleep reads it as 600 seconds and a fraction.
	arg := fmt.Sprintf("600.%d", os.Getpid())
	cmd := exec.Command("sleep", arg)
	// Ten minutes unless it dies with the test.
	waited, err := testutil.StartWithParent(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-waited })
	// The start returns once the child has begun its exec; the kernel shows the new arguments in
	// /proc a moment later, so the test polls for them.
	var (
		pid     int
		findErr error
	)
	err = waitFor(t.Context(), 10*time.Second, "sleep to show its arguments", func(context.Context) (bool, error) {
		pid, findErr = findProcess("sleep", arg)
		return findErr == nil, nil
	})
	if err != nil {
		t.Fatalf("%v; last: %v", err, findErr)
	}
	if pid != cmd.Process.Pid {
		t.Errorf("found pid %d, want %d", pid, cmd.Process.Pid)
	}
	if _, err := findProcess("--no-process-has-this-argument"); err == nil {
		t.Error("found a process for an argument nobody has")
	}
}
