package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/example/myapp-operator/hack/procstat"
)

// processCPU is the CPU time (user and system) a process has used since it started.
func processCPU(pid int) (time.Duration, error) {
	st, err := procstat.Read(pid)
	return st.CPU, err
}

// findProcess returns the one process whose command line holds every one of args, each as a
// whole argument: how the benchmark finds the kube-apiserver and etcd envtest started, which
// envtest does not expose.
func findProcess(args ...string) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	var found []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue // gone, or not ours to read
		}
		have := map[string]bool{}
		for _, a := range strings.Split(string(raw), "\x00") {
			have[a] = true
		}
		all := true
		for _, a := range args {
			all = all && have[a]
		}
		if all {
			found = append(found, pid)
		}
	}
	if len(found) != 1 {
		return 0, fmt.Errorf("%d processes have the arguments %q, want 1", len(found), args)
	}
	return found[0], nil
}

// cpuMeter reads the CPU time of the processes that share the machine during a benchmark:
// the API server, etcd, the manager (once it runs) and the benchmark itself.
type cpuMeter struct {
	pids map[string]int
}

// The processes in the order the report lists them.
const (
	procAPIServer = "kube-apiserver"
	procEtcd      = "etcd"
	procManager   = "manager"
	procBench     = "benchmark client"
)

var processOrder = []string{procAPIServer, procEtcd, procManager, procBench}

// cpuTimes is each process's CPU time at one moment.
type cpuTimes map[string]time.Duration

func (m *cpuMeter) add(name string, pid int) { m.pids[name] = pid }

// read fails when a process cannot be read: a figure that cannot be measured is an error,
// never a zero.
func (m *cpuMeter) read() (cpuTimes, error) {
	t := cpuTimes{}
	var errs []error
	for name, pid := range m.pids {
		d, err := processCPU(pid)
		if err != nil {
			errs = append(errs, fmt.Errorf("CPU time of the %s (pid %d): %w", name, pid, err))
			continue
		}
		t[name] = d
	}
	return t, errors.Join(errs...)
}

// since is the CPU each process used from before to t; a process missing from before
// (started in between) counts from zero.
func (t cpuTimes) since(before cpuTimes) cpuTimes {
	d := cpuTimes{}
	for name, v := range t {
		d[name] = v - before[name]
	}
	return d
}

// plus is each process's CPU time in t and u together.
func (t cpuTimes) plus(u cpuTimes) cpuTimes {
	sum := cpuTimes{}
	for name, v := range t {
		sum[name] += v
	}
	for name, v := range u {
		sum[name] += v
	}
	return sum
}

func (t cpuTimes) total() time.Duration {
	var sum time.Duration
	for _, v := range t {
		sum += v
	}
	return sum
}
