package controller

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
	"github.com/example/myapp-operator/internal/hostclaims"
	"github.com/example/myapp-operator/internal/metrics"
)

// The suite runs the reconciler in a real manager against a real kube-apiserver and etcd
// (envtest). There is no controller manager: tests play the deployment controller by
// writing Deployment status through the status subresource.

var (
	testEnv   *envtest.Environment
	cfg       *rest.Config
	k8s       client.Client // uncached, so tests see exactly what the API server holds
	k8sWatch  client.WithWatch
	scheme    = runtime.NewScheme()
	suiteCtx  context.Context
	cancelAll context.CancelFunc
	// managerStopped is closed once the suite's manager has stopped.
	managerStopped <-chan struct{}
)

// unwatched keeps out of the manager's sight the MyApps labelled unwatchedLabel.
var unwatched = func() labels.Selector {
	sel, err := labels.Parse("!" + unwatchedLabel)
	utilruntime.Must(err)
	return sel
}()

const unwatchedLabel = "stories.example.com/unwatched"

// resyncPeriod is short so that the steady-state story sees several resyncs in its window.
const resyncPeriod = 2 * time.Second

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(examplev1.AddToScheme(scheme))
	utilruntime.Must(gatewayv1.Install(scheme))
	utilruntime.Must(monitoringv1.AddToScheme(scheme))
	utilruntime.Must(cmv1.AddToScheme(scheme))
}

func TestControllers(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Controller suite")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	SetDefaultEventuallyTimeout(20 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		Fail("KUBEBUILDER_ASSETS is not set: run the tests with `make test`, which builds kube-apiserver and etcd")
	}

	testEnv = &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		// kube-apiserver's graceful shutdown waits for requests in flight, up to its own limit
		// of a minute; envtest's 20 s default can stop a suite whose specs all passed.
		ControlPlaneStopTimeout: time.Minute,
	}
	var err error
	// envtest's kube-apiserver and etcd get no parent-death signal: `localcluster sweep` stops them by MYAPP_OPERATOR_RUN.
	cfg, err = testEnv.Start()
	Expect(err).NotTo(HaveOccurred())
	k8s, err = client.New(cfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	k8sWatch, err = client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())

	suiteCtx, cancelAll = context.WithCancel(context.Background())
	managerStopped = runManager(suiteCtx, managerOptions{requests: &managerRequests, metrics: suiteMetrics})
})

var _ = AfterSuite(func() {
	if cancelAll != nil {
		cancelAll()
	}
	if managerStopped != nil {
		// No request of the manager's is in flight when the API server is asked to stop.
		Eventually(managerStopped).WithTimeout(time.Minute).Should(BeClosed())
	}
	if testEnv != nil {
		Expect(testEnv.Stop()).To(Succeed())
	}
})

// managerOptions set what a story's manager differs in from the suite's.
type managerOptions struct {
	// namespaces the manager watches (all when nil).
	namespaces []string
	// requests counts the manager's requests, when set.
	requests *requestCounter
	// myApps selects the MyApps the manager sees; by default those not labelled unwatched.
	myApps labels.Selector
	// now is the reconciler's clock (time.Now when nil).
	now func() time.Time
	// syncPeriod is the cache's resync period (resyncPeriod when 0).
	syncPeriod time.Duration
	// metrics, when set, is where the reconciler's per-MyApp metrics are registered.
	metrics prometheus.Registerer
	// exposeDefaults are the manager's --expose-gateway and --expose-ingress-class.
	exposeDefaults desired.ExposeDefaults
	// config is who the manager runs as (the suite's administrator when nil).
	config *rest.Config
	// grace is the reconciler's RolloutFailureGrace (a second when 0).
	grace time.Duration
	// hostSuffixes are the manager's --expose-host-suffixes.
	hostSuffixes hostclaims.Suffixes
	// wrap, when set, wraps the manager's transport to the API server: a story's stand-in for
	// a request the API server does not answer.
	wrap func(http.RoundTripper) http.RoundTripper
}

