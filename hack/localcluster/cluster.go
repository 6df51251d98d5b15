package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

const (
	serviceCIDR    = "10.96.0.0/16"
	firstServiceIP = "10.96.0.1"
	// unstartableImage never becomes ready on the simulated nodes (see kwok-stages.yaml):
	// tests use it for an application that cannot start.
	unstartableImage = "example.com/unstartable:never"
)

// controllers are the kube-controller-manager controllers the operator's users rely on;
// node-lifecycle lifts the not-ready taint from new nodes, serviceaccount gives every
// namespace the default service account pods need, root-ca-cert-publisher the
// kube-root-ca.crt ConfigMap without which no real pod's service-account volume mounts,
// job-controller the pods of Jobs (OLM unpacks bundles with one), disruption-controller
// the status of a MyApp's PodDisruptionBudget (how many disruptions it allows), and
// resourcequota-controller the usage of ResourceQuotas, without which the quota admission
// refuses every object a quota covers ("status unknown for quota").
var controllers = []string{
	"deployment-controller", "replicaset-controller", "garbage-collector-controller",
	"horizontal-pod-autoscaler-controller", "endpointslice-controller", "namespace-controller",
	"node-lifecycle-controller", "taint-eviction-controller", "serviceaccount-controller", "job-controller",
	"root-ca-cert-publisher", "disruption-controller", "resourcequota-controller",
}

// kubeconfigPath is where up writes the admin kubeconfig.
func kubeconfigPath(o Options) string { return filepath.Join(o.StateDir, "kubeconfig") }

// controlPlane are the processes up starts before the nodes', in order.
var controlPlane = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"}

// cluster is what the node backends need to know of a control plane that runs.
type cluster struct {
	o     Options
	certs pki
	cs    *kubernetes.Clientset
	// apiURL is the API server's URL, reachable from this machine and from pods.
	apiURL string
}

