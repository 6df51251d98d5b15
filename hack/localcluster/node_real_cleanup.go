package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// What a real node changes on this machine outside its state folder, and how down undoes it
// (nodeCleanupSteps; sweep runs the same steps for every state folder at once):
//   - pod sandboxes: stopped and removed through the CRI first, so that CNI's DEL removes
//     each pod's veth, address and rules; then any process left in our cgroups is killed;
//   - mounts under the state folder (containerd's snapshots and shm, network namespaces,
//     the kubelet's volumes): unmounted, deepest first;
//   - network namespaces CNI's results put in /run/netns for our network: unmounted, removed;
//   - the bridge lc-cni0: deleted;
//   - iptables and ip6tables: `kube-proxy --cleanup` for kube-proxy's rules, then every KUBE-*
//     chain left (the kubelet's: KUBE-FIREWALL, KUBE-KUBELET-CANARY, KUBE-IPTABLES-HINT; the
//     NetworkPolicy enforcer's: KUBE-ROUTER-*, KUBE-POD-FW-*, KUBE-NWPLCY-*) and the CNI chains
//     of our network; tables that were not there before and are empty are dropped;
//   - ipsets named KUBE-* (the NetworkPolicy enforcer's peers), once no rule uses them;
//   - /var/lib/cni (CNI's result cache), /var/log/containers (the kubelet's log links),
//     /run/containerd/s (shim sockets): our entries, and the folders if we made them;
//   - cgroups: the tree under /localcluster in every hierarchy;
//   - sysctls the kubelet, kube-proxy and the bridge plugin set: restored.

// hostState is what saveHostState records before the node touches this machine.
type hostState struct {
	Sysctls map[string]string // name -> value before
	Existed map[string]bool   // folder -> whether it existed before
	Tables  map[string]bool   // nf_tables tables ("ip nat") there before
}

// touchedSysctls are those the kubelet (unless protectKernelDefaults), kube-proxy and CNI's
// bridge plugin may write.
var touchedSysctls = []string{
	"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
	"kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes",
	"net/ipv4/ip_forward", "net/ipv4/conf/all/route_localnet", "net/ipv6/conf/all/forwarding",
	"net/bridge/bridge-nf-call-iptables", "net/bridge/bridge-nf-call-ip6tables",
	"net/netfilter/nf_conntrack_max",
}

// touchedFolders are the folders outside the state folder that the node's components write to.
var touchedFolders = []string{"/var/lib/cni", "/var/log/containers", "/var/log/pods", "/run/containerd", "/run/netns", "/var/lib/kubelet"}

// kubeletSockets are what the kubelet puts where no flag moves it: its device plugin
// registration socket.
var kubeletSockets = []string{"/var/lib/kubelet/device-plugins/kubelet.sock"}

var iptablesTables = []string{"filter", "nat", "mangle"}

func saveHostState(file string) error {
	s := hostState{Sysctls: map[string]string{}, Existed: map[string]bool{}, Tables: map[string]bool{}}
	for _, name := range touchedSysctls {
		if b, err := os.ReadFile("/proc/sys/" + name); err == nil {
			s.Sysctls[name] = strings.TrimSpace(string(b))
		}
	}
	for _, f := range touchedFolders {
		_, err := os.Stat(f)
		s.Existed[f] = err == nil
	}
	for _, t := range nftTables() {
		s.Tables[t] = true
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, b, 0o644)
}

// criClient dials containerd's CRI.
func criClient(socket string) (runtimeapi.RuntimeServiceClient, *grpc.ClientConn, error) {
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, nil, err
	}
	return runtimeapi.NewRuntimeServiceClient(conn), conn, nil
}

// criReady tells whether containerd's CRI answers and reports its runtime ready.
func criReady(ctx context.Context, socket string) bool {
	if _, err := os.Stat(socket); err != nil {
		return false
	}
	rt, conn, err := criClient(socket)
	if err != nil {
		return false
	}
	defer func() { _ = conn.Close() }()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	st, err := rt.Status(ctx, &runtimeapi.StatusRequest{})
	if err != nil {
		return false
	}
	for _, c := range st.GetStatus().GetConditions() {
		if c.GetType() == runtimeapi.RuntimeReady && !c.GetStatus() {
			return false
		}
	}
	return true
}

