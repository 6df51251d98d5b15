// Command localcluster runs a small, real Kubernetes control plane on this machine: etcd,
// kube-apiserver, kube-controller-manager and kube-scheduler, and nodes of one of two kinds:
//
//   - --node=kwok (the default): kwok plays the kubelet of simulated nodes. Deployments roll
//     out, pods become Ready, Services get endpoints and the garbage collector works; no
//     container ever runs. Starts in seconds, needs nothing but the binaries.
//
//   - --node=real: a real kubelet with containerd, runc, CNI and kube-proxy, and an image
//     registry on the node's address. Pods run, probes probe, Services route. Needs root and
//     Debian's containerd, runc, containernetworking-plugins and iptables.
//
//     localcluster up              start the cluster (or reuse the running one)
//     localcluster start-operator  (re)start the operator binary against it
//     localcluster status          report every component; fails if one is down
//     localcluster restart etcd|kube-apiserver  stop one component and start it again in
//     place (same ports, same data), for fault tests
//     localcluster registry        print host:port of a real node's image registry
//     localcluster down            stop everything and remove the cluster's state, and with a
//     real node everything it set up on this machine
//     localcluster sweep [--dry-run] [--keep-run <id>]  stop what earlier runs of this project
//     left running, from any clone or state folder, and as root remove what their real nodes
//     left on this machine (see sweep); needs no state folder
//
// Every component runs as its own process group in the background, logs to
// <state>/logs/<component>.log and is recorded in <state>/pids. Ports are picked free at
// start, so two checkouts can run clusters side by side. The kubeconfig is
// <state>/kubeconfig, for the admin user.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Options says where the binaries are and where the cluster keeps its state.
type Options struct {
	StateDir     string // holds pki/, etcd/, logs/, pids and kubeconfig
	BinDir       string // kube-apiserver, kube-controller-manager, kube-scheduler, etcd
	NodeBinDir   string // kubelet and kube-proxy (a real node); BinDir when empty
	Kwok         string // the kwok binary
	Node         string // the kind of node: nodeKwok or nodeReal
	ImageTool    string // hack/tools/image, which builds images and serves the registry (real node)
	Pause        string // the static binary of the sandbox image (real node)
	NetPol       string // hack/tools/netpol, which enforces NetworkPolicies on the real node; none when empty
	Operator     string // the manager binary, for start-operator
	Nodes        int    // simulated nodes to create; -1: 2 with --node=kwok, 0 with --node=real
	Timeout      time.Duration
	OperatorArgs []string
}

func main() {
	var o Options
	fs := flag.NewFlagSet("localcluster", flag.ExitOnError)
	fs.StringVar(&o.StateDir, "state", ".localcluster", "folder for the cluster's state and logs")
	fs.StringVar(&o.BinDir, "bin", "", "folder with kube-apiserver, kube-controller-manager, kube-scheduler and etcd")
	fs.StringVar(&o.NodeBinDir, "node-bin", "", "folder with kubelet and kube-proxy, for --node=real (default: --bin)")
	fs.StringVar(&o.Kwok, "kwok", "", "the kwok binary")
	fs.StringVar(&o.Operator, "operator", "bin/manager", "the operator binary, for start-operator")
	fs.StringVar(&o.Node, "node", nodeKwok, "kind of node: kwok (simulated, fast) or real (kubelet, containerd, CNI, kube-proxy)")
	fs.StringVar(&o.ImageTool, "image-tool", "", "the image tool (hack/tools/image), for --node=real")
	fs.StringVar(&o.Pause, "pause", "", "the static pause binary for the sandbox image, for --node=real")
	fs.StringVar(&o.NetPol, "network-policy", "", "the NetworkPolicy enforcer (hack/tools/netpol) the real node runs; none when empty (the bridge plugin enforces no policy)")
	fs.IntVar(&o.Nodes, "nodes", -1, "number of simulated nodes (default 2 with --node=kwok, 0 with --node=real)")
	fs.DurationVar(&o.Timeout, "timeout", 2*time.Minute, "how long to wait for the cluster to come up")
	fs.Usage = func() {
		_, _ = fmt.Fprintln(fs.Output(), "usage: localcluster [flags] up|down|status|restart etcd|kube-apiserver|registry|registry-tls|start-operator [-- operator args]")
		_, _ = fmt.Fprintln(fs.Output(), "       localcluster sweep [--dry-run] [--keep-run <run id>]")
		fs.PrintDefaults()
	}
	_ = fs.Parse(os.Args[1:])
	if fs.NArg() < 1 {
		fs.Usage()
		os.Exit(2)
	}
	cmd, rest := fs.Arg(0), fs.Args()[1:]
	if len(rest) > 0 && rest[0] == "--" {
		rest = rest[1:]
	}
	o.OperatorArgs = rest
	abs, err := filepath.Abs(o.StateDir)
	if err != nil {
		fail(err)
	}
	o.StateDir = abs

	ctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
	defer cancel()
	switch cmd {
	case "up":
		err = up(ctx, o)
	case "down":
		err = down(o)
	case "status":
		err = status(o)
	case "restart":
		if len(rest) != 1 {
			fs.Usage()
			os.Exit(2)
		}
		err = restart(ctx, o, rest[0])
	case "sweep":
		s, perr := parseSweepFlags(rest)
		if perr != nil {
			fmt.Fprintln(os.Stderr, "localcluster sweep:", perr)
			fs.Usage()
			os.Exit(2)
		}
		err = sweep(s)
	case "start-operator":
		err = startOperator(ctx, o)
	case "registry", "registry-tls":
		file := registryAddressPath(o)
		if cmd == "registry-tls" {
			file = registryTLSAddressPath(o)
		}
		if a := readAddress(file); a != "" {
			fmt.Println(a)
		} else {
			err = fmt.Errorf("no real-node cluster with a registry runs in %s; start one with `make cluster-up NODE=real`", o.StateDir)
		}
	default:
		fs.Usage()
		os.Exit(2)
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "localcluster:", err)
	var ce *crashError
	if errors.As(err, &ce) {
		fmt.Fprintf(os.Stderr, "--- last lines of %s ---\n%s\n", ce.log, tail(ce.log, 30))
	}
	os.Exit(1)
}