func up(ctx context.Context, o Options) error {
	nodes, err := nodeBackends(o)
	if err != nil {
		return err
	}
	all := append(append([]string{}, controlPlane...), nodeComponents(nodes)...)
	if alive(o, "kube-apiserver") {
		if kind := recordedNodeKind(o); kind != "" && kind != o.Node {
			return fmt.Errorf("the local cluster in %s runs a %s node, not %s; run `make cluster-down` first", o.StateDir, kind, o.Node)
		}
		if err := checkAlive(o, all...); err != nil {
			return fmt.Errorf("the local cluster is half up (%w); run `make cluster-down` first", err)
		}
		fmt.Printf("Local cluster already running; KUBECONFIG=%s\n", kubeconfigPath(o))
		return nil
	}
	// Whatever is left from a cluster that died is stale.
	if err := down(o); err != nil {
		return err
	}
	began := time.Now()
	if err := os.MkdirAll(o.StateDir, 0o755); err != nil {
		return err
	}
	// Recorded first, so that down cleans up after this kind of node even if up fails.
	if err := os.WriteFile(nodeKindPath(o), []byte(o.Node), 0o644); err != nil {
		return err
	}
	// The address the API server serves on: loopback, unless pods must reach it too.
	address := "127.0.0.1"
	for _, n := range nodes {
		if err := n.prepare(); err != nil {
			return err
		}
		if a := n.apiserverAddress(); a != "" {
			address = a
		}
	}
	certs, err := writePKI(filepath.Join(o.StateDir, "pki"), address, realNodeName)
	if err != nil {
		return fmt.Errorf("writing certificates: %w", err)
	}
	var etcdURL string
	if _, err := startOnFreePorts(ctx, o, "etcd", "127.0.0.1", 2, func(ports []int) error {
		etcdURL = fmt.Sprintf("http://127.0.0.1:%d", ports[0])
		peerURL := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
		// A start that lost a port race may have begun a data folder naming that port.
		if err := os.RemoveAll(filepath.Join(o.StateDir, "etcd")); err != nil {
			return err
		}
		return start(o, "etcd", filepath.Join(o.BinDir, "etcd"),
			"--name=local", "--data-dir="+filepath.Join(o.StateDir, "etcd"),
			"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
			"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
			"--initial-cluster=local="+peerURL, "--unsafe-no-fsync=true")
	}, func(ctx context.Context, _ []int) (bool, error) {
		return httpOK(ctx, etcdURL+"/health"), nil
	}); err != nil {
		return err
	}

	var apiURL string
	var cs *kubernetes.Clientset
	if _, err := startOnFreePorts(ctx, o, "kube-apiserver", "127.0.0.1", 1, func(ports []int) error {
		apiURL = fmt.Sprintf("https://%s:%d", address, ports[0])
		if err := start(o, "kube-apiserver", filepath.Join(o.BinDir, "kube-apiserver"),
			"--etcd-servers="+etcdURL,
			"--bind-address="+address, "--advertise-address="+address, fmt.Sprintf("--secure-port=%d", ports[0]),
			"--tls-cert-file="+certs.apiserverCert, "--tls-private-key-file="+certs.apiserverKey,
			"--client-ca-file="+certs.caCert,
			"--kubelet-client-certificate="+certs.adminCert, "--kubelet-client-key="+certs.adminKey,
			"--kubelet-preferred-address-types=InternalIP,Hostname",
			"--service-account-key-file="+certs.serviceAccountKey,
			"--service-account-signing-key-file="+certs.serviceAccountKey,
			"--service-account-issuer=https://kubernetes.default.svc",
			"--service-cluster-ip-range="+serviceCIDR,
			"--authorization-mode=Node,RBAC", "--allow-privileged=true"); err != nil {
			return err
		}
		if err := writeKubeconfig(kubeconfigPath(o), apiURL, "admin", certs.adminCert, certs.adminKey, certs.caCert); err != nil {
			return err
		}
		var err error
		cs, err = clientset(o)
		return err
	}, func(ctx context.Context, _ []int) (bool, error) {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil && string(body) == "ok", nil
	}); err != nil {
		return err
	}

	kc := "--kubeconfig=" + kubeconfigPath(o)
	// kwok posts a node's status every 20 to 25 s (its heartbeat stage), and later on a busy
	// machine: 41 s apart was seen with the cores shared. With a 40 s grace the node lifecycle
	// controller then marks the node NotReady between two heartbeats, and every pod on it,
	// which kwok never makes ready again; 2 minutes leaves room.
	if err := start(o, "kube-controller-manager", filepath.Join(o.BinDir, "kube-controller-manager"), kc,
		"--controllers="+strings.Join(controllers, ","), "--leader-elect=false", "--secure-port=0",
		"--root-ca-file="+certs.caCert,
		"--use-service-account-credentials=false", "--horizontal-pod-autoscaler-sync-period=5s",
		"--node-monitor-grace-period=2m", "--concurrent-deployment-syncs=10", "--concurrent-replicaset-syncs=10",
		"--concurrent-gc-syncs=20", "--kube-api-qps=200", "--kube-api-burst=400"); err != nil {
		return err
	}
	if err := start(o, "kube-scheduler", filepath.Join(o.BinDir, "kube-scheduler"), kc,
		"--leader-elect=false", "--secure-port=0", "--kube-api-qps=200", "--kube-api-burst=400"); err != nil {
		return err
	}

	c := &cluster{o: o, certs: certs, cs: cs, apiURL: apiURL}
	for _, n := range nodes {
		if err := n.start(ctx, c); err != nil {
			return err
		}
	}
	if err := waitFor(ctx, o, "the nodes and the default service account", func(ctx context.Context) (bool, error) {
		if _, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{}); err != nil {
			return false, nil
		}
		for _, n := range nodes {
			if ok, err := n.ready(ctx, cs); !ok || err != nil {
				return false, err
			}
		}
		return true, nil
	}, all...); err != nil {
		return err
	}
	fmt.Printf("Local cluster up in %.1fs: API server %s, %s\n", time.Since(began).Seconds(), apiURL, describeNodes(nodes))
	fmt.Printf("  export KUBECONFIG=%s\n  logs: %s\n", kubeconfigPath(o), filepath.Join(o.StateDir, "logs"))
	return nil
}

