// Command manager runs the MyApp operator: flags and wiring only. What it reconciles lives in
// internal/controller.
package main

import (
	"crypto/tls"
	"flag"
	"os"
	"path/filepath"
	"time"

	// Client auth plugins (OIDC, exec, ...) for running against any kubeconfig.
	_ "k8s.io/client-go/plugin/pkg/client/auth"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/analysis"
	"github.com/example/myapp-operator/internal/controller"
	"github.com/example/myapp-operator/internal/desired"
	"github.com/example/myapp-operator/internal/events"
	"github.com/example/myapp-operator/internal/health"
	"github.com/example/myapp-operator/internal/hostclaims"
	"github.com/example/myapp-operator/internal/metrics"
	"github.com/example/myapp-operator/internal/metricsauth"
	"github.com/example/myapp-operator/internal/status"
)

func main() {
	var (
		metricsAddr, probeAddr, pprofAddr string
		metricsCertPath                   string
		leaderElect, secureMetrics, http2 bool
		leaderElectionNamespace           string
		maxConcurrentReconciles, burst    int
		qps                               float64
		syncPeriod                        time.Duration
		leaseDuration, renewDeadline      time.Duration
		retryPeriod                       time.Duration
		rolloutFailureGrace               time.Duration
		exposeGateway, exposeIngressClass string
		canaryPrometheus, hostSuffixes    string
	)
	flag.StringVar(&metricsAddr, "metrics-bind-address", "0",
		"Address of the metrics endpoint, e.g. :8443; 0 disables it.")
	flag.BoolVar(&secureMetrics, "metrics-secure", true,
		"Serve metrics over HTTPS, only to clients the API server authenticates and authorizes.")
	flag.StringVar(&metricsCertPath, "metrics-cert-path", "",
		"Folder with tls.crt and tls.key for the metrics endpoint; empty uses a self-signed certificate.")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081",
		"Address of the /healthz and /readyz endpoints; 0 disables them.")
	flag.BoolVar(&leaderElect, "leader-elect", false,
		"Elect a leader, so that of several replicas only one reconciles.")
	flag.StringVar(&leaderElectionNamespace, "leader-election-namespace", "",
		"Namespace of the leader election Lease; default: $POD_NAMESPACE, else the service account's namespace in a cluster.")
	flag.StringVar(&pprofAddr, "pprof-bind-address", "0",
		"Address of the Go profiler (/debug/pprof/); 0 disables it. Serves without authentication: bind it to localhost.")
	flag.BoolVar(&http2, "enable-http2", false,
		"Serve metrics over HTTP/2 too (off by default: HTTP/2 rapid reset, CVE-2023-44487).")
	flag.IntVar(&maxConcurrentReconciles, "max-concurrent-reconciles", 4,
		"How many MyApps are reconciled at once.")
	// A polite client of a shared API server, as cert-manager's defaults (20/50): at steady
	// state the operator sends nothing, so the limit only paces bursts such as many MyApps
	// created at once. docs/operations/manager.md says what to raise for large fleets.
	flag.Float64Var(&qps, "kube-api-qps", 20,
		"Sustained requests per second to the API server, per resource kind (client-side rate limit).")
	flag.IntVar(&burst, "kube-api-burst", 50,
		"Requests to the API server allowed in a burst above kube-api-qps, per resource kind.")
	flag.DurationVar(&syncPeriod, "sync-period", 10*time.Minute,
		"How often every MyApp is reconciled again with no event: the safety net for a change the watches missed. "+
			"A reconcile with nothing to do sends no request.")
	// cluster-api's defaults: a leader rides out an API server outage of up to the renew
	// deadline without restarting, where controller-runtime's 15 s / 10 s would restart it.
	flag.DurationVar(&leaseDuration, "leader-elect-lease-duration", time.Minute,
		"How long a standby waits after the leader's last renewal before taking the lease.")
	flag.DurationVar(&renewDeadline, "leader-elect-renew-deadline", 40*time.Second,
		"How long the leader keeps trying to renew its lease before giving up leadership (and exiting).")
	flag.DurationVar(&retryPeriod, "leader-elect-retry-period", 5*time.Second,
		"How often the leader renews, and a standby tries to acquire, the lease.")
	flag.DurationVar(&rolloutFailureGrace, "rollout-failure-grace", status.DefaultRolloutFailureGrace,
		"How long a problem of the pods of a new pod template (an image that cannot be pulled, a missing "+
			"ConfigMap, a crash loop) must last, from when the operator first saw it, before it rolls the rollout back.")
	flag.StringVar(&exposeGateway, "expose-gateway", "",
		"The Gateway, as namespace/name or namespace/name/listener, that a MyApp's spec.expose attaches an HTTPRoute to "+
			"when it names neither a gateway nor an ingressClassName. Empty: such MyApps get an Ingress.")
	flag.StringVar(&exposeIngressClass, "expose-ingress-class", "",
		"The IngressClass of the Ingress of a MyApp's spec.expose that names neither a gateway nor an ingressClassName, "+
			"when --expose-gateway is empty. Empty: the cluster's default IngressClass.")
	flag.StringVar(&canaryPrometheus, "canary-prometheus-url", "",
		"The Prometheus (http://host:port) that evaluates the metric checks of canary releases "+
			"(spec.canary.analysis.metrics). Empty: a MyApp with metric checks starts no canary (CanaryAnalysisUnavailable).")
	// The environment variable is the flag's default so that OLM installs, whose Subscription
	// sets the manager's environment but not its arguments, can restrict hosts too.
	flag.StringVar(&hostSuffixes, "expose-host-suffixes", os.Getenv("EXPOSE_HOST_SUFFIXES"),
		"The host suffixes each namespace may claim in spec.expose.hosts, as <namespace>=<suffix>[;<suffix>...][,...]; "+
			"the namespace * stands for those not named, and <namespace>= allows none. Empty (the default, or "+
			"$EXPOSE_HOST_SUFFIXES): any namespace may claim any host.")
	logOpts := zap.Options{Development: false}
	logOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&logOpts)))
	log := ctrl.Log.WithName("setup")

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(examplev1.AddToScheme(scheme))
	utilruntime.Must(gatewayv1.Install(scheme))
	utilruntime.Must(monitoringv1.AddToScheme(scheme))
	utilruntime.Must(cmv1.AddToScheme(scheme))
	gateway, err := controller.ParseGateway(exposeGateway)
	if err != nil {
		log.Error(err, "Invalid --expose-gateway")
		os.Exit(1)
	}
	ingressClass, err := controller.ParseIngressClass(exposeIngressClass)
	if err != nil {
		log.Error(err, "Invalid --expose-ingress-class")
		os.Exit(1)
	}
	suffixes, err := hostclaims.ParseSuffixes(hostSuffixes)
	if err != nil {
		log.Error(err, "Invalid --expose-host-suffixes")
		os.Exit(1)
	}
	var canaryAnalysis analysis.Querier
	if canaryPrometheus != "" {
		prom, err := analysis.NewPrometheus(canaryPrometheus, canaryQueryTimeout)
		if err != nil {
			log.Error(err, "Invalid --canary-prometheus-url")
			os.Exit(1)
		}
		canaryAnalysis = prom
	}

	var tlsOpts []func(*tls.Config)
	if !http2 {
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}
	metricsOpts := metricsserver.Options{BindAddress: metricsAddr, SecureServing: secureMetrics, TLSOpts: tlsOpts}
	if secureMetrics {
		metricsOpts.FilterProvider = metricsauth.WithAuthenticationAndAuthorization
	}
	var certWatcher *certwatcher.CertWatcher
	if metricsCertPath != "" {
		var err error
		certWatcher, err = certwatcher.New(
			filepath.Join(metricsCertPath, "tls.crt"), filepath.Join(metricsCertPath, "tls.key"))
		if err != nil {
			log.Error(err, "Unable to load the metrics certificate")
			os.Exit(1)
		}
		metricsOpts.TLSOpts = append(metricsOpts.TLSOpts,
			func(c *tls.Config) { c.GetCertificate = certWatcher.GetCertificate })
	}

	namespaces := controller.WatchNamespaces(os.Getenv(controller.WatchNamespaceEnv))
	log.Info("Watching namespaces", "namespaces", namespaces, "all", len(namespaces) == 0)
	restConfig := ctrl.GetConfigOrDie()
	restConfig.QPS, restConfig.Burst = float32(qps), burst
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:                        scheme,
		Cache:                         controller.CacheOptions(namespaces, syncPeriod),
		Metrics:                       metricsOpts,
		HealthProbeBindAddress:        probeAddr,
		PprofBindAddress:              pprofAddr,
		LeaderElection:                leaderElect,
		LeaderElectionID:              "myapp-operator.example.com",
		LeaderElectionNamespace:       controller.LeaseNamespace(leaderElectionNamespace),
		LeaderElectionReleaseOnCancel: true, // the process exits right after the manager stops
		LeaseDuration:                 &leaseDuration,
		RenewDeadline:                 &renewDeadline,
		RetryPeriod:                   &retryPeriod,
		GracefulShutdownTimeout:       ptr(30 * time.Second),
	})
	if err != nil {
		log.Error(err, "Unable to create the manager")
		os.Exit(1)
	}

	recorder, err := newEventRecorder(mgr, scheme)
	if err != nil {
		log.Error(err, "Unable to set up the event recorder")
		os.Exit(1)
	}
	if err := (&controller.MyAppReconciler{
		Client:                  mgr.GetClient(),
		APIReader:               mgr.GetAPIReader(),
		Recorder:                recorder,
		MaxConcurrentReconciles: maxConcurrentReconciles,
		WatchNamespaces:         namespaces,
		Metrics:                 metrics.New().MustRegisterWithControllerRuntime(),
		RolloutFailureGrace:     rolloutFailureGrace,
		ExposeDefaults:          desired.ExposeDefaults{Gateway: gateway, IngressClassName: ingressClass},
		CanaryAnalysis:          canaryAnalysis,
		HostSuffixes:            suffixes,
	}).SetupWithManager(mgr); err != nil {
		log.Error(err, "Unable to set up the MyApp controller")
		os.Exit(1)
	}
	if err := (&controller.AdmissionPolicyReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		log.Error(err, "Unable to set up the admission policy controller")
		os.Exit(1)
	}
	if certWatcher != nil {
		utilruntime.Must(mgr.Add(certWatcher))
	}
	utilruntime.Must(mgr.AddHealthzCheck("healthz", healthz.Ping))
	// Ready once every informer has listed its kind: a replica whose cache cannot sync
	// reconciles nothing.
	utilruntime.Must(mgr.AddReadyzCheck("cache-synced", health.CacheSynced(mgr.GetCache(), 200*time.Millisecond)))

	log.Info("Starting the manager")
	startErr := mgr.Start(ctrl.SetupSignalHandler())
	// The reconciles have ended; the events they recorded last may still be queued.
	if err := recorder.Shutdown(eventFlushTimeout); err != nil {
		log.Error(err, "Some events may be lost")
	}
	if startErr != nil {
		log.Error(startErr, "The manager stopped with an error")
		os.Exit(1)
	}
}