// stopPods stops and removes every pod sandbox through the CRI, which runs CNI's DEL for
// each. It does nothing when containerd is not running.
func (r *realNode) stopPods() {
	if !alive(r.o, "containerd") {
		return
	}
	rt, conn, err := criClient(r.socket())
	if err != nil {
		return
	}
	defer func() { _ = conn.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	list, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "localcluster: listing pods through the CRI: %v\n", err)
		return
	}
	for _, sb := range list.GetItems() {
		if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.GetId()}); err != nil {
			fmt.Fprintf(os.Stderr, "localcluster: stopping pod %s: %v\n", sb.GetMetadata().GetName(), err)
		}
		if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.GetId()}); err != nil {
			fmt.Fprintf(os.Stderr, "localcluster: removing pod %s: %v\n", sb.GetMetadata().GetName(), err)
		}
	}
}

// cleanup removes what the node left on this machine once its processes are stopped. It
// goes on past a failure and reports them all.
func (r *realNode) cleanup() error {
	var errs []error
	for _, step := range nodeCleanupSteps(r.cleanupScope()) {
		for _, l := range step(false) {
			errs = append(errs, l.err)
		}
	}
	errs = append(errs, restoreHostState(r.path("host-state.json")))
	return errors.Join(errs...)
}

// cleanupScope is what down removes: the node of one state folder, kube-proxy's rules through
// the very binary that made them.
func (r *realNode) cleanupScope() cleanupScope {
	s := cleanupScope{owns: func(p string) bool { return isUnder(p, r.o.StateDir) }, kubeChains: true}
	if b, err := os.ReadFile(r.path("kube-proxy-binary")); err == nil {
		s.kubeProxy = strings.TrimSpace(string(b))
	}
	return s
}

// isUnder tells whether path is dir or inside it.
func isUnder(path, dir string) bool { return path == dir || strings.HasPrefix(path, dir+"/") }

// cleanupScope says which of this machine's state a cleanup removes. down covers one state
// folder; sweep covers every folder named .localcluster*, whatever clone it is in.
type cleanupScope struct {
	// owns tells whether a path (a mount point, a log link's target, containerd's socket) is
	// in a state folder the cleanup covers.
	owns func(path string) bool
	// kubeProxy is the kube-proxy binary whose --cleanup removes its rules, or "".
	kubeProxy string
	// kubeChains removes every KUBE-* chain of iptables and ip6tables: the kubelet's, which
	// kube-proxy --cleanup leaves, and kube-proxy's own when no binary removed them.
	kubeChains bool
}

// A leftover is one thing a real node left on this machine, and why it could not be removed
// (nil when it was, or when it was only listed).
type leftover struct {
	what string
	err  error
}

// A cleanupStep finds one kind of thing a real node leaves on this machine and removes it, or
// with dryRun only lists it.
type cleanupStep func(dryRun bool) []leftover

// nodeCleanupSteps are the steps that remove what real nodes in scope left on this machine,
// in the order they must run: the processes left in pods first, then the rules that route to
// them, their network namespaces and mounts, the bridge, CNI's cache, the log links and last
// the cgroups, which only empty ones can leave.
func nodeCleanupSteps(s cleanupScope) []cleanupStep {
	steps := []cleanupStep{killLeftovers(s.owns)}
	if s.kubeProxy != "" {
		steps = append(steps, kubeProxyCleanup(s.kubeProxy))
	}
	for _, ipt := range []string{"iptables", "ip6tables"} {
		if s.kubeChains {
			for _, table := range iptablesTables {
				steps = append(steps, chainStep(ipt, table, isKubeChain))
			}
		}
		steps = append(steps, chainStep(ipt, "nat", isOurCNIChain))
	}
	if s.kubeChains {
		steps = append(steps, ipsetStep)
	}
	return append(steps, removeNetns, mountStep(s.owns), removeBridge, removeCNIResults,
		logLinkStep(s.owns), removeCgroups)
}

