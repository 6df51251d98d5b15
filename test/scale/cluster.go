package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

var scheme = runtime.NewScheme()

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(examplev1.AddToScheme(scheme))
}

// serviceCIDR leaves room for a million Services; envtest's default /24 holds 256.
const serviceCIDR = "10.96.0.0/12"

// cluster is one fresh kube-apiserver and etcd with the MyApp CRD installed.
type cluster struct {
	env        *envtest.Environment
	admin      client.Client
	adminCfg   *rest.Config
	kubeconfig string // the manager's own user, written for its --kubeconfig
	version    string
	cpu        *cpuMeter // the API server, etcd and this program; the manager once it runs
}

func startCluster(dir string) (*cluster, error) {
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	env.ControlPlane.GetAPIServer().Configure().Set("service-cluster-ip-range", serviceCIDR)
	if _, err := env.Start(); err != nil {
		return nil, fmt.Errorf("starting envtest (is KUBEBUILDER_ASSETS set? `make bench-scale` sets it): %w", err)
	}
	c := &cluster{env: env}
	if err := c.setUp(dir); err != nil {
		_ = env.Stop()
		return nil, err
	}
	if err := c.findProcesses(); err != nil {
		_ = env.Stop()
		return nil, err
	}
	return c, nil
}

func (c *cluster) setUp(dir string) error {
	// The benchmark talks as one admin, the manager as another, as it would in a cluster.
	admin, err := c.env.AddUser(envtest.User{Name: "bench-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return err
	}
	c.adminCfg = rest.CopyConfig(admin.Config())
	c.adminCfg.QPS = -1 // no client-side throttling: the API server is what is measured
	if c.admin, err = client.New(c.adminCfg, client.Options{Scheme: scheme}); err != nil {
		return err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(c.adminCfg)
	if err != nil {
		return err
	}
	v, err := dc.ServerVersion()
	if err != nil {
		return fmt.Errorf("reading the API server's version: %w", err)
	}
	c.version = v.GitVersion

	op, err := c.env.AddUser(envtest.User{Name: "myapp-operator", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return err
	}
	kc, err := op.KubeConfig()
	if err != nil {
		return err
	}
	c.kubeconfig = filepath.Join(dir, "manager.kubeconfig")
	return os.WriteFile(c.kubeconfig, kc, 0o600)
}

// findProcesses finds the kube-apiserver and etcd of this envtest by the ports they serve.
func (c *cluster) findProcesses() error {
	u, err := url.Parse(c.env.Config.Host)
	if err != nil {
		return err
	}
	apiserver, err := findProcess("--secure-port=" + u.Port())
	if err != nil {
		return fmt.Errorf("finding the kube-apiserver: %w", err)
	}
	etcd, err := findProcess("--listen-client-urls=" + c.env.ControlPlane.Etcd.URL.String())
	if err != nil {
		return fmt.Errorf("finding etcd: %w", err)
	}
	c.cpu = &cpuMeter{pids: map[string]int{procAPIServer: apiserver, procEtcd: etcd, procBench: os.Getpid()}}
	return nil
}

// timed runs phase and returns its wall time and the CPU time each process used meanwhile.
func (c *cluster) timed(phase func() error) (time.Duration, cpuTimes, error) {
	before, err := c.cpu.read()
	if err != nil {
		return 0, nil, err
	}
	start := time.Now()
	if err := phase(); err != nil {
		return 0, nil, err
	}
	wall := time.Since(start)
	after, err := c.cpu.read()
	if err != nil {
		return 0, nil, err
	}
	return wall, after.since(before), nil
}

func (c *cluster) createNamespace(ctx context.Context, name string) error {
	return createNamespace(ctx, c.admin, name)
}

func createNamespace(ctx context.Context, c client.Client, name string) error {
	return c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
}

func (c *cluster) stop() error { return c.env.Stop() }