// startManager runs the reconciler as cmd/main.go wires it, for the spec, and returns what
// stops it: stop cancels it and waits until it has stopped, as a manager killed between two of
// its writes would have. The spec's cleanup stops it too, so that whatever the manager reports
// is reported by the spec that ran it, not by a later one.
func startManager(opts managerOptions) (stop func()) {
	GinkgoHelper()
	ctx, cancel := context.WithCancel(suiteCtx)
	stopped := runManager(ctx, opts)
	stop = func() {
		cancel()
		Eventually(stopped).WithTimeout(time.Minute).Should(BeClosed(), "the manager stops within a minute")
	}
	DeferCleanup(stop)
	return stop
}

// runManager runs the reconciler as cmd/main.go wires it until ctx ends; the channel it
// returns is closed once the manager has stopped.
func runManager(ctx context.Context, opts managerOptions) <-chan struct{} {
	skip := true
	mgrCfg := rest.CopyConfig(cfg)
	if opts.config != nil {
		mgrCfg = rest.CopyConfig(opts.config)
	}
	if opts.requests != nil {
		mgrCfg.Wrap(opts.requests.wrap)
	}
	if opts.wrap != nil {
		mgrCfg.Wrap(opts.wrap)
	}
	if opts.syncPeriod == 0 {
		opts.syncPeriod = resyncPeriod
	}
	if opts.grace == 0 {
		// The stories' pods fail from their first status: a short grace keeps them quick;
		// internal/rollout tests the grace itself.
		opts.grace = time.Second
	}
	cacheOpts := CacheOptions(opts.namespaces, opts.syncPeriod)
	// A story that must set the scene before the operator looks labels its MyApp unwatched.
	myApps := opts.myApps
	if myApps == nil {
		myApps = unwatched
	}
	// ByObject is keyed by pointer: the MyApp's entry of CacheOptions must go, or the cache
	// would hold two entries for the kind and use either, at random.
	for obj := range cacheOpts.ByObject {
		if _, ok := obj.(*examplev1.MyApp); ok {
			delete(cacheOpts.ByObject, obj)
		}
	}
	cacheOpts.ByObject[&examplev1.MyApp{}] = cache.ByObject{Label: myApps, Transform: trimMyApp}
	mgr, err := ctrl.NewManager(mgrCfg, ctrl.Options{
		Scheme:                 scheme,
		Cache:                  cacheOpts,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: &skip},
	})
	Expect(err).NotTo(HaveOccurred())
	Expect((&MyAppReconciler{
		Client:                  mgr.GetClient(),
		APIReader:               mgr.GetAPIReader(),
		Recorder:                mgr.GetEventRecorderFor("myapp-operator"), //nolint:staticcheck // core/v1 Events, see MyAppReconciler.Recorder,
		MaxConcurrentReconciles: 4,
		WatchNamespaces:         opts.namespaces,
		Now:                     opts.now,
		Metrics:                 myAppMetrics(opts.metrics),
		RolloutFailureGrace:     opts.grace,
		ExposeDefaults:          opts.exposeDefaults,
		HostSuffixes:            opts.hostSuffixes,
	}).SetupWithManager(mgr)).To(Succeed())
	stopped := make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(stopped)
		err := mgr.Start(ctx)
		if err != nil && ctx.Err() != nil && strings.Contains(err.Error(), "caches to sync") {
			// A story that ends within moments of starting its manager stops it before its
			// caches synced: controller-runtime then reports the sync it abandoned.
			GinkgoWriter.Printf("The manager stopped before its caches synced: %v\n", err)
			return
		}
		Expect(err).NotTo(HaveOccurred(), "the manager for the MyApps labelled %v", opts.myApps)
	}()
	return stopped
}

// suiteMetrics is the registry of the suite's manager's per-MyApp metrics.
var suiteMetrics = prometheus.NewPedanticRegistry()

// myAppMetrics makes the per-MyApp metrics registered in reg, or none without a registry.
func myAppMetrics(reg prometheus.Registerer) *metrics.MyApps {
	if reg == nil {
		return nil
	}
	m := metrics.New()
	Expect(m.Register(reg)).To(Succeed())
	return m
}