// kubeProxyCleanup runs `kube-proxy --cleanup`, which removes kube-proxy's iptables,
// ip6tables and nftables rules.
func kubeProxyCleanup(bin string) cleanupStep {
	return func(dryRun bool) []leftover {
		l := leftover{what: "kube-proxy's rules (" + bin + " --cleanup)"}
		if !dryRun {
			if out, err := exec.Command(bin, "--cleanup").CombinedOutput(); err != nil {
				l.err = fmt.Errorf("kube-proxy --cleanup: %v: %s", err, out)
			}
		}
		return []leftover{l}
	}
}

// ipsetStep destroys the ipsets named KUBE-* (kube-router's, which the NetworkPolicy enforcer
// makes: KUBE-SRC-*, KUBE-DST-*, and inet6:KUBE-* for IPv6), after the chains whose rules use
// them. A machine without ipset has none.
func ipsetStep(dryRun bool) []leftover {
	if _, err := exec.LookPath("ipset"); err != nil {
		return nil
	}
	out, err := exec.Command("ipset", "list", "-n").Output()
	if err != nil {
		return []leftover{{what: "ipsets", err: fmt.Errorf("ipset list -n: %w", err)}}
	}
	sets := kubeIPSets(string(out))
	found := make([]leftover, 0, len(sets))
	for _, set := range sets {
		l := leftover{what: "ipset " + set}
		if !dryRun {
			if out, err := exec.Command("ipset", "destroy", set).CombinedOutput(); err != nil {
				l.err = fmt.Errorf("ipset destroy %s: %v: %s", set, err, out)
			}
		}
		found = append(found, l)
	}
	return found
}

// kubeIPSets lists the sets named KUBE-* (or inet6:KUBE-*) in `ipset list -n`'s output.
func kubeIPSets(list string) []string {
	var sets []string
	for _, name := range strings.Fields(list) {
		if strings.HasPrefix(strings.TrimPrefix(name, "inet6:"), "KUBE-") {
			sets = append(sets, name)
		}
	}
	return sets
}

// removeBridge deletes the bridge lc-cni0, with the addresses and routes on it.
func removeBridge(dryRun bool) []leftover {
	if _, err := os.Stat("/sys/class/net/" + bridgeName); err != nil {
		return nil
	}
	l := leftover{what: "bridge " + bridgeName}
	if !dryRun {
		if out, err := exec.Command("ip", "link", "delete", bridgeName).CombinedOutput(); err != nil {
			l.err = fmt.Errorf("deleting the bridge %s: %v: %s", bridgeName, err, out)
		}
	}
	return []leftover{l}
}

// logLinkStep removes the kubelet's links in /var/log/containers to pod logs in scope.
func logLinkStep(owns func(string) bool) cleanupStep {
	return func(dryRun bool) []leftover {
		return removeMatching("/var/log/containers", dryRun, func(_, target string) bool { return owns(target) })
	}
}

// removeCgroups removes our cgroup tree in every hierarchy, once killLeftovers emptied it.
func removeCgroups(dryRun bool) []leftover {
	dirs := cgroupDirs(cgroupRoot)
	if len(dirs) == 0 {
		return nil
	}
	l := leftover{what: fmt.Sprintf("cgroup tree %s (%d folders)", cgroupRoot, len(dirs))}
	if !dryRun {
		l.err = removeCgroupRoot(cgroupRoot)
	}
	return []leftover{l}
}

