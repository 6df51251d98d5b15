package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

const (
	serviceCIDR    = "10.96.0.0/24"
	firstServiceIP = "10.96.0.1"
	// unstartableImage never becomes ready on the simulated nodes (see kwok-stages.yaml):
	// tests use it for an application that cannot start.
	unstartableImage = "example.com/unstartable:never"
)

// controllers are the kube-controller-manager controllers the operator's users rely on;
// node-lifecycle lifts the not-ready taint from new nodes, serviceaccount gives every
// namespace the default service account pods need.
var controllers = []string{
	"deployment-controller", "replicaset-controller", "garbage-collector-controller",
	"horizontal-pod-autoscaler-controller", "endpointslice-controller", "namespace-controller",
	"node-lifecycle-controller", "taint-eviction-controller", "serviceaccount-controller",
}

// kubeconfigPath is where up writes the admin kubeconfig.
func kubeconfigPath(o Options) string { return filepath.Join(o.StateDir, "kubeconfig") }

// clusterComponents are the processes up starts, in order.
var clusterComponents = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"}

func up(ctx context.Context, o Options) error {
	if alive(o, "kube-apiserver") {
		if err := checkAlive(o, clusterComponents...); err != nil {
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
	ports, err := freePorts(3)
	if err != nil {
		return err
	}
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	apiURL := fmt.Sprintf("https://127.0.0.1:%d", ports[2])

	certs, err := writePKI(filepath.Join(o.StateDir, "pki"))
	if err != nil {
		return fmt.Errorf("writing certificates: %w", err)
	}
	if err := start(o, "etcd", filepath.Join(o.BinDir, "etcd"),
		"--name=local", "--data-dir="+filepath.Join(o.StateDir, "etcd"),
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=local="+peerURL, "--unsafe-no-fsync=true"); err != nil {
		return err
	}
	if err := waitFor(ctx, o, "etcd", func(ctx context.Context) (bool, error) {
		return httpOK(ctx, etcdURL+"/health"), nil
	}); err != nil {
		return err
	}

	if err := start(o, "kube-apiserver", filepath.Join(o.BinDir, "kube-apiserver"),
		"--etcd-servers="+etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", ports[2]),
		"--tls-cert-file="+certs.apiserverCert, "--tls-private-key-file="+certs.apiserverKey,
		"--client-ca-file="+certs.caCert,
		"--service-account-key-file="+certs.serviceAccountKey,
		"--service-account-signing-key-file="+certs.serviceAccountKey,
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-cluster-ip-range="+serviceCIDR,
		"--authorization-mode=RBAC", "--allow-privileged=true"); err != nil {
		return err
	}
	if err := writeKubeconfig(kubeconfigPath(o), apiURL, certs); err != nil {
		return err
	}
	cs, err := clientset(o)
	if err != nil {
		return err
	}
	if err := waitFor(ctx, o, "kube-apiserver", func(ctx context.Context) (bool, error) {
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
		"--use-service-account-credentials=false", "--horizontal-pod-autoscaler-sync-period=5s",
		"--node-monitor-grace-period=2m", "--concurrent-deployment-syncs=10", "--concurrent-replicaset-syncs=10",
		"--concurrent-gc-syncs=20", "--kube-api-qps=200", "--kube-api-burst=400"); err != nil {
		return err
	}
	if err := start(o, "kube-scheduler", filepath.Join(o.BinDir, "kube-scheduler"), kc,
		"--leader-elect=false", "--secure-port=0", "--kube-api-qps=200", "--kube-api-burst=400"); err != nil {
		return err
	}
	stages := filepath.Join(o.StateDir, "kwok-stages.yaml")
	if err := os.WriteFile(stages, []byte(kwokStages), 0o644); err != nil {
		return err
	}
	if err := start(o, "kwok", o.Kwok, kc, "--config="+stages, "--manage-all-nodes=true",
		"--node-port=0", "--cidr=10.244.0.1/16", "--node-ip=127.0.0.1"); err != nil {
		return err
	}

	if err := createNodes(ctx, cs, o.Nodes); err != nil {
		return err
	}
	if err := waitFor(ctx, o, "simulated nodes and the default service account", func(ctx context.Context) (bool, error) {
		if _, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{}); err != nil {
			return false, nil
		}
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil || len(nodes.Items) < o.Nodes {
			return false, nil
		}
		for _, n := range nodes.Items {
			if !nodeReady(n) || len(n.Spec.Taints) > 0 {
				return false, nil
			}
		}
		return true, nil
	}, clusterComponents...); err != nil {
		return err
	}
	fmt.Printf("Local cluster up in %.1fs: API server %s, %d simulated nodes\n", time.Since(began).Seconds(), apiURL, o.Nodes)
	fmt.Printf("  export KUBECONFIG=%s\n  logs: %s\n", kubeconfigPath(o), filepath.Join(o.StateDir, "logs"))
	return nil
}

// down stops every recorded component, newest first, and removes the cluster's state.
func down(o Options) error {
	names := components(o)
	for i := len(names) - 1; i >= 0; i-- {
		stop(o, names[i], 10*time.Second)
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

func httpOK(ctx context.Context, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func writeKubeconfig(path, server string, c pki) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: server, CertificateAuthority: c.caCert}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificate: c.adminCert, ClientKey: c.adminKey}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "admin", Namespace: "default"}
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

// createNodes registers simulated nodes; kwok (--manage-all-nodes) keeps them Ready and runs
// their pods' lifecycle.
func createNodes(ctx context.Context, cs kubernetes.Interface, n int) error {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("128Gi"),
		corev1.ResourcePods:   resource.MustParse("250"),
	}
	for i := range n {
		name := fmt.Sprintf("kwok-node-%d", i)
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name:        name,
				Labels:      map[string]string{"type": "kwok", "kubernetes.io/hostname": name, "kubernetes.io/os": "linux"},
				Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
			},
			Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
		}
		if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating node %s: %w", name, err)
		}
	}
	return nil
}

func nodeReady(n corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