// down stops every recorded component, newest first, has a real node remove what it put on
// this machine, and removes the cluster's state.
func down(o Options) error {
	var real *realNode
	if kind, _ := os.ReadFile(nodeKindPath(o)); string(kind) == nodeReal {
		real = newRealNode(o)
		// The kubelet first, so that it starts no pod again; then the pods, through the
		// runtime while it still runs, so that CNI tears their networks down.
		stop(o, "kubelet", 30*time.Second)
		real.stopPods()
	}
	names := components(o)
	for i := len(names) - 1; i >= 0; i-- {
		stop(o, names[i], 10*time.Second)
	}
	if real != nil {
		if err := real.cleanup(); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(o.StateDir); err != nil {
		return fmt.Errorf("removing %s: %w", o.StateDir, err)
	}
	return nil
}

// status prints every recorded component and fails if one is not running.
func status(o Options) error {
	names := components(o)
	if len(names) == 0 {
		return errNotUp
	}
	var firstDead error
	for _, n := range names {
		state := "running"
		if !alive(o, n) {
			state = "NOT RUNNING, see " + logPath(o, n)
			if firstDead == nil {
				firstDead = &crashError{name: n, log: logPath(o, n)}
			}
		}
		fmt.Printf("%-24s pid %-8d %s\n", n, pidOf(o, n), state)
	}
	fmt.Printf("KUBECONFIG=%s\n", kubeconfigPath(o))
	return firstDead
}

// startOperator (re)starts the operator binary against the local cluster and waits until its
// controller runs.
func startOperator(ctx context.Context, o Options) error {
	if !alive(o, "kube-apiserver") {
		return errNotUp
	}
	stop(o, "operator", 30*time.Second)
	_ = os.Remove(logPath(o, "operator"))
	if err := os.Setenv("KUBECONFIG", kubeconfigPath(o)); err != nil {
		return err
	}
	if err := start(o, "operator", o.Operator, o.OperatorArgs...); err != nil {
		return err
	}
	return waitFor(ctx, o, "operator", func(context.Context) (bool, error) {
		b, _ := os.ReadFile(logPath(o, "operator"))
		return strings.Contains(string(b), "Starting workers"), nil
	}, "operator")
}

// waitFor polls cond until it holds, failing early when a named component (by default the
// one waited for) has exited.
func waitFor(ctx context.Context, o Options, what string, cond wait.ConditionWithContextFunc, watch ...string) error {
	if len(watch) == 0 {
		watch = []string{what}
	}
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := checkAlive(o, watch...); err != nil {
			return false, err
		}
		return cond(ctx)
	})
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("timed out waiting for %s; logs are in %s", what, filepath.Join(o.StateDir, "logs"))
	}
	return err
}

// httpOK tells whether a GET of url answers 200 within 2 s. The bound matters: a port taken
// by another process may accept connections and never answer, and waitFor must go on
// polling whether the component it waits for still runs.
func httpOK(ctx context.Context, url string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer func() { _ = resp.Body.Close() }()
	return resp.StatusCode == http.StatusOK
}

// writeKubeconfig writes a kubeconfig for the API server at server, as the user of a client
// certificate signed by the cluster's CA.
func writeKubeconfig(path, server, user, cert, key, caCert string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: server, CertificateAuthority: caCert}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificate: cert, ClientKey: key}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: user, Namespace: "default"}
	cfg.CurrentContext = "local"
	return clientcmd.WriteToFile(*cfg, path)
}

func clientset(o Options) (*kubernetes.Clientset, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfigPath(o))
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 100, 200
	return kubernetes.NewForConfig(cfg)
}
