package main

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/example/myapp-operator/hack/procstat"
)

func TestEnvValue(t *testing.T) {
	cases := map[string]struct {
		environ   string
		wantValue string
		wantFound bool
	}{
		"marked":            {"HOME=/root\x00" + runMarker + "=20261127-ab\x00PATH=/bin\x00", "20261127-ab", true},
		"marked, last":      {"HOME=/root\x00" + runMarker + "=x", "x", true},
		"marked, empty":     {runMarker + "=\x00", "", true},
		"a longer name":     {runMarker + "_OLD=x\x00", "", false},
		"a value naming it": {"NOTE=" + runMarker + "=x\x00", "", false},
		"no environment":    {"", "", false},
		"value with an '='": {runMarker + "=a=b\x00", "a=b", true},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			v, ok := envValue([]byte(c.environ), runMarker)
			if v != c.wantValue || ok != c.wantFound {
				t.Errorf("envValue = %q, %v; want %q, %v", v, ok, c.wantValue, c.wantFound)
			}
		})
	}
}

func TestParsePPid(t *testing.T) {
	tail := " 4 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 987654 1000 200"
	cases := map[string]struct {
		stat string
		want int
	}{
		"plain":                          {"4243 (sleep) S 17" + tail, 17},
		"spaces and parentheses in comm": {"4243 (a) b (c)) S 17" + tail, 17},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got, err := parsePPid(c.stat); err != nil || got != c.want {
				t.Errorf("parsePPid = %d, %v; want %d", got, err, c.want)
			}
		})
	}
	for _, bad := range []string{"4243 no name", "4243 (x) S", "4243 (x) S x"} {
		if _, err := parsePPid(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestStateFolderOf(t *testing.T) {
	cases := map[string]string{
		"/work/a/.localcluster/node/kubelet.yaml":          "/work/a/.localcluster",
		"--config=/work/a/.localcluster-e2e/node/x.yaml":   "/work/a/.localcluster-e2e",
		"/tmp/ci/.localcluster-realnode":                   "/tmp/ci/.localcluster-realnode",
		"--data-dir=/tmp/bench-churn-10-123/etcd":          "",
		"/work/a/localcluster/node":                        "",
		"--name=.localcluster":                             "",
		"/a/.localcluster/b/.localcluster-realnode/c":      "/a/.localcluster",
		"unix:///work/a/.localcluster-olm/node/run/x.sock": "/work/a/.localcluster-olm",
	}
	for arg, want := range cases {
		if got := stateFolderOf(arg); got != want {
			t.Errorf("stateFolderOf(%q) = %q, want %q", arg, got, want)
		}
	}
	if inStateFolder("--config=/a/.localcluster/x") || !inStateFolder("/a/.localcluster/x") {
		t.Error("inStateFolder takes paths only, not arguments")
	}
}

func TestIsClusterProcess(t *testing.T) {
	cases := map[string]struct {
		argv []string
		want bool
	}{
		"etcd of a state folder": {[]string{"/work/a/bin/k8s/v1.36.0-etcdv3.6.5/etcd", "--name=local",
			"--data-dir=/work/a/.localcluster-e2e/etcd"}, true},
		"kubelet of a state folder":     {[]string{"/work/a/bin/k8s/x/kubelet", "--config=/work/a/.localcluster-realnode/node/kubelet.yaml"}, true},
		"kwok, its version in its name": {[]string{"/work/a/bin/kwok-v0.7.0", "--kubeconfig=/work/a/.localcluster/kubeconfig"}, true},
		"containerd":                    {[]string{"containerd", "--config", "/work/a/.localcluster-realnode/node/containerd/config.toml"}, true},
		"a shim":                        {[]string{"/usr/bin/containerd-shim-runc-v2", "-namespace", "k8s.io", "-address", "/work/a/.localcluster/node/run/containerd.sock"}, true},
		"etcd of envtest":               {[]string{"/work/a/bin/k8s/x/etcd", "--data-dir=/tmp/k8s_test_framework_123"}, false},
		"the system's containerd":       {[]string{"/usr/bin/containerd"}, false},
		"a shell in a state folder":     {[]string{"bash", "/work/a/.localcluster/x.sh"}, false},
		"an editor of a log":            {[]string{"less", "/work/a/.localcluster/logs/etcd.log"}, false},
		"no command line":               {nil, false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := isClusterProcess(c.argv, clusterBinaries); got != c.want {
				t.Errorf("isClusterProcess(%q) = %v, want %v", c.argv, got, c.want)
			}
		})
	}
}

func TestPlanSweep(t *testing.T) {
	const self = 100
	etcdArgv := []string{"/w/bin/etcd", "--data-dir=/w/.localcluster-e2e/etcd"}
	kubeletArgv := []string{"/w/bin/kubelet", "--config=/w/.localcluster-realnode/node/kubelet.yaml"}
	// The sweep's own ancestry: init, the CI's shell (marked with the current run), make.
	base := []procInfo{
		{pid: 1, ppid: 0, pgrp: 1, state: "S", argv: []string{"/sbin/init"}},
		{pid: 50, ppid: 1, pgrp: 50, state: "S", marked: true, run: "old", argv: []string{"bash", ".ci/run"}},
		{pid: 60, ppid: 50, pgrp: 50, state: "S", marked: true, run: "old", argv: []string{"make"}},
		{pid: self, ppid: 60, pgrp: 50, state: "R", marked: true, run: "old", argv: []string{"bin/localcluster", "sweep"}},
	}
	with := func(procs ...procInfo) []procInfo { return append(slices.Clone(base), procs...) }
	cases := map[string]struct {
		procs       []procInfo
		keepRun     string
		wantVictims map[int]bool // pid -> whether its whole group is signalled
		wantKept    int          // pid of the current run's real node, 0 for none
	}{
		"an earlier run's process tree, its leader's group with it": {
			procs: with(
				procInfo{pid: 200, ppid: 1, pgrp: 200, state: "S", marked: true, run: "run-1", argv: etcdArgv},
				procInfo{pid: 201, ppid: 200, pgrp: 200, state: "S", marked: true, run: "run-1", argv: []string{"helper"}}),
			keepRun:     "run-2",
			wantVictims: map[int]bool{200: true, 201: false},
		},
		"the current run's processes stay": {
			procs: with(
				procInfo{pid: 200, ppid: 1, pgrp: 200, state: "S", marked: true, run: "run-2", argv: etcdArgv},
				procInfo{pid: 300, ppid: 1, pgrp: 300, state: "S", marked: true, run: "run-1", argv: []string{"go", "test"}}),
			keepRun:     "run-2",
			wantVictims: map[int]bool{300: true},
		},
		"ancestors stay though they hold another run's mark, their other processes do not": {
			procs: with(
				procInfo{pid: 70, ppid: 50, pgrp: 50, state: "S", marked: true, run: "old", argv: []string{"tee", "log"}}),
			keepRun:     "new",
			wantVictims: map[int]bool{70: false},
		},
		"a group leader whose group holds a kept process is signalled alone": {
			procs: with(
				procInfo{pid: 200, ppid: 1, pgrp: 200, state: "S", marked: true, run: "run-1", argv: []string{"make"}},
				procInfo{pid: 201, ppid: 200, pgrp: 200, state: "S", marked: true, run: "run-2", argv: []string{"make"}}),
			keepRun:     "run-2",
			wantVictims: map[int]bool{200: false},
		},
		"an unmarked cluster binary of a state folder, and not an unmarked stranger": {
			procs: with(
				procInfo{pid: 200, ppid: 1, pgrp: 200, state: "S", argv: etcdArgv},
				procInfo{pid: 201, ppid: 1, pgrp: 201, state: "S", argv: []string{"/usr/bin/etcd", "--data-dir=/var/lib/etcd"}},
				procInfo{pid: 202, ppid: 1, pgrp: 202, state: "S", argv: []string{"vim", "/w/.localcluster/logs/etcd.log"}}),
			keepRun:     "run-2",
			wantVictims: map[int]bool{200: true},
		},
		"zombies and pid 1 are never picked": {
			procs: with(
				procInfo{pid: 200, ppid: 1, pgrp: 200, state: "Z", marked: true, run: "run-1"}),
			keepRun:     "run-2",
			wantVictims: map[int]bool{},
		},
		"no run to keep: every marked process but the ancestors": {
			procs: with(
				procInfo{pid: 200, ppid: 1, pgrp: 200, state: "S", marked: true, run: "run-2", argv: etcdArgv}),
			keepRun:     "",
			wantVictims: map[int]bool{200: true},
		},
		"the current run's real node is kept and reported": {
			procs: with(
				procInfo{pid: 200, ppid: 1, pgrp: 200, state: "S", marked: true, run: "run-2", argv: kubeletArgv},
				procInfo{pid: 300, ppid: 1, pgrp: 300, state: "S", argv: kubeletArgv}),
			keepRun:     "run-2",
			wantVictims: map[int]bool{300: true},
			wantKept:    200,
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			plan := planSweep(c.procs, self, c.keepRun)
			got := map[int]bool{}
			for _, v := range plan.victims {
				got[v.pid] = v.group
			}
			if !reflect.DeepEqual(got, c.wantVictims) {
				t.Errorf("victims (pid: group) = %v, want %v", got, c.wantVictims)
			}
			kept := 0
			if plan.keptRealNode != nil {
				kept = plan.keptRealNode.pid
			}
			if kept != c.wantKept {
				t.Errorf("kept real node = %d, want %d", kept, c.wantKept)
			}
		})
	}
}

