package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/example/myapp-operator/hack/procstat"
)

// runMarker is the environment variable that marks every process of one run of this project's
// make targets: the Makefile exports MYAPP_OPERATOR_RUN=<run id> (any string; a make started
// by another keeps the one it inherits), and every process that run starts inherits it: the
// cluster's components, envtest's kube-apiserver and etcd, the suites and what they start, the
// tools. sweep stops the processes that hold another run's id. A process that clears its
// environment escapes the mark; a real node's containers do (their environment is the pod's),
// and sweep finds those by their cgroup instead.
const runMarker = "MYAPP_OPERATOR_RUN"

// clusterBinaries are the programs localcluster starts whose command line names the state
// folder (kwok as bin/kwok-<version>); sweep also stops those that run from a folder named
// .localcluster*, marked or not: a cluster started by hand, or by a make from before the
// marker.
var clusterBinaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler",
	"kwok", "kubelet", "kube-proxy", "containerd", "containerd-shim-runc-v2", "image-tool", "netpol"}

// realNodeBinaries are the clusterBinaries of a real node. While the current run's real node
// runs, what it keeps on this machine (mounts, the bridge, chains, cgroups) is its own, and
// sweep leaves the machine's state alone.
var realNodeBinaries = []string{"kubelet", "kube-proxy", "containerd", "containerd-shim-runc-v2", "netpol"}

// sweepGrace is how long stopped processes get between SIGTERM and SIGKILL.
const sweepGrace = 10 * time.Second

// procInfo is what sweep reads of one process.
type procInfo struct {
	pid, ppid, pgrp int
	start           uint64 // clock ticks after boot
	state           string // R, S, D, Z...
	marked          bool   // runMarker is in its environment
	run             string // runMarker's value
	argv            []string
}

// victim is a process sweep stops, and why.
type victim struct {
	procInfo
	reason string
	// group: it leads a process group that holds nothing sweep keeps, and the whole group is
	// signalled, so that children that dropped the mark go with it.
	group bool
}

// sweepPlan is what sweep decided about the processes of this machine.
type sweepPlan struct {
	victims []victim
	// keptRealNode is a process of the current run's real node, or nil.
	keptRealNode *procInfo
}

// planSweep picks the processes to stop: those marked with a run other than keepRun, and
// those of a cluster binary running from a .localcluster* folder that are not marked with
// keepRun. It never picks self or its ancestors, pid 1, or a zombie (which only its parent
// can remove).
func planSweep(procs []procInfo, self int, keepRun string) sweepPlan {
	byPid := map[int]procInfo{}
	for _, p := range procs {
		byPid[p.pid] = p
	}
	spared := map[int]bool{1: true}
	for pid := self; pid > 0 && !spared[pid]; pid = byPid[pid].ppid {
		spared[pid] = true
	}
	keep := func(p procInfo) bool { return spared[p.pid] || p.marked && p.run == keepRun }

	var plan sweepPlan
	for _, p := range procs {
		if p.state == "Z" {
			continue
		}
		if keep(p) {
			if plan.keptRealNode == nil && isClusterProcess(p.argv, realNodeBinaries) {
				kept := p
				plan.keptRealNode = &kept
			}
			continue
		}
		reason := ""
		switch {
		case p.marked:
			reason = "run " + strconv.Quote(p.run)
		case isClusterProcess(p.argv, clusterBinaries):
			reason = "a local cluster's, of no run"
		default:
			continue
		}
		plan.victims = append(plan.victims, victim{procInfo: p, reason: reason})
	}
	for i, v := range plan.victims {
		if v.pgrp != v.pid {
			continue
		}
		plan.victims[i].group = !slices.ContainsFunc(procs, func(p procInfo) bool {
			return p.pgrp == v.pid && p.state != "Z" && keep(p)
		})
	}
	return plan
}

// planRun picks the processes marked with run, never self or its ancestors, pid 1 or a zombie;
// a group one of them leads goes whole unless it holds a process not of run.
func planRun(procs []procInfo, self int, run string) sweepPlan {
	byPid := map[int]procInfo{}
	for _, p := range procs {
		byPid[p.pid] = p
	}
	spared := map[int]bool{1: true}
	for pid := self; pid > 0 && !spared[pid]; pid = byPid[pid].ppid {
		spared[pid] = true
	}
	var plan sweepPlan
	for _, p := range procs {
		if p.state != "Z" && !spared[p.pid] && p.marked && p.run == run {
			plan.victims = append(plan.victims, victim{procInfo: p, reason: "run " + strconv.Quote(p.run)})
		}
	}
	for i, v := range plan.victims {
		plan.victims[i].group = v.pgrp == v.pid && !slices.ContainsFunc(procs, func(p procInfo) bool {
			return p.pgrp == v.pid && p.state != "Z" && (spared[p.pid] || !p.marked || p.run != run)
		})
	}
	return plan
}

// isClusterProcess tells whether a command line is one of the binaries named, given a path
// inside a folder named .localcluster* (as --config=<state>/..., --data-dir <state>/...).
func isClusterProcess(argv []string, binaries []string) bool {
	if len(argv) == 0 || !slices.Contains(binaries, programName(argv[0])) {
		return false
	}
	return slices.ContainsFunc(argv[1:], func(arg string) bool { return stateFolderOf(arg) != "" })
}