// killLeftovers kills containerd's shims whose socket is in scope, with the sockets they leave
// in /run/containerd/s, and every process in our cgroups: what is left of pods the CRI could
// not stop.
func killLeftovers(owns func(string) bool) cleanupStep {
	return func(dryRun bool) []leftover {
		var found []leftover
		killed := map[int]bool{} // a process is in our cgroup of every hierarchy (cgroup v1)
		kill := func(pid int, what string) {
			if killed[pid] {
				return
			}
			killed[pid] = true
			l := leftover{what: what}
			if !dryRun {
				if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
					l.err = fmt.Errorf("killing %s: %w", what, err)
				}
			}
			found = append(found, l)
		}
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range procs {
			b, err := os.ReadFile(p)
			if err != nil {
				continue
			}
			args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
			flags := map[string]string{}
			for i := 0; i+1 < len(args); i++ {
				if strings.HasPrefix(args[i], "-") {
					flags[args[i]] = args[i+1]
				}
			}
			if !strings.Contains(args[0], "containerd-shim") || !owns(flags["-address"]) {
				continue
			}
			if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
				kill(pid, fmt.Sprintf("containerd shim %d of %s", pid, flags["-address"]))
			}
			if !dryRun {
				// Where the shim listens, as containerd names it: a hash of address, namespace and id.
				sum := sha256.Sum256([]byte(filepath.Join(flags["-address"], flags["-namespace"], flags["-id"])))
				_ = os.Remove(filepath.Join("/run/containerd/s", hex.EncodeToString(sum[:])))
			}
		}
		for _, dir := range cgroupDirs(cgroupRoot) {
			b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil {
					kill(pid, fmt.Sprintf("process %d in cgroup %s", pid, dir))
				}
			}
		}
		return found
	}
}

// isKubeChain: the chains of the kubelet (KUBE-FIREWALL, KUBE-KUBELET-CANARY,
// KUBE-IPTABLES-HINT, which kube-proxy --cleanup leaves) and of kube-proxy. A real node of
// ours is the only Kubernetes node on this machine (prepare refuses a second bridge, and
// kube-proxy --cleanup would remove another node's rules just as well).
func isKubeChain(chain string, _ map[string][]string) bool {
	return strings.HasPrefix(chain, "KUBE-")
}

// isOurCNIChain: a CNI plugin's chain for a pod of our network (a rule in it, or one that
// jumps to it, names the network), or one of portmap's CNI-HOSTPORT-* chains, which every
// network shares, once it holds nothing but ours. (Rules of ours in a shared chain that
// stays go with the pod chains they jump to.)
func isOurCNIChain(chain string, table map[string][]string) bool {
	if !strings.HasPrefix(chain, "CNI-") {
		return false
	}
	ourComment := `name: \"` + cniNetwork + `\"`
	rules := table[chain]
	switch chain {
	case "CNI-HOSTPORT-DNAT", "CNI-HOSTPORT-SNAT":
		return allOurs(rules, ourComment)
	case "CNI-HOSTPORT-MASQ", "CNI-HOSTPORT-SETMARK":
		// portmap's one fixed rule, needed while another network's ports are mapped.
		return len(rules) <= 1 && allOurs(table["CNI-HOSTPORT-DNAT"], ourComment)
	}
	for _, rules := range table {
		for _, rule := range rules {
			if strings.Contains(rule, ourComment) &&
				(strings.HasPrefix(rule, "-A "+chain+" ") || strings.HasSuffix(rule, "-j "+chain)) {
				return true
			}
		}
	}
	return false
}

func allOurs(rules []string, comment string) bool {
	for _, r := range rules {
		if !strings.Contains(r, comment) {
			return false
		}
	}
	return true
}

// iptablesSave lists a table's chains and their rules ("-A CHAIN ..." lines) as
// <ipt>-save prints them; an absent table has no chains.
func iptablesSave(ipt, table string) (map[string][]string, error) {
	out, err := exec.Command(ipt+"-save", "-t", table).Output()
	if err != nil {
		return nil, err
	}
	chains := map[string][]string{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, ":"):
			chains[strings.Fields(line[1:])[0]] = nil
		case strings.HasPrefix(line, "-A "):
			chain := strings.Fields(line)[1]
			chains[chain] = append(chains[chain], line)
		}
	}
	return chains, nil
}

