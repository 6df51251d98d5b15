package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// sweep removes what earlier runs of this project left on this machine, whatever clone or
// state folder they ran from (the clone may be gone), so that a run killed half-way (a CI job
// cancelled, a suite SIGKILLed) cannot hang or break the next one:
//
//   - processes: those whose environment holds runMarker with another run's value, and those
//     of a cluster binary running from a folder named .localcluster* that are not the current
//     run's (planSweep); never this process or its ancestors. SIGTERM, SIGKILL after
//     sweepGrace, whole process groups where one of them leads a group of its own;
//   - as root, what real nodes left on this machine, by the steps down takes for one state
//     folder (nodeCleanupSteps) applied to every folder named .localcluster*: the processes in
//     pods, mounts, network namespaces, the bridge, iptables and ip6tables chains, CNI's
//     cache, the kubelet's log links, the cgroup tree; and the sysctls a real node's saved
//     host state recorded, when its state folder is still there. Without that record nothing
//     is restored: sysctls are left as they are, and sweep says so.
//
// The KUBE-* chains are removed only when a real node of ours left a trace that only it makes
// (the bridge, our cgroup tree, a mount in a state folder, a CNI result of our network):
// otherwise they are another Kubernetes node's. While the current run's own real node runs,
// the machine's state is its, and sweep leaves it alone. sweep assumes no other run of this
// project is in progress on the machine: it stops that run.
//
// With --run, sweep stops only the processes of that one run, and touches nothing else: test-all
// stops a stage that passed its deadline this way, while the other stages run on.
func sweep(s sweepOptions) error {
	r := &sweepReport{dryRun: s.dryRun}
	if s.onlyRun != "" {
		plan := planRun(readProcs(), os.Getpid(), s.onlyRun)
		return stopPlanned(r, plan, s, false)
	}
	return stopPlanned(r, planSweep(readProcs(), os.Getpid(), s.keepRun), s, true)
}

// stopPlanned stops the plan's processes and, with host set, sweeps the host as sweep says.
func stopPlanned(r *sweepReport, plan sweepPlan, s sweepOptions, host bool) error {
	failed := map[int]error{}
	if !s.dryRun && len(plan.victims) > 0 {
		failed = stopVictims(plan.victims, sweepGrace)
	}
	for i, v := range plan.victims {
		r.add("stop", "stopped", v.describe(), failed[i])
	}
	if !host {
		return r.finish(false)
	}
	root := os.Geteuid() == 0
	switch {
	case !root:
		r.note("not root: mounts, the bridge " + bridgeName + ", iptables chains, cgroups and CNI state need root and were not swept")
	case plan.keptRealNode != nil:
		r.note(fmt.Sprintf("the real node of this run (%s, pid %d) runs: the state it keeps on this machine is left alone",
			filepath.Base(plan.keptRealNode.argv[0]), plan.keptRealNode.pid))
	default:
		sweepHost(r, plan)
	}
	return r.finish(root && plan.keptRealNode == nil)
}

// sweepOptions are sweep's own flags, given after the word sweep.
type sweepOptions struct {
	keepRun string // the run whose processes stay
	onlyRun string // when set, the one run whose processes go, and nothing else
	dryRun  bool   // list, remove nothing
}

