package controller

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// TestWatchNamespaces is the operator as OLM starts it for a SingleNamespace or
// MultiNamespace OperatorGroup: WATCH_NAMESPACE lists the target namespaces, and a MyApp
// anywhere else is left alone. It has an API server of its own, so that no operator
// watching all namespaces runs beside it.
func TestWatchNamespaces(t *testing.T) {
	g := NewWithT(t)
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	// A control plane that does not start says why: kube-apiserver's and etcd's own output,
	// which envtest otherwise drops.
	var out bytes.Buffer
	env.ControlPlane.GetAPIServer().Out, env.ControlPlane.GetAPIServer().Err = &out, &out
	restCfg, err := env.Start()
	if err != nil {
		t.Logf("kube-apiserver's output, its last 8 KB:\n%s", tail(out.Bytes(), 8<<10))
	}
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(restCfg, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	for _, ns := range []string{"team-a", "team-b", "elsewhere"} {
		g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	}

	skip := true
	mgr, err := ctrl.NewManager(restCfg, ctrl.Options{
		Scheme:                 scheme,
		Cache:                  CacheOptions(WatchNamespaces("team-a, team-b"), 10*time.Hour),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: &skip},
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect((&MyAppReconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
		Recorder: mgr.GetEventRecorderFor("myapp-operator"), //nolint:staticcheck // core/v1 Events
	}).SetupWithManager(mgr)).To(Succeed())
	go func() { _ = mgr.Start(ctx) }()

	for _, ns := range []string{"team-a", "team-b", "elsewhere"} {
		app := &examplev1.MyApp{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec:       examplev1.MyAppSpec{Image: "nginx:1.27"},
		}
		g.Expect(c.Create(ctx, app)).To(Succeed())
	}

	for _, ns := range []string{"team-a", "team-b"} {
		g.Eventually(func() error {
			return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &appsv1.Deployment{})
		}, 20*time.Second, 100*time.Millisecond).Should(Succeed(), "MyApp in watched namespace %s not reconciled", ns)
	}
	g.Consistently(func(g Gomega) {
		err := c.Get(ctx, client.ObjectKey{Namespace: "elsewhere", Name: "web"}, &appsv1.Deployment{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
		app := &examplev1.MyApp{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "elsewhere", Name: "web"}, app)).To(Succeed())
		g.Expect(app.Status.Conditions).To(BeEmpty())
	}, 3*time.Second, 200*time.Millisecond).Should(Succeed())
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