func ptr[T any](v T) *T { return &v }

// eventCorrelatorKeys is how many recent event keys the MyApp recorder's correlator
// remembers. client-go's default, 4096 keys kept three times over (aggregation, spam filter,
// logging), grows the heap with the number of MyApps (docs/performance/tuning.md); a MyApp
// gets a few events per change, so 512 keys still aggregate any burst.
const eventCorrelatorKeys = 512

// eventFlushTimeout bounds how long the process waits, once the manager has stopped, for the
// events still queued to be written (internal/events): long enough for the last reconciles'
// few events, short enough that an API server that does not answer never holds up the exit.
// With GracefulShutdownTimeout it must fit in the pod's terminationGracePeriodSeconds.
const eventFlushTimeout = 5 * time.Second

// newEventRecorder records core/v1 Events on MyApps (what kubectl describe shows, and what
// OLM's bundle checks accept RBAC for) through a broadcaster of its own with a smaller
// correlator. It is not the manager's EventBroadcaster option: the manager hands that one to
// leader election as well, and each user starts its own sink on it, which writes every
// event twice. Leader election keeps the manager's own broadcaster.
func newEventRecorder(mgr ctrl.Manager, scheme *runtime.Scheme) (*events.Recorder, error) {
	cs, err := kubernetes.NewForConfigAndClient(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return nil, err
	}
	return events.NewRecorder(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")}, scheme, "myapp-operator",
		record.CorrelatorOptions{LRUCacheSize: eventCorrelatorKeys}, ctrl.Log.WithName("events")), nil
}

// canaryQueryTimeout bounds one PromQL query of a canary's metric check: a reconcile waits for
// it, and a Prometheus that does not answer in time is a measurement that cannot be taken.
const canaryQueryTimeout = 10 * time.Second