// versionSuffix is the version the Makefile gives some tools' binaries: bin/kwok-v0.7.0.
var versionSuffix = regexp.MustCompile(`-v[0-9]+\.[0-9]+.*$`)

// programName is a command's file name without its version (kwok-v0.7.0: kwok).
func programName(argv0 string) string {
	return versionSuffix.ReplaceAllString(filepath.Base(argv0), "")
}

// stateFolderOf is the folder named .localcluster* that a path, or an argument holding one
// (--flag=/path), is in, or "".
func stateFolderOf(arg string) string {
	i := strings.Index(arg, "/")
	if i < 0 {
		return ""
	}
	parts := strings.Split("/"+strings.TrimLeft(arg[i:], "/"), "/") // unix:///path: /path
	for j, part := range parts {
		if strings.HasPrefix(part, ".localcluster") {
			return strings.Join(parts[:j+1], "/")
		}
	}
	return ""
}

// inStateFolder tells whether a path is in a folder named .localcluster*: sweep's scope.
func inStateFolder(path string) bool {
	return strings.HasPrefix(path, "/") && stateFolderOf(path) != ""
}

// envValue finds a variable in the content of /proc/<pid>/environ (NUL-separated name=value).
func envValue(environ []byte, name string) (string, bool) {
	for _, kv := range bytes.Split(environ, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte(name+"=")); ok {
			return string(v), true
		}
	}
	return "", false
}

// parsePPid reads the parent pid, field 4, from the text of /proc/<pid>/stat; the command
// name before it is in parentheses and may hold anything, so fields count from its last ')'.
func parsePPid(stat string) (int, error) {
	end := strings.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, errors.New("no command name")
	}
	f := strings.Fields(stat[end+1:]) // f[0] is field 3
	if len(f) < 2 {
		return 0, errors.New("too few fields")
	}
	return strconv.Atoi(f[1])
}

// readProcs reads the process table. A process whose environment cannot be read (another
// user's, without root) counts as unmarked.
func readProcs() []procInfo {
	entries, _ := os.ReadDir(procRoot)
	procs := make([]procInfo, 0, len(entries))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		dir := filepath.Join(procRoot, e.Name())
		statText, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil {
			continue
		}
		st, err := procstat.Parse(pid, string(statText))
		if err != nil {
			continue
		}
		ppid, err := parsePPid(string(statText))
		if err != nil {
			continue
		}
		p := procInfo{pid: pid, ppid: ppid, pgrp: st.PGrp, start: st.Start, state: st.State}
		if environ, err := os.ReadFile(filepath.Join(dir, "environ")); err == nil {
			p.run, p.marked = envValue(environ, runMarker)
		}
		if cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline")); err == nil && len(cmdline) > 0 {
			p.argv = strings.Split(string(bytes.TrimRight(cmdline, "\x00")), "\x00")
		}
		procs = append(procs, p)
	}
	return procs
}

// describe names a victim for a person: pid, program, the start of its arguments, and why.
func (v victim) describe() string {
	cmd := "?"
	if len(v.argv) > 0 {
		cmd = strings.Join(append([]string{filepath.Base(v.argv[0])}, v.argv[1:]...), " ")
	}
	if len(cmd) > 80 {
		cmd = cmd[:77] + "..."
	}
	group := ""
	if v.group {
		group = " and its process group"
	}
	return fmt.Sprintf("process %d%s (%s; %s)", v.pid, group, cmd, v.reason)
}

// stopVictims ends the victims: SIGTERM, then SIGKILL to those left after the grace. A victim
// is signalled only while it is still the process that was read (the same start time), so a
// pid reused meanwhile is left alone; a group victim is signalled as a group, and waited for
// until its group's members are gone too (survivors). It returns, by index, the victims it
// could not stop, with why.
func stopVictims(victims []victim, grace time.Duration) map[int]error {
	boot := currentBoot()
	records := make([]procRecord, len(victims))
	for i, v := range victims {
		records[i] = procRecord{pid: v.pid, start: v.start, boot: boot}
	}
	gone := func(i int) bool {
		st, err := procstat.Read(records[i].pid)
		self := err != nil || !records[i].is(st) || st.State == "Z"
		return self && (!victims[i].group || len(survivors(records[i])) == 0)
	}
	failed := map[int]error{}
	signal := func(sig syscall.Signal) {
		for i, v := range victims {
			if gone(i) {
				continue
			}
			target := v.pid
			if st, err := procstat.Read(v.pid); err != nil || !records[i].is(st) || st.State == "Z" {
				// Only a group victim is waited for once it is gone: what is left is its group's.
				for _, pid := range survivors(records[i]) {
					_ = syscall.Kill(pid, sig)
				}
				continue
			}
			if v.group {
				target = -v.pid
			}
			if err := syscall.Kill(target, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
				failed[i] = err
			}
		}
	}
	allGone := func() bool {
		for i := range victims {
			if failed[i] == nil && !gone(i) {
				return false
			}
		}
		return true
	}
	signal(syscall.SIGTERM)
	if !waitQuiet(grace, allGone) {
		signal(syscall.SIGKILL)
		waitQuiet(5*time.Second, allGone)
	}
	for i := range victims {
		if failed[i] == nil && !gone(i) {
			failed[i] = errors.New("still running after SIGKILL")
		}
	}
	return failed
}
