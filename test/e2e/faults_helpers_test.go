package e2e

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
	"github.com/example/myapp-operator/internal/testutil"
)

// operatorConfig says how a fault story runs the manager.
type operatorConfig struct {
	// kubeconfig replaces the cluster's, e.g. one that goes through a proxy the test can cut.
	kubeconfig string
	// noLeaderElection runs the manager alone, without a lease: a story that takes the API
	// server away for longer than the renew deadline would otherwise see the process exit
	// (which the leader election story proves), not reconnect.
	noLeaderElection bool
	// probes serves /healthz and /readyz on a free loopback port.
	probes bool
	// defaultLease runs leader election with the manager's defaults (1 min / 40 s / 5 s).
	// Otherwise the suite's operators use a 15 s lease renewed within 10 s, retried every 2 s,
	// so that a standby taking over from a killed leader waits 15 s, not a minute.
	defaultLease bool
}

// startOperatorWith runs the manager with leader election (unless cfg says otherwise) and its
// metrics served in plain HTTP on a free loopback port, configured as cfg says.
func startOperatorWith(name string, cfg operatorConfig) *operator {
	addr, err := testutil.FreeLoopbackAddr()
	Expect(err).NotTo(HaveOccurred())
	kc := kubeconfig
	if cfg.kubeconfig != "" {
		kc = cfg.kubeconfig
	}
	args := []string{"--metrics-bind-address=" + addr, "--metrics-secure=false", "--health-probe-bind-address=0"}
	probeAddr := ""
	if cfg.probes {
		probeAddr, err = testutil.FreeLoopbackAddr()
		Expect(err).NotTo(HaveOccurred())
		args[2] = "--health-probe-bind-address=" + probeAddr
	}
	if !cfg.noLeaderElection {
		args = append(args, "--leader-elect", "--leader-election-namespace=default")
	}
	if !cfg.noLeaderElection && !cfg.defaultLease {
		args = append(args, shortLeaseFlags...)
	}
	p, err := testutil.StartProcess(name, filepath.Join(logDir, "e2e-"+name+".log"), managerBin,
		[]string{"KUBECONFIG=" + kc}, args...)
	Expect(err).NotTo(HaveOccurred())
	o := &operator{Process: p, metrics: "http://" + addr + "/metrics"}
	DeferCleanup(func() { o.stop(syscall.SIGTERM) })
	GinkgoWriter.Printf("started operator %s (pid %d), log %s\n", name, p.Pid(), p.Log)
	if probeAddr != "" {
		probeURLs[o] = "http://" + probeAddr
	}
	return o
}

// shortLeaseFlags give the suite's operators a 15 s lease, renewed within 10 s, retried every
// 2 s, so that a standby taking over from a killed leader waits 15 s, not the default minute.
var shortLeaseFlags = []string{"--leader-elect-lease-duration=" + leaseDuration.String(),
	"--leader-elect-renew-deadline=10s", "--leader-elect-retry-period=2s"}

// probeURLs holds the probe address of operators started with probes.
var probeURLs = map[*operator]string{}

// probe answers the status code of one of the operator's probe endpoints.
func (o *operator) probe(g Gomega, path string) int {
	base, ok := probeURLs[o]
	g.Expect(ok).To(BeTrue(), "operator %s was started without probes", o.Name)
	resp, err := http.Get(base + path)
	g.Expect(err).NotTo(HaveOccurred(), "probing %s%s", base, path)
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// running tells whether the operator's process has not exited.
func (o *operator) running() bool {
	select {
	case <-o.Exited():
		return false
	default:
		return true
	}
}

// workersStarted tells whether the operator's controller runs its workers (its caches synced).
func (o *operator) workersStarted() bool { return o.logContains("Starting workers") }

// scrapeReconciles is reconciles for use inside Eventually: a failed scrape fails the attempt.
func (o *operator) scrapeReconciles(g Gomega) float64 {
	resp, err := http.Get(o.metrics)
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
	total, seen := 0.0, false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		seen = seen || strings.HasPrefix(line, "rest_client_requests_total")
		if strings.HasPrefix(line, "controller_runtime_reconcile_total{") && strings.Contains(line, `controller="myapp"`) {
			fields := strings.Fields(line)
			v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
			g.Expect(err).NotTo(HaveOccurred())
			total += v
		}
	}
	g.Expect(sc.Err()).NotTo(HaveOccurred())
	g.Expect(seen).To(BeTrue(), "the metrics endpoint answered without the manager's metrics")
	return total
}

