package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is Linux's USER_HZ, the unit of utime and stime in /proc/<pid>/stat. It is 100 on
// every architecture Linux supports (getconf CLK_TCK), and Go has no way to ask without cgo.
const clockTicks = 100

// processCPU is the CPU time (user and system) a process has used since it started.
func processCPU(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(pid, raw)
}

// parseStatCPU reads utime and stime from the text of /proc/<pid>/stat.
func parseStatCPU(pid int, raw []byte) (time.Duration, error) {
	// The command name, field 2, is in parentheses and may hold spaces; count after it.
	end := bytes.LastIndexByte(raw, ')')
	if end < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	fields := strings.Fields(string(raw[end+1:]))
	// After the name: state is field 3, utime field 14 and stime field 15.
	const utime, stime = 14 - 3, 15 - 3
	if len(fields) <= stime {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the name", pid, len(fields))
	}
	var ticks int64
	for _, f := range []string{fields[utime], fields[stime]} {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
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

func (t cpuTimes) total() time.Duration {
	var sum time.Duration
	for _, v := range t {
		sum += v
	}
	return sum
}
