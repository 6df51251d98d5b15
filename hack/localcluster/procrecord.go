package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// procRecord is what the cluster records of a process it started, in <state>/pids/<name>:
// a pid alone is not enough, since once the process exits the kernel gives the pid to
// another one, and after a reboot every recorded pid names some other process. The start
// time (field 22 of /proc/<pid>/stat: clock ticks after boot) tells two processes of the
// same pid apart within a boot, and the boot ID tells boots apart.
type procRecord struct {
	pid   int
	start uint64 // clock ticks after boot
	boot  string // /proc/sys/kernel/random/boot_id
}

// String is the record as written to the pid file: "pid start boot".
func (r procRecord) String() string { return fmt.Sprintf("%d %d %s", r.pid, r.start, r.boot) }

// is tells whether the process st describes is the recorded one.
func (r procRecord) is(st procStat) bool {
	return st.pid == r.pid && st.start == r.start && r.boot == currentBoot()
}

// errLegacyRecord: a pid file of an older localcluster, which recorded the pid alone.
var errLegacyRecord = errors.New("a pid recorded without its start time")

// parseRecord reads a pid file.
func parseRecord(s string) (procRecord, error) {
	f := strings.Fields(s)
	if len(f) == 1 {
		return procRecord{}, errLegacyRecord
	}
	if len(f) != 3 {
		return procRecord{}, fmt.Errorf("a pid record is %q: want pid, start time and boot ID", s)
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil || pid <= 0 {
		return procRecord{}, fmt.Errorf("a pid record is %q: bad pid", s)
	}
	start, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return procRecord{}, fmt.Errorf("a pid record is %q: bad start time", s)
	}
	return procRecord{pid: pid, start: start, boot: f[2]}, nil
}

// legacyPid is the pid of an older pid file that holds only a pid, or 0. Such a process
// cannot be told from a stranger that reused its pid, so it is never signalled.
func legacyPid(o Options, name string) int {
	b, err := os.ReadFile(pidPath(o, name))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// recordProcess records the running (or not yet reaped) process pid.
func recordProcess(pid int) (procRecord, error) {
	st, err := readProcStat(pid)
	if err != nil {
		return procRecord{}, err
	}
	boot := currentBoot()
	if boot == "" {
		return procRecord{}, errors.New("cannot read /proc/sys/kernel/random/boot_id")
	}
	return procRecord{pid: pid, start: st.start, boot: boot}, nil
}

// procStat is what the cluster reads of /proc/<pid>/stat (proc(5)).
type procStat struct {
	pid   int
	state string // field 3: R, S, D, Z, ...
	pgrp  int    // field 5
	start uint64 // field 22: start time, clock ticks after boot
}

// readProcStat reads /proc/<pid>/stat. The command name (field 2) is in parentheses and may
// hold spaces and parentheses itself: the fields after it are counted from its last ')'.
func readProcStat(pid int) (procStat, error) {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "stat"))
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(pid, string(b))
}

func parseProcStat(pid int, s string) (procStat, error) {
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(s[end+1:]) // f[0] is field 3
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: %d fields after the command name, want at least 20", pid, len(f))
	}
	pgrp, err1 := strconv.Atoi(f[2])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return procStat{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return procStat{pid: pid, state: f[0], pgrp: pgrp, start: start}, nil
}

// procRoot is where the kernel's process table is mounted.
const procRoot = "/proc"

// currentBoot is the ID of the running boot, or "" if it cannot be read.
func currentBoot() string {
	b, err := os.ReadFile(filepath.Join(procRoot, "sys", "kernel", "random", "boot_id"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// survivors are the live processes still in the process group that the recorded process
// led, once it is gone. While any process is in that group the kernel does not give its ID
// to a new process, so a member that started in the same boot, no earlier than the recorded
// process, is one of ours. The one case this cannot tell apart: our whole group ended, a
// stranger got the ID, led a group, and exited leaving members behind.
func survivors(r procRecord) []int {
	if r.boot != currentBoot() {
		return nil
	}
	entries, _ := os.ReadDir(procRoot)
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := readProcStat(pid)
		if err != nil || st.pgrp != r.pid || st.state == "Z" || st.start < r.start {
			continue
		}
		if pid == r.pid && st.start != r.start {
			return nil // a stranger leads the group now: ours is gone
		}
		pids = append(pids, pid)
	}
	return pids
}