// expectNoPanic fails when the operator's log shows a panic or a fatal Go runtime error.
func (o *operator) expectNoPanic() {
	b, err := os.ReadFile(o.Log)
	Expect(err).NotTo(HaveOccurred())
	Expect(string(b)).NotTo(ContainSubstring("panic:"), "operator %s panicked, see %s", o.Name, o.Log)
	Expect(string(b)).NotTo(ContainSubstring("Observed a panic"), "operator %s panicked, see %s", o.Name, o.Log)
	Expect(string(b)).NotTo(ContainSubstring("fatal error:"), "operator %s crashed, see %s", o.Name, o.Log)
}

// restartComponent stops a control plane component of the local cluster and starts it again
// in place (localcluster restart), returning once it serves again.
func restartComponent(name string) {
	bin := os.Getenv("E2E_LOCALCLUSTER")
	Expect(bin).NotTo(BeEmpty(), "E2E_LOCALCLUSTER is not set: run `make test-e2e`")
	began := time.Now()
	// It waits for the component for up to 3 minutes: it dies with the suite (what it starts is
	// the cluster's, which outlives it by design and which make's down stops).
	var out bytes.Buffer
	cmd := exec.Command(bin, "--state", filepath.Dir(kubeconfig), "--timeout", "3m", "restart", name)
	cmd.Stdout, cmd.Stderr = &out, &out
	Expect(testutil.RunWithParent(cmd)).To(Succeed(), "localcluster restart %s: %s", name, out.String())
	AddReportEntry("restart of "+name, time.Since(began).Round(100*time.Millisecond).String())
	GinkgoWriter.Printf("restarted %s in %s\n", name, time.Since(began).Round(100*time.Millisecond))
}

// createMyApp creates a MyApp, retrying while the API server is away; a create whose answer
// was lost and that then meets its own object counts as done.
func createMyApp(app *examplev1.MyApp) {
	Eventually(func(g Gomega) {
		err := k8s.Create(ctx, app.DeepCopy())
		if apierrors.IsAlreadyExists(err) {
			return
		}
		g.Expect(err).NotTo(HaveOccurred())
	}).WithTimeout(3 * time.Minute).Should(Succeed())
}

// myAppSpec builds an unsaved MyApp; every third asks for a disruption budget and every
// fourth for an autoscaler, so that each kind of child is counted.
func myAppSpec(ns, name string, i int) *examplev1.MyApp {
	app := &examplev1.MyApp{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       examplev1.MyAppSpec{Image: "nginx:1.27", Replicas: ptr(int32(1))},
	}
	if i%3 == 0 {
		one := intstr.FromInt32(1)
		app.Spec.PodDisruptionBudget = &examplev1.PodDisruptionBudgetSpec{MaxUnavailable: &one}
	}
	if i%4 == 0 {
		app.Spec.AutoScaling = &examplev1.AutoScalingSpec{Enabled: true, MinReplicas: ptr(int32(1)), MaxReplicas: ptr(int32(2))}
	}
	return app
}

// expectExactChildren checks every MyApp of the namespace, and that nothing else is there:
// each has Ready true for its current generation, exactly one Deployment and Service, an
// autoscaler and a budget exactly when its spec asks, all controlled by it and carrying its
// spec (image, replica count when not autoscaled, port); no child of a MyApp that is gone.
func expectExactChildren(g Gomega, ns string) { checkChildren(g, ns, true) }