// chainStep removes the chains of an iptables table that match, with every rule that jumps
// to them.
func chainStep(ipt, table string, match func(chain string, table map[string][]string) bool) cleanupStep {
	return func(dryRun bool) []leftover {
		chains, err := iptablesSave(ipt, table)
		if err != nil {
			return nil // no such table, or no iptables: nothing of ours
		}
		doomed := matchingChains(chains, match)
		if len(doomed) == 0 {
			return nil
		}
		l := leftover{what: fmt.Sprintf("%s -t %s chains %s", ipt, table, strings.Join(doomed, ", "))}
		if !dryRun {
			l.err = removeChains(ipt, table, chains, doomed)
		}
		return []leftover{l}
	}
}

// matchingChains lists the chains of a table that match, sorted.
func matchingChains(chains map[string][]string, match func(chain string, table map[string][]string) bool) []string {
	var doomed []string
	for chain := range chains {
		if match(chain, chains) {
			doomed = append(doomed, chain)
		}
	}
	sort.Strings(doomed)
	return doomed
}

// jumpsTo lists, as the arguments that delete them ("-D CHAIN ..."), the rules of the chains
// that stay which jump to a doomed one; a doomed chain cannot be deleted while one refers to it.
func jumpsTo(chains map[string][]string, doomed []string) [][]string {
	var deletes [][]string
	for _, chain := range slices.Sorted(maps.Keys(chains)) {
		if slices.Contains(doomed, chain) {
			continue
		}
		for _, rule := range chains[chain] {
			args := splitRule(rule)
			if target := jumpTarget(args); target != "" && slices.Contains(doomed, target) {
				args[0] = "-D"
				deletes = append(deletes, args)
			}
		}
	}
	return deletes
}

// removeChains deletes the doomed chains of a table: first the rules elsewhere that jump to
// them, then their own rules (which may jump from one doomed chain to another), then the
// chains.
func removeChains(ipt, table string, chains map[string][]string, doomed []string) error {
	var errs []error
	run := func(args ...string) {
		if out, err := exec.Command(ipt, append([]string{"-w", "-t", table}, args...)...).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("%s -t %s %s: %v: %s", ipt, table, strings.Join(args, " "), err, out))
		}
	}
	for _, args := range jumpsTo(chains, doomed) {
		run(args...)
	}
	for _, chain := range doomed {
		run("-F", chain)
	}
	for _, chain := range doomed {
		run("-X", chain)
	}
	return errors.Join(errs...)
}

func jumpTarget(args []string) string {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "-j" || args[i] == "-g" {
			return args[i+1]
		}
	}
	return ""
}

// splitRule splits an iptables-save rule into arguments, honouring its double quotes.
func splitRule(line string) []string {
	var args []string
	var cur strings.Builder
	inQuote, escaped, have := false, false, false
	for _, c := range line {
		switch {
		case escaped:
			cur.WriteRune(c)
			escaped = false
		case c == '\\':
			escaped = true
		case c == '"':
			inQuote, have = !inQuote, true
		case c == ' ' && !inQuote:
			if have || cur.Len() > 0 {
				args = append(args, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteRune(c)
		}
	}
	if have || cur.Len() > 0 {
		args = append(args, cur.String())
	}
	return args
}

// removeMatching removes the entries of a folder that match, given their name and, for a
// symbolic link, its target, or with dryRun only lists them.
func removeMatching(dir string, dryRun bool, match func(name, target string) bool) []leftover {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	found := make([]leftover, 0, len(entries))
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		target, _ := os.Readlink(p)
		if !match(e.Name(), target) {
			continue
		}
		l := leftover{what: p}
		if !dryRun {
			l.err = os.RemoveAll(p)
		}
		found = append(found, l)
	}
	return found
}

// cgroupHierarchies are the mount points of this machine's cgroup hierarchies (v1 and v2).
func cgroupHierarchies() []string {
	b, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return nil
	}
	var dirs []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && (f[2] == "cgroup" || f[2] == "cgroup2") {
			dirs = append(dirs, f[1])
		}
	}
	return dirs
}