// markedGroup starts `sleep 300` leading a process group of its own, in the environment of a
// run, with a child of its group that dropped the mark.
func markedGroup(t *testing.T, run string) *exec.Cmd {
	t.Helper()
	script := fmt.Sprintf("env -u %s sleep 300 & exec sleep 300", runMarker)
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = append(os.Environ(), runMarker+"="+run)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
	return cmd
}

// groupMembers are the live processes of a process group.
func groupMembers(pgrp int) []int {
	entries, _ := os.ReadDir(procRoot)
	var pids []int
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		if st, err := procstat.Read(pid); err == nil && st.PGrp == pgrp && st.State != "Z" {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestSweepStopsAnEarlierRunKeepsTheCurrentOne runs the process part of sweep on this machine's
// real process table, but signals only the test's own children: it reads the table, checks
// what the plan says of them, and stops just those.
func TestSweepStopsAnEarlierRunKeepsTheCurrentOne(t *testing.T) {
	current := fmt.Sprintf("test-current-%d", os.Getpid())
	earlier := markedGroup(t, fmt.Sprintf("test-earlier-%d", os.Getpid()))
	kept := markedGroup(t, current)
	// Each group shows its two members once the shell forked and exec'd.
	if !waitQuiet(10*time.Second, func() bool {
		return len(groupMembers(earlier.Process.Pid)) == 2 && len(groupMembers(kept.Process.Pid)) == 2
	}) {
		t.Fatal("the two process groups did not start within 10 s")
	}
	plan := planSweep(readProcs(), os.Getpid(), current)
	var ours []victim
	for _, v := range plan.victims {
		switch v.pgrp {
		case kept.Process.Pid:
			t.Fatalf("the current run's process %d is a victim", v.pid)
		case earlier.Process.Pid:
			ours = append(ours, v)
		}
	}
	// The child that dropped the mark is no victim itself: it goes with its group.
	if len(ours) != 1 || ours[0].pid != earlier.Process.Pid || !ours[0].group {
		t.Fatalf("victims of the earlier run = %+v, want its group leader %d, as a group", ours, earlier.Process.Pid)
	}
	if failed := stopVictims(ours, 2*time.Second); len(failed) > 0 {
		t.Fatalf("stopVictims: %v", failed)
	}
	if left := groupMembers(earlier.Process.Pid); len(left) > 0 {
		t.Errorf("the earlier run's group still has %v", left)
	}
	if len(groupMembers(kept.Process.Pid)) != 2 {
		t.Error("the current run's group lost a member")
	}
}

func TestPlanRun(t *testing.T) {
	const self = 100
	procs := []procInfo{
		{pid: 1, ppid: 0, pgrp: 1, state: "S", argv: []string{"/sbin/init"}},
		{pid: 60, ppid: 1, pgrp: 60, state: "S", marked: true, run: "ci/test-e2e", argv: []string{"make"}},
		{pid: self, ppid: 60, pgrp: 60, state: "R", marked: true, run: "ci/test-e2e", argv: []string{"bin/localcluster", "sweep"}},
		{pid: 200, ppid: 1, pgrp: 200, state: "S", marked: true, run: "ci/test-e2e", argv: []string{"etcd"}},
		{pid: 201, ppid: 200, pgrp: 200, state: "S", marked: true, run: "ci/test-e2e", argv: []string{"helper"}},
		{pid: 300, ppid: 1, pgrp: 300, state: "S", marked: true, run: "ci/test-realnode", argv: []string{"kubelet"}},
		{pid: 400, ppid: 1, pgrp: 400, state: "S", marked: true, run: "ci/test-e2e", argv: []string{"go", "test"}},
		{pid: 401, ppid: 400, pgrp: 400, state: "S", argv: []string{"unmarked"}},
		{pid: 500, ppid: 1, pgrp: 500, state: "Z", marked: true, run: "ci/test-e2e", argv: []string{"gone"}},
	}
	plan := planRun(procs, self, "ci/test-e2e")
	got := map[int]bool{}
	for _, v := range plan.victims {
		got[v.pid] = v.group
	}
	// The run's processes go, a group whole only when it holds nothing else; the sweep's own
	// ancestry, another run's processes and zombies stay.
	want := map[int]bool{200: true, 201: false, 400: false}
	if !maps.Equal(got, want) {
		t.Errorf("planRun victims (pid: whole group) = %v, want %v", got, want)
	}
}
