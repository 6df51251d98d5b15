package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The real node's network: a bridge of ours whose address is the node's, on which pods get
// addresses from podCIDR. The API server and the image registry serve on that address, so
// that this machine and the pods reach them alike.
const (
	realNodeName = "real-node"
	bridgeName   = "lc-cni0"
	podCIDR      = "10.244.0.0/24"
	nodeIP       = "10.244.0.1"
	// cniNetwork names our CNI network; CNI's state on this machine carries the name.
	cniNetwork = "localcluster"
	// cgroupRoot is the cgroup, in every hierarchy, under which the kubelet puts the pods.
	cgroupRoot = "/localcluster"
	// cniBinDir is where Debian's containernetworking-plugins puts the plugins.
	cniBinDir = "/usr/lib/cni"
)

// realNodePackages are the Debian packages the real node needs (make realnode-packages).
const realNodePackages = "containerd runc containernetworking-plugins iptables"

// netPolPackages are those the NetworkPolicy enforcer needs beside them (--network-policy).
const netPolPackages = "ipset"

// realNode runs a kubelet with containerd, runc, CNI (bridge, host-local, portmap) and
// kube-proxy in iptables mode, plus an image registry the kubelet pulls from. Everything it
// writes lives under <state>/node and <state>/registry; what it must put elsewhere on this
// machine (a bridge, iptables chains, cgroups, sysctls) down removes or restores.
type realNode struct {
	o   Options
	dir string // <state>/node
}

func newRealNode(o Options) *realNode {
	return &realNode{o: o, dir: filepath.Join(o.StateDir, "node")}
}

func (r *realNode) components() []string {
	names := []string{"registry", "containerd", "kubelet", "kube-proxy"}
	if r.o.NetPol != "" {
		names = append(names, "network-policy")
	}
	return names
}

func (r *realNode) apiserverAddress() string { return nodeIP }

func (r *realNode) String() string {
	return fmt.Sprintf("real node %s (pods on %s, images at %s)", realNodeName, podCIDR, registryAddress(r.o))
}

func (r *realNode) path(parts ...string) string {
	return filepath.Join(append([]string{r.dir}, parts...)...)
}

// socket is containerd's; short, because a unix socket's path has at most 107 bytes.
func (r *realNode) socket() string { return r.path("run", "containerd.sock") }

// registryAddressPath holds host:port of the cluster's image registry, over plain HTTP.
func registryAddressPath(o Options) string { return filepath.Join(o.StateDir, "registry") }

// registryTLSAddressPath holds host:port where the registry serves the same images over
// HTTPS, with a certificate of the cluster's CA (<state>/pki/ca.crt).
func registryTLSAddressPath(o Options) string { return filepath.Join(o.StateDir, "registry-tls") }

// registryAddress is host:port of the image registry of the cluster in the state folder.
func registryAddress(o Options) string { return readAddress(registryAddressPath(o)) }

func readAddress(file string) string {
	b, _ := os.ReadFile(file)
	return strings.TrimSpace(string(b))
}

// prepare checks what the node needs on this machine, then makes its bridge and cgroups.
func (r *realNode) prepare() error {
	if err := r.checkPrerequisites(); err != nil {
		return err
	}
	if _, err := net.InterfaceByName(bridgeName); err == nil {
		return fmt.Errorf("the bridge %s exists: a real-node cluster already runs on this machine "+
			"(stop it with `localcluster --state <its state folder> down`), or one died; "+
			"`localcluster sweep` as root removes what it left (--dry-run lists it)", bridgeName)
	}
	for _, d := range []string{"run", "containerd", "cni", "cni-ipam", "kubelet", "pod-logs"} {
		if err := os.MkdirAll(r.path(d), 0o755); err != nil {
			return err
		}
	}
	if len(r.socket()) > 100 {
		return fmt.Errorf("the state folder's path is too long for containerd's socket %s; use a shorter --state", r.socket())
	}
	if err := saveHostState(r.path("host-state.json")); err != nil {
		return err
	}
	// The bridge exists before any pod, with the node's address, so that the API server and
	// the registry can serve on it from the start; CNI's bridge plugin adopts it.
	for _, args := range [][]string{
		{"link", "add", bridgeName, "type", "bridge"},
		{"addr", "add", nodeIP + "/24", "dev", bridgeName},
		{"link", "set", bridgeName, "up"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	return makeCgroupRoot(cgroupRoot)
}

// checkPrerequisites fails with a message that names what is missing and how to get it.
func (r *realNode) checkPrerequisites() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("a real node needs root (it runs containerd and the kubelet, and sets up networking)")
	}
	var missing []string
	for _, bin := range []string{"containerd", "runc", "iptables", "ip6tables", "iptables-save", "ip"} {
		if _, err := exec.LookPath(bin); err != nil {
			missing = append(missing, bin)
		}
	}
	for _, plugin := range []string{"bridge", "host-local", "portmap", "loopback"} {
		if _, err := os.Stat(filepath.Join(cniBinDir, plugin)); err != nil {
			missing = append(missing, filepath.Join(cniBinDir, plugin))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("a real node needs %s, from the Debian packages %s: run `make realnode-packages` as root, "+
			"or `apt-get install %s`", strings.Join(missing, ", "), realNodePackages, realNodePackages)
	}
	if r.o.NetPol != "" {
		if _, err := exec.LookPath("ipset"); err != nil {
			return fmt.Errorf("the NetworkPolicy enforcer (--network-policy) needs ipset, from the Debian package %s: "+
				"run `make realnode-packages` as root, or `apt-get install %s`", netPolPackages, netPolPackages)
		}
	}
	binaries := []string{filepath.Join(r.o.nodeBin(), "kubelet"), filepath.Join(r.o.nodeBin(), "kube-proxy"), r.o.ImageTool, r.o.Pause}
	if r.o.NetPol != "" {
		binaries = append(binaries, r.o.NetPol)
	}
	for _, f := range binaries {
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("a real node needs %s (built by `make cluster-up NODE=real`): %w", f, err)
		}
	}
	return nil
}

