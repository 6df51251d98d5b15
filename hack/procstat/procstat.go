// Package procstat reads what the local cluster and the scale benchmark need of a process's
// /proc/<pid>/stat line (proc(5)).
package procstat

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is Linux's USER_HZ, the unit of the times in /proc/<pid>/stat. It is 100 on
// every architecture Linux supports (getconf CLK_TCK), and Go has no way to ask without cgo.
const clockTicks = 100

// Stat is what is read of one process.
type Stat struct {
	PID   int
	State string        // field 3: R, S, D, Z, ...
	PGrp  int           // field 5
	CPU   time.Duration // fields 14 and 15: user and system time used so far
	Start uint64        // field 22: start time, clock ticks after boot
}

// Read reads /proc/<pid>/stat.
func Read(pid int) (Stat, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return Stat{}, err
	}
	return Parse(pid, string(b))
}

// Parse reads the text of /proc/<pid>/stat. The command name (field 2) is in parentheses and
// may hold spaces and parentheses itself: the fields after it are counted from its last ')'.
func Parse(pid int, s string) (Stat, error) {
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return Stat{}, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(s[end+1:]) // f[0] is field 3
	if len(f) < 20 {
		return Stat{}, fmt.Errorf("/proc/%d/stat: %d fields after the command name, want at least 20", pid, len(f))
	}
	pgrp, err1 := strconv.Atoi(f[5-3])
	utime, err2 := strconv.ParseInt(f[14-3], 10, 64)
	stime, err3 := strconv.ParseInt(f[15-3], 10, 64)
	start, err4 := strconv.ParseUint(f[22-3], 10, 64)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return Stat{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return Stat{PID: pid, State: f[0], PGrp: pgrp, CPU: time.Duration(utime+stime) * time.Second / clockTicks,
		Start: start}, nil
}
