package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/example/myapp-operator/hack/procstat"
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
func (r procRecord) is(st procstat.Stat) bool {
	return st.PID == r.pid && st.Start == r.start && r.boot == currentBoot()
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
	st, err := procstat.Read(pid)
	if err != nil {
		return procRecord{}, err
	}
	boot := currentBoot()
	if boot == "" {
		return procRecord{}, errors.New("cannot read /proc/sys/kernel/random/boot_id")
	}
	return procRecord{pid: pid, start: st.Start, boot: boot}, nil
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
	pids := make([]int, 0, len(entries))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := procstat.Read(pid)
		if err != nil || st.PGrp != r.pid || st.State == "Z" || st.Start < r.start {
			continue
		}
		if pid == r.pid && st.Start != r.start {
			return nil // a stranger leads the group now: ours is gone
		}
		pids = append(pids, pid)
	}
	return pids
}