func (r *realNode) start(ctx context.Context, c *cluster) error {
	if err := r.startRegistry(ctx, c.certs); err != nil {
		return err
	}
	// The sandbox (pause) image, built here from a static binary, is the first image the
	// registry holds.
	pause := registryAddress(r.o) + "/pause:localcluster"
	if out, err := exec.CommandContext(ctx, r.o.ImageTool, "build", "--tag", pause, "--add", r.o.Pause+":/pause",
		"--entrypoint", "/pause", "--push").CombinedOutput(); err != nil {
		return fmt.Errorf("building the pause image: %v: %s", err, out)
	}
	if err := r.startContainerd(ctx, pause); err != nil {
		return err
	}
	if err := r.startKubelet(c); err != nil {
		return err
	}
	if err := r.startKubeProxy(c); err != nil {
		return err
	}
	return r.startNetPol(ctx)
}

func (r *realNode) startRegistry(ctx context.Context, certs pki) error {
	var addr, tlsAddr string
	if _, err := startOnFreePorts(ctx, r.o, "registry", nodeIP, 2, func(ports []int) error {
		addr, tlsAddr = fmt.Sprintf("%s:%d", nodeIP, ports[0]), fmt.Sprintf("%s:%d", nodeIP, ports[1])
		return start(r.o, "registry", r.o.ImageTool, "registry", "--addr", addr,
			"--tls-addr", tlsAddr, "--tls-cert", certs.registryCert, "--tls-key", certs.registryKey,
			"--dir", filepath.Join(r.o.StateDir, "registry-blobs"))
	}, func(ctx context.Context, _ []int) (bool, error) {
		return httpOK(ctx, "http://"+addr+"/v2/"), nil
	}); err != nil {
		return err
	}
	if err := os.WriteFile(registryTLSAddressPath(r.o), []byte(tlsAddr+"\n"), 0o644); err != nil {
		return err
	}
	return os.WriteFile(registryAddressPath(r.o), []byte(addr+"\n"), 0o644)
}

// PublishedRegistry is the registry the project's images are published under
// (example.com/myapp-operator, -bundle, -catalog); on the real node it is a mirror of
// registry-address/example.com/.
const PublishedRegistry = "example.com"

func (r *realNode) startContainerd(ctx context.Context, pauseImage string) error {
	// containerd reaches our registry over plain HTTP, and its HTTPS address trusting our CA.
	ca := filepath.Join(r.o.StateDir, "pki", "ca.crt")
	// Images named example.com/..., as the project publishes them (the bundles' CSVs, catalog/),
	// come from our registry's example.com/ repositories: a mirror whose path replaces the
	// upstream's, as in a disconnected cluster.
	mirror := "http://" + registryAddress(r.o) + "/v2/" + PublishedRegistry
	for reg, hosts := range map[string]string{
		PublishedRegistry: fmt.Sprintf("server = %q\n\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n  override_path = true\n",
			"https://"+PublishedRegistry, mirror),
		registryAddress(r.o): fmt.Sprintf("server = %q\n\n[host.%[1]q]\n  capabilities = [\"pull\", \"resolve\"]\n",
			"http://"+registryAddress(r.o)),
		readAddress(registryTLSAddressPath(r.o)): fmt.Sprintf("server = %q\n\n[host.%[1]q]\n  capabilities = [\"pull\", \"resolve\"]\n  ca = %q\n",
			"https://"+readAddress(registryTLSAddressPath(r.o)), ca),
	} {
		hostsDir := r.path("containerd", "certs.d", reg)
		if err := os.MkdirAll(hostsDir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(hostsDir, "hosts.toml"), []byte(hosts), 0o644); err != nil {
			return err
		}
	}
	if err := os.WriteFile(r.path("cni", "10-"+cniNetwork+".conflist"), []byte(cniConfig(r.path("cni-ipam"))), 0o644); err != nil {
		return err
	}
	config := r.path("containerd", "config.toml")
	if err := os.WriteFile(config, []byte(containerdConfig(r.dir, r.socket(), pauseImage)), 0o644); err != nil {
		return err
	}
	if err := start(r.o, "containerd", "containerd", "--config", config); err != nil {
		return err
	}
	return waitFor(ctx, r.o, "containerd", func(ctx context.Context) (bool, error) {
		return criReady(ctx, r.socket()), nil
	})
}

