// Command localcluster runs a small, real Kubernetes control plane on this machine, with no
// container runtime: etcd, kube-apiserver, kube-controller-manager and kube-scheduler, plus
// kwok, which plays the kubelet for simulated nodes. Deployments roll out, pods become Ready,
// Services get endpoints and the garbage collector works; no container ever runs.
//
//	localcluster up              start the cluster (or reuse the running one)
//	localcluster start-operator  (re)start the operator binary against it
//	localcluster status          report every component; fails if one is down
//	localcluster down            stop everything and remove the cluster's state
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
	Kwok         string // the kwok binary
	Operator     string // the manager binary, for start-operator
	Nodes        int    // simulated nodes to create
	Timeout      time.Duration
	OperatorArgs []string
}

func main() {
	var o Options
	fs := flag.NewFlagSet("localcluster", flag.ExitOnError)
	fs.StringVar(&o.StateDir, "state", ".localcluster", "folder for the cluster's state and logs")
	fs.StringVar(&o.BinDir, "bin", "", "folder with kube-apiserver, kube-controller-manager, kube-scheduler and etcd")
	fs.StringVar(&o.Kwok, "kwok", "", "the kwok binary")
	fs.StringVar(&o.Operator, "operator", "bin/manager", "the operator binary, for start-operator")
	fs.IntVar(&o.Nodes, "nodes", 2, "number of simulated nodes")
	fs.DurationVar(&o.Timeout, "timeout", 2*time.Minute, "how long to wait for the cluster to come up")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: localcluster [flags] up|down|status|start-operator [-- operator args]")
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
	case "start-operator":
		err = startOperator(ctx, o)
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