// expectConverged is expectExactChildren without asking the pods to be ready: each MyApp's
// status is current and reports the ready replicas its Deployment has. After an etcd
// restart the node lifecycle controller can mark the simulated nodes' pods NotReady (their
// heartbeats failed meanwhile), and kwok never makes such a pod ready again: that is the
// local cluster's limit, not the operator's, whose job is then to report it honestly.
func expectConverged(g Gomega, ns string) { checkChildren(g, ns, false) }

func checkChildren(g Gomega, ns string, wantReady bool) {
	apps := &examplev1.MyAppList{}
	g.Expect(k8s.List(ctx, apps, client.InNamespace(ns))).To(Succeed())
	byUID := map[types.UID]*examplev1.MyApp{}
	for i := range apps.Items {
		a := &apps.Items[i]
		byUID[a.UID] = a
	}
	owned := func(kind string, o client.Object) *examplev1.MyApp {
		ref := metav1.GetControllerOf(o)
		g.Expect(ref).NotTo(BeNil(), "%s %s has no controller", kind, o.GetName())
		a, ok := byUID[ref.UID]
		g.Expect(ok).To(BeTrue(), "%s %s is an orphan (its MyApp is gone)", kind, o.GetName())
		g.Expect(o.GetName()).To(Equal(a.Name), "%s %s", kind, o.GetName())
		return a
	}
	counts := map[string]map[string]int{}
	count := func(kind, name string) {
		if counts[kind] == nil {
			counts[kind] = map[string]int{}
		}
		counts[kind][name]++
	}

	deployments := &appsv1.DeploymentList{}
	g.Expect(k8s.List(ctx, deployments, client.InNamespace(ns))).To(Succeed())
	for i := range deployments.Items {
		d := &deployments.Items[i]
		a := owned("Deployment", d)
		count("Deployment", a.Name)
		g.Expect(d.Spec.Template.Spec.Containers).NotTo(BeEmpty())
		c := d.Spec.Template.Spec.Containers[0]
		g.Expect(c.Name).To(Equal(desired.ContainerName))
		g.Expect(c.Image).To(Equal(a.Spec.Image), "Deployment %s image", d.Name)
		if !desired.AutoscalingEnabled(a) {
			g.Expect(d.Spec.Replicas).To(HaveValue(Equal(*a.Spec.Replicas)), "Deployment %s replicas", d.Name)
		}
		g.Expect(d.Status.ObservedGeneration).To(Equal(d.Generation), "Deployment %s rolled out", d.Name)
		g.Expect(a.Status.ReadyReplicas).To(Equal(d.Status.ReadyReplicas), "MyApp %s reports its Deployment's ready replicas", a.Name)
	}
	services := &corev1.ServiceList{}
	g.Expect(k8s.List(ctx, services, client.InNamespace(ns))).To(Succeed())
	for i := range services.Items {
		s := &services.Items[i]
		a := owned("Service", s)
		count("Service", a.Name)
		g.Expect(s.Spec.Ports).To(ContainElement(HaveField("Name", desired.PortName)), "Service %s", s.Name)
	}
	hpas := &autoscalingv2.HorizontalPodAutoscalerList{}
	g.Expect(k8s.List(ctx, hpas, client.InNamespace(ns))).To(Succeed())
	for i := range hpas.Items {
		count("HorizontalPodAutoscaler", owned("HorizontalPodAutoscaler", &hpas.Items[i]).Name)
	}
	pdbs := &policyv1.PodDisruptionBudgetList{}
	g.Expect(k8s.List(ctx, pdbs, client.InNamespace(ns))).To(Succeed())
	for i := range pdbs.Items {
		count("PodDisruptionBudget", owned("PodDisruptionBudget", &pdbs.Items[i]).Name)
	}
	for _, a := range apps.Items {
		g.Expect(counts["Deployment"][a.Name]).To(Equal(1), "Deployments of %s", a.Name)
		g.Expect(counts["Service"][a.Name]).To(Equal(1), "Services of %s", a.Name)
		wantHPA, wantPDB := 0, 0
		if desired.AutoscalingEnabled(&a) {
			wantHPA = 1
		}
		if b, err := desired.PodDisruptionBudget(&a, false); err == nil && b != nil {
			wantPDB = 1
		}
		g.Expect(counts["HorizontalPodAutoscaler"][a.Name]).To(Equal(wantHPA), "autoscalers of %s", a.Name)
		g.Expect(counts["PodDisruptionBudget"][a.Name]).To(Equal(wantPDB), "disruption budgets of %s", a.Name)
	}
	// Status last, so that a duplicate or an orphan is what a failure names first.
	for i := range apps.Items {
		a := &apps.Items[i]
		ready := conditionOf(a, examplev1.ConditionReady)
		if wantReady {
			g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "%s Ready: %s: %s", a.Name, ready.Reason, ready.Message)
		}
		g.Expect(ready.ObservedGeneration).To(Equal(a.Generation), a.Name)
		g.Expect(a.Status.ObservedGeneration).To(Equal(a.Generation), a.Name)
	}
}