func parseSweepFlags(args []string) (sweepOptions, error) {
	var s sweepOptions
	fs := flag.NewFlagSet("localcluster sweep", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // main prints the error and the usage
	fs.StringVar(&s.keepRun, "keep-run", os.Getenv(runMarker),
		"the run whose processes stay (its "+runMarker+" value; default: this process's own)")
	fs.StringVar(&s.onlyRun, "run", "", "stop only the processes of this run (their "+runMarker+" value), and remove nothing else")
	fs.BoolVar(&s.dryRun, "dry-run", false, "list what would be stopped and removed, and touch nothing")
	if err := fs.Parse(args); err != nil {
		return s, err
	}
	if fs.NArg() > 0 {
		return s, fmt.Errorf("sweep takes no arguments, got %q", fs.Args())
	}
	return s, nil
}

// sweepHost removes what real nodes left on this machine, as root.
func sweepHost(r *sweepReport, plan sweepPlan) {
	mountinfo, _ := os.ReadFile("/proc/self/mountinfo")
	var points []string
	for _, mp := range mountPoints(string(mountinfo)) {
		if inStateFolder(mp) {
			points = append(points, mp)
		}
	}
	// Read before the steps remove what they are read from.
	traced := realNodeTraced(points)
	states := savedHostStates(points, plan.victims)

	for _, step := range nodeCleanupSteps(cleanupScope{owns: inStateFolder, kubeChains: traced}) {
		for _, l := range step(r.dryRun) {
			r.add("remove", "removed", l.what, l.err)
		}
	}
	switch {
	case len(states) > 0:
		// The oldest record is the nearest to this machine's own settings: a later node
		// recorded what an earlier one had set.
		var err error
		if !r.dryRun {
			err = restoreHostState(states[0])
		}
		r.add("restore", "restored", "the sysctls and folders recorded in "+states[0], err)
	case traced:
		r.note("no saved host state of the real node left (its state folder is gone): " +
			"the sysctls it may have set are left as they are")
	}
}

// realNodeTraced tells whether a real node of ours left something that only it makes: the
// bridge, our cgroup tree, a mount in a state folder, a CNI result of our network.
func realNodeTraced(stateMounts []string) bool {
	if _, err := os.Stat("/sys/class/net/" + bridgeName); err == nil {
		return true
	}
	entries, _ := os.ReadDir(cniResultsDir)
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return len(stateMounts) > 0 || len(cgroupDirs(cgroupRoot)) > 0 || len(ourCNIResults(names)) > 0
}

// savedHostStates are the host states real nodes saved (node/host-state.json) in the state
// folders that the mount points and the stopped processes name, oldest first.
func savedHostStates(stateMounts []string, victims []victim) []string {
	folders := map[string]bool{}
	for _, mp := range stateMounts {
		folders[stateFolderOf(mp)] = true
	}
	for _, v := range victims {
		for _, arg := range v.argv {
			if f := stateFolderOf(arg); f != "" {
				folders[f] = true
			}
		}
	}
	type saved struct {
		file string
		at   int64
	}
	var found []saved
	for f := range folders {
		file := filepath.Join(f, "node", "host-state.json")
		if info, err := os.Stat(file); err == nil {
			found = append(found, saved{file, info.ModTime().UnixNano()})
		}
	}
	sort.Slice(found, func(i, j int) bool { return found[i].at < found[j].at })
	files := make([]string, len(found))
	for i, s := range found {
		files[i] = s.file
	}
	return files
}

// sweepReport prints one line per thing sweep found, and collects what it could not remove.
type sweepReport struct {
	dryRun bool
	found  int
	notes  []string
	errs   []error
}

func (r *sweepReport) add(verb, done, what string, err error) {
	r.found++
	switch {
	case r.dryRun:
		fmt.Printf("localcluster sweep: would %s %s\n", verb, what)
	case err != nil:
		fmt.Fprintf(os.Stderr, "localcluster sweep: could not %s %s: %v\n", verb, what, err)
		r.errs = append(r.errs, err)
	default:
		fmt.Printf("localcluster sweep: %s %s\n", done, what)
	}
}

func (r *sweepReport) note(s string) { r.notes = append(r.notes, s) }

// finish prints the notes, or that there was nothing to do, and fails if anything could not
// be removed.
func (r *sweepReport) finish(hostSwept bool) error {
	if r.found == 0 {
		if hostSwept {
			fmt.Println("localcluster sweep: nothing left from earlier runs")
		} else {
			fmt.Println("localcluster sweep: no process left from earlier runs")
		}
	}
	for _, n := range r.notes {
		fmt.Println("localcluster sweep: " + n)
	}
	if len(r.errs) > 0 {
		return fmt.Errorf("sweep: %d of %d things could not be removed: %w", len(r.errs), r.found, errors.Join(r.errs...))
	}
	return nil
}