func (r *realNode) startKubelet(c *cluster) error {
	ports, err := freePorts(2)
	if err != nil {
		return err
	}
	kubeconfig := r.path("kubelet.kubeconfig")
	if err := writeKubeconfig(kubeconfig, c.apiURL, "system:node:"+realNodeName,
		c.certs.kubeletCert, c.certs.kubeletKey, c.certs.caCert); err != nil {
		return err
	}
	config := r.path("kubelet.yaml")
	if err := os.WriteFile(config, []byte(kubeletConfig(r, c.certs.caCert, ports[0], ports[1])), 0o644); err != nil {
		return err
	}
	return start(r.o, "kubelet", filepath.Join(r.o.nodeBin(), "kubelet"),
		"--config="+config, "--kubeconfig="+kubeconfig, "--root-dir="+r.path("kubelet"),
		"--cert-dir="+r.path("kubelet", "pki"),
		"--hostname-override="+realNodeName, "--node-ip="+nodeIP, "--node-labels=type=real")
}

func (r *realNode) startKubeProxy(c *cluster) error {
	ports, err := freePorts(2)
	if err != nil {
		return err
	}
	kubeconfig := r.path("kube-proxy.kubeconfig")
	if err := writeKubeconfig(kubeconfig, c.apiURL, "system:kube-proxy",
		c.certs.proxyCert, c.certs.proxyKey, c.certs.caCert); err != nil {
		return err
	}
	config := r.path("kube-proxy.yaml")
	if err := os.WriteFile(config, []byte(kubeProxyConfig(kubeconfig, ports[0], ports[1])), 0o644); err != nil {
		return err
	}
	// down runs `kube-proxy --cleanup` with the same binary, and may be given no --bin.
	bin := filepath.Join(r.o.nodeBin(), "kube-proxy")
	if err := os.WriteFile(r.path("kube-proxy-binary"), []byte(bin), 0o644); err != nil {
		return err
	}
	return start(r.o, "kube-proxy", bin, "--config="+config)
}

// startNetPol starts the NetworkPolicy enforcer when asked for, and waits until it has made
// its chains: from then on a pod a NetworkPolicy selects gets only what the policy allows.
// It reads the cluster as its administrator (it lists pods, namespaces and policies, and
// reads the node), which a test node component may. down removes its chains and ipsets with
// the other KUBE-* ones.
func (r *realNode) startNetPol(ctx context.Context) error {
	if r.o.NetPol == "" {
		return nil
	}
	if err := start(r.o, "network-policy", r.o.NetPol, "--kubeconfig="+kubeconfigPath(r.o),
		"--hostname-override="+realNodeName, "--service-cluster-ip-range="+serviceCIDR); err != nil {
		return err
	}
	return waitFor(ctx, r.o, "network-policy", func(context.Context) (bool, error) {
		return exec.Command("iptables", "-w", "-n", "-L", "KUBE-ROUTER-FORWARD").Run() == nil, nil
	}, "network-policy")
}

// ready holds once the node is Ready and untainted, and the CA bundle every pod's
// service-account volume mounts is published.
func (r *realNode) ready(ctx context.Context, cs kubernetes.Interface) (bool, error) {
	node, err := cs.CoreV1().Nodes().Get(ctx, realNodeName, metav1.GetOptions{})
	if err != nil || !nodeReady(*node) || len(node.Spec.Taints) > 0 {
		return false, nil
	}
	if _, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{}); apierrors.IsNotFound(err) {
		return false, nil
	}
	return true, nil
}

// waitQuiet polls cond every 100 ms until it holds or the timeout passes.
func waitQuiet(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
	return true
}

// nodeBin is the folder of the real node's kubelet and kube-proxy.
func (o Options) nodeBin() string {
	if o.NodeBinDir != "" {
		return o.NodeBinDir
	}
	return o.BinDir
}
