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

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/controller"
	"github.com/example/myapp-operator/internal/metricsauth"
)

func main() {
	var (
		metricsAddr, probeAddr, pprofAddr string
		metricsCertPath                   string
		leaderElect, secureMetrics, http2 bool
		leaderElectionNamespace           string
		maxConcurrentReconciles, burst    int
		qps                               float64
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
		"How many MyApps are reconciled at once. See docs/benchmarks.md for how the default was chosen.")
	// 200/400 rather than client-go's 5/10 or 50/100: at N=1000 on envtest the operator
	// settled in 15.2 s at 200/400 against 39.9 s at 50/100 (docs/benchmarks.md).
	flag.Float64Var(&qps, "kube-api-qps", 200,
		"Sustained requests per second to the API server (client-side rate limit).")
	flag.IntVar(&burst, "kube-api-burst", 400,
		"Requests to the API server allowed in a burst above kube-api-qps.")
	logOpts := zap.Options{Development: false}
	logOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&logOpts)))
	log := ctrl.Log.WithName("setup")

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(examplev1.AddToScheme(scheme))

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
		certWatcher, err = certwatcher.New(filepath.Join(metricsCertPath, "tls.crt"), filepath.Join(metricsCertPath, "tls.key"))
		if err != nil {
			log.Error(err, "Unable to load the metrics certificate")
			os.Exit(1)
		}
		metricsOpts.TLSOpts = append(metricsOpts.TLSOpts, func(c *tls.Config) { c.GetCertificate = certWatcher.GetCertificate })
	}

	namespaces := controller.WatchNamespaces(os.Getenv(controller.WatchNamespaceEnv))
	log.Info("Watching namespaces", "namespaces", namespaces, "all", len(namespaces) == 0)
	restConfig := ctrl.GetConfigOrDie()
	restConfig.QPS, restConfig.Burst = float32(qps), burst
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:                        scheme,
		Cache:                         controller.CacheOptions(namespaces),
		Metrics:                       metricsOpts,
		HealthProbeBindAddress:        probeAddr,
		PprofBindAddress:              pprofAddr,
		LeaderElection:                leaderElect,
		LeaderElectionID:              "myapp-operator.example.com",
		LeaderElectionNamespace:       controller.LeaseNamespace(leaderElectionNamespace),
		LeaderElectionReleaseOnCancel: true, // the process exits right after the manager stops
		GracefulShutdownTimeout:       ptr(30 * time.Second),
		// client-go's event correlator remembers the last 4096 event keys, three times over
		// (aggregation, spam filter, logging); at 5,000 MyApps that is about 1 KiB of heap per
		// MyApp (docs/tuning.md). A MyApp gets a few events per change, so 512 keys still
		// aggregate any burst. The manager lives as long as the process, so the deprecation's
		// concern (a broadcaster outliving its manager) does not apply.
		EventBroadcaster: record.NewBroadcaster(record.WithCorrelatorOptions( //nolint:staticcheck // see above
			record.CorrelatorOptions{LRUCacheSize: eventCorrelatorKeys})),
	})
	if err != nil {
		log.Error(err, "Unable to create the manager")
		os.Exit(1)
	}

	if err := (&controller.MyAppReconciler{
		Client:                  mgr.GetClient(),
		APIReader:               mgr.GetAPIReader(),
		Recorder:                mgr.GetEventRecorderFor("myapp-operator"), //nolint:staticcheck // core/v1 Events, see MyAppReconciler.Recorder,
		MaxConcurrentReconciles: maxConcurrentReconciles,
		WatchNamespaces:         namespaces,
	}).SetupWithManager(mgr); err != nil {
		log.Error(err, "Unable to set up the MyApp controller")
		os.Exit(1)
	}
	if certWatcher != nil {
		utilruntime.Must(mgr.Add(certWatcher))
	}
	utilruntime.Must(mgr.AddHealthzCheck("healthz", healthz.Ping))
	utilruntime.Must(mgr.AddReadyzCheck("readyz", healthz.Ping))

	log.Info("Starting the manager")
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "The manager stopped with an error")
		os.Exit(1)
	}
}

func ptr[T any](v T) *T { return &v }

// eventCorrelatorKeys is how many recent event keys the event correlator remembers.
const eventCorrelatorKeys = 512
