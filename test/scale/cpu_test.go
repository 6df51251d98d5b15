package main

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

func TestFindProcess(t *testing.T) {
	// An argument no other process has: sleep reads it as 600 seconds and a fraction.
	arg := fmt.Sprintf("600.%d", os.Getpid())
	cmd := exec.Command("sleep", arg)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pid, err := findProcess("sleep", arg)
	if err != nil {
		t.Fatal(err)
	}
	if pid != cmd.Process.Pid {
		t.Errorf("found pid %d, want %d", pid, cmd.Process.Pid)
	}
	if _, err := findProcess("--no-process-has-this-argument"); err == nil {
		t.Error("found a process for an argument nobody has")
	}
}