// writeKubeconfigVia writes a copy of the cluster's kubeconfig whose server is addr (a proxy
// on loopback; the API server's certificate is for 127.0.0.1 whatever the port).
func writeKubeconfigVia(addr string) (path, apiAddr string) {
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	for _, c := range cfg.Clusters {
		host := strings.TrimPrefix(c.Server, "https://")
		Expect(apiAddr == "" || apiAddr == host).To(BeTrue(), "one API server")
		apiAddr = host
		c.Server = "https://" + addr
	}
	path = filepath.Join(GinkgoT().TempDir(), "kubeconfig-via-proxy")
	Expect(clientcmd.WriteToFile(*cfg, path)).To(Succeed())
	return path, apiAddr
}

// tcpProxy forwards loopback connections to a target until it is cut: then it closes every
// connection it carries and refuses new ones, as an API server that became unreachable. A
// stall does the same for a while, then forwards again.
type tcpProxy struct {
	l       net.Listener
	target  string
	mu      sync.Mutex
	conns   []net.Conn
	cut     bool
	stalled bool
}

// stall closes every connection the proxy carries and refuses new ones for d, then forwards
// again: an API server that is unreachable for d.
func (p *tcpProxy) stall(d time.Duration) {
	p.mu.Lock()
	p.stalled = true
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
	time.AfterFunc(d, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.stalled = false
	})
}

func startTCPProxy(target string) *tcpProxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	p := &tcpProxy{l: l, target: target}
	go p.serve()
	DeferCleanup(p.close)
	return p
}

func (p *tcpProxy) addr() string { return p.l.Addr().String() }

func (p *tcpProxy) serve() {
	for {
		in, err := p.l.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			continue
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = in.Close()
			continue
		}
		if !p.track(in, out) {
			continue
		}
		go func() { _, _ = io.Copy(out, in); _ = out.Close() }()
		go func() { _, _ = io.Copy(in, out); _ = in.Close() }()
	}
}

// track remembers a connection pair, or closes it when the proxy is cut.
func (p *tcpProxy) track(in, out net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut || p.stalled {
		_ = in.Close()
		_ = out.Close()
		return false
	}
	p.conns = append(p.conns, in, out)
	return true
}

// close cuts the proxy: its listener and every connection through it.
func (p *tcpProxy) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	_ = p.l.Close()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

// seedFromEnv returns the seed of a randomized story: E2E_FAULT_SEED when set (to replay a
// run), the clock otherwise. It is printed and reported either way.
func seedFromEnv() int64 {
	seed := time.Now().UnixNano()
	if s := os.Getenv("E2E_FAULT_SEED"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		Expect(err).NotTo(HaveOccurred(), "E2E_FAULT_SEED=%q", s)
		seed = v
	}
	AddReportEntry("random seed (replay with E2E_FAULT_SEED)", fmt.Sprint(seed))
	GinkgoWriter.Printf("random seed %d (replay with E2E_FAULT_SEED=%d)\n", seed, seed)
	return seed
}