// makeCgroupRoot makes the cgroup the kubelet puts pods under, in every hierarchy: the kubelet
// insists that it exists.
func makeCgroupRoot(root string) error {
	for _, h := range cgroupHierarchies() {
		if err := os.MkdirAll(filepath.Join(h, root), 0o755); err != nil {
			return fmt.Errorf("making cgroup %s: %w", root, err)
		}
	}
	return nil
}

// cgroupDirs lists the cgroup folders at and below root in every hierarchy, deepest first.
func cgroupDirs(root string) []string {
	var dirs []string
	for _, h := range cgroupHierarchies() {
		_ = filepath.WalkDir(filepath.Join(h, root), func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
	}
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
	return dirs
}

// removeCgroupRoot removes our cgroup tree, waiting briefly for killed processes to leave it.
func removeCgroupRoot(root string) error {
	var errs []error
	for _, dir := range cgroupDirs(root) {
		if !waitQuiet(5*time.Second, func() bool {
			err := syscall.Rmdir(dir)
			return err == nil || errors.Is(err, syscall.ENOENT)
		}) {
			errs = append(errs, fmt.Errorf("removing cgroup %s: still in use", dir))
		}
	}
	return errors.Join(errs...)
}

// restoreHostState puts back the sysctls saveHostState recorded, drops iptables tables that
// were not there before and are now empty, and removes the folders the node made outside
// its state folder if they are empty.
func restoreHostState(file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil // the node never touched this machine
	}
	var s hostState
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	var errs []error
	for name, want := range s.Sysctls {
		if got, err := os.ReadFile("/proc/sys/" + name); err == nil && strings.TrimSpace(string(got)) != want {
			if err := os.WriteFile("/proc/sys/"+name, []byte(want), 0o644); err != nil {
				errs = append(errs, fmt.Errorf("restoring %s to %s: %w", name, want, err))
			}
		}
	}
	// iptables-nft makes the tables it is first asked about; drop those that were not there
	// before once they hold no rule.
	for _, key := range nftTables() {
		family, table, _ := strings.Cut(key, " ")
		ipt := map[string]string{"ip": "iptables", "ip6": "ip6tables"}[family]
		if s.Tables[key] || ipt == "" || !slices.Contains(iptablesTables, table) {
			continue
		}
		if chains, err := iptablesSave(ipt, table); err != nil || !emptyTable(chains) {
			continue
		}
		if out, err := exec.Command("nft", "delete", "table", family, table).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("nft delete table %s %s: %v: %s", family, table, err, out))
		}
	}
	if !s.Existed["/var/lib/kubelet"] {
		for _, f := range kubeletSockets {
			_ = os.Remove(f)
		}
	}
	for _, f := range touchedFolders {
		if !s.Existed[f] {
			removeEmptyTree(f)
		}
	}
	return errors.Join(errs...)
}

// nftTables lists the nf_tables tables as "family name", e.g. "ip nat"; none where iptables
// is not the nf_tables variant (Debian's default) or nft is missing.
func nftTables() []string {
	if _, err := exec.LookPath("nft"); err != nil {
		return nil
	}
	if out, err := exec.Command("iptables", "--version").Output(); err != nil || !strings.Contains(string(out), "nf_tables") {
		return nil
	}
	out, err := exec.Command("nft", "list", "tables").Output()
	if err != nil {
		return nil
	}
	var tables []string
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "table "); ok {
			tables = append(tables, rest)
		}
	}
	return tables
}

// emptyTable tells whether a table holds only its built-in chains, with no rule.
func emptyTable(chains map[string][]string) bool {
	for chain, rules := range chains {
		if len(rules) > 0 || strings.ToUpper(chain) != chain || strings.Contains(chain, "-") {
			return false
		}
	}
	return true
}

// removeEmptyTree removes a folder whose tree holds only empty folders.
func removeEmptyTree(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.IsDir() {
			removeEmptyTree(filepath.Join(dir, e.Name()))
		}
	}
	_ = syscall.Rmdir(dir)
}
