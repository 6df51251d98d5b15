package main

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	// A command name with a space and a parenthesis, as /proc prints it; utime 250, stime 50.
	stat := "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 50 0 0 20 0 12 0 1000 5000 300\n"
	got, err := parseStatCPU(4242, []byte(stat))
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 * time.Second; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	for _, bad := range []string{"4242 no name here", "4242 (x) S 1 2", "4242 (x) S 1 2 3 4 5 6 7 8 9 10 x 50 0"} {
		if _, err := parseStatCPU(4242, []byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// The CPU time of this process grows while it works: the reading is live, not a constant.
func TestProcessCPUGrows(t *testing.T) {
	before, err := processCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	x := 0
	for {
		for i := range 10_000_000 {
			x += i
		}
		now, err := processCPU(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		if now > before {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("CPU time stayed %s for a minute of work (%d)", now, x)
		}
	}
}

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
