package realnode

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/rollout"
	"github.com/example/myapp-operator/internal/testutil"
	"github.com/example/myapp-operator/test/promserver"
	"github.com/example/myapp-operator/test/traffic"
)

// traefikJob is the job under which the canary stories' Prometheus scrapes Traefik.
const traefikJob = "traefik"

// canarySuccessRate is the metric check of the canary stories, as the spec page's example
// writes it: the share of the canary Service's requests through Traefik that were not
// answered with a 5xx, over the last 10 s. Traefik's Gateway provider names the service of a
// route's backend <namespace>-<Service>-http-<port>, and its metrics add @kubernetesgateway.
// A canary that answers nothing but 5xx measures 0, not "no sample" ("or vector(0)").
const canarySuccessRate = `(sum(rate(traefik_service_requests_total{service=~"{{namespace}}-{{canary}}-http-[0-9]+@kubernetesgateway",code!~"5.."}[10s])) or vector(0))
/ sum(rate(traefik_service_requests_total{service=~"{{namespace}}-{{canary}}-http-[0-9]+@kubernetesgateway"}[10s]))`

var _ = Describe("Canary releases through a real Gateway (Traefik), judged by a real Prometheus", Ordered, Label("realnode", "canary"), func() {
	var prom *promserver.Server
	BeforeAll(func() {
		ensureGateway()
		// The other containers' stories start without the Gateway API, as on a new cluster:
		// its CRDs removed while the next container's manager starts and syncs its HTTPRoute
		// cache left that manager's reconciles waiting on the cache (docs/reliability.md,
		// "Flakes found in fresh-clone runs").
		DeferCleanup(withoutGatewayAPI)
		prom = startEdgePrometheus()
		deployOperatorAgain("--canary-prometheus-url=http://" + prom.Address)
		Eventually(prom.TargetUp).WithArguments(traefikJob).Should(BeTrue(), "Prometheus scrapes Traefik")
	})

	It("aborts a crashing version before any request reaches it, sends each step's share of the requests to a good one within 5 points and loses none, aborts a version that answers 5xx by the metric check at the first step, and takes promote and abort by hand", func() {
		const host = "canary.example.com"
		ns := newNamespace()
		v1, v2 := appImage+":"+appVersions[0], appImage+":"+appVersions[1]
		const configFile = "/etc/app/app.conf"
		goodFile := []examplev1.File{{Path: configFile, Content: "greeting=hello\n"}}
		app := &examplev1.MyApp{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: examplev1.MyAppSpec{Image: v1, Replicas: ptr.To[int32](4), Port: ptr.To[int32](appPort),
				// The edge drops a pod from its endpoints before the pod stops.
				TerminationGracePeriodSeconds: ptr.To[int64](20),
				Lifecycle:                     &examplev1.Lifecycle{PreStop: &examplev1.LifecycleHandler{Sleep: &examplev1.SleepAction{Seconds: 5}}},
				Files:                         goodFile,
				Env:                           []examplev1.EnvVar{{Name: "CONFIG_FILE", Value: ptr.To(configFile)}},
				Expose: &examplev1.Expose{Hosts: []examplev1.Hostname{host},
					Gateway: &examplev1.GatewayReference{Namespace: traefikNamespace, Name: gatewayName}},
				Canary: &examplev1.Canary{
					Steps: []examplev1.CanaryStep{
						{SetWeight: ptr.To[int32](20)}, {Pause: &examplev1.CanaryPause{Duration: ptr.To("20s")}},
						{SetWeight: ptr.To[int32](50)}, {Pause: &examplev1.CanaryPause{}},
					},
					Analysis: &examplev1.CanaryAnalysis{Metrics: []examplev1.CanaryMetric{{
						Name: "success-rate", Query: canarySuccessRate,
						Condition: examplev1.CanaryCondition{Operator: ">=", Value: "0.99"},
						Interval:  ptr.To("5s"),
					}}},
				},
			},
		}
		Expect(k8s.Create(ctx, app)).To(Succeed())
		expectReadyAndAnswering(ns, app.Name, appVersions[0], 4)
		edge := traefikURL()
		Eventually(answerFrom).WithArguments(edge, host).Should(HavePrefix("myapp test app " + appVersions[0]))
		started := time.Now()
		stream := traffic.StartHost(edge, host, perSecond, 10*time.Minute)
		// A story that fails half-way stops its stream before the next one measures.
		DeferCleanup(func() { stream.Stop() })
		canaryService := fmt.Sprintf(`traefik_service_requests_total{service=~"%s-web-canary-http-[0-9]+@kubernetesgateway"}`, ns)
		stableService := fmt.Sprintf(`traefik_service_requests_total{service=~"%s-web-stable-http-[0-9]+@kubernetesgateway"}`, ns)

		By("(c) a version whose pods crash: aborted by the operator's own judge, before any request reaches it")
		updateSpec(app, func(s *examplev1.MyAppSpec) {
			s.Image = v2
			s.Files = []examplev1.File{{Path: configFile, Content: "greeting hello\n"}}
		})
		aborted := expectCanaryAborted(ns, examplev1.ReasonCrashLoopBackOff)
		Expect(aborted.Weight).To(BeZero())
		Eventually(prom.Query).WithArguments(stableService).ShouldNot(BeEmpty(), "Prometheus measures the stable Service's requests")
		Expect(prom.Query(Default, canaryService)).To(BeEmpty(), "no request reached the crashing canary's Service")
		crashed := time.Now()
		_, others, failed := stream.Report().Between(started, crashed, "myapp test app "+appVersions[0]+" ")
		Expect(others).To(BeZero(), "an answer came from another version than the stable one")
		Expect(failed).To(BeZero(), "a request failed while the crashing canary was judged")

		By("(a) a good version: each step's share within 5 points of its weight, no request lost")
		updateSpec(app, func(s *examplev1.MyAppSpec) { s.Files = goodFile })
		twenty := stepWindow(ns, 1)
		fifty := stepWindow(ns, 3)
		Eventually(func(g Gomega) string { return canaryStatus(g, ns).Phase }).Should(Equal(string(rollout.CanaryPaused)))
		// The pause waits for the user: the share of fifty is measured for 20 s of it.
		Eventually(func() time.Duration { return time.Since(fifty) }).WithTimeout(time.Minute).Should(BeNumerically(">=", 23*time.Second))

		By("(d) promote by hand: the stable pods move to the new version, which then takes every request")
		promoted := time.Now()
		controlCanary(app, "promote")
		expectCanaryEnded(ns)
		Eventually(answerFrom).WithArguments(edge, host).Should(HavePrefix("myapp test app " + appVersions[1]))
		report := stream.Report()
		// The pause at 20 lasts 20 s from its recorded start (in seconds, so up to 1 s early);
		// the weight changes after it. A step starts once Traefik accepted the route with its
		// weight; Traefik serves it within its providers' throttle (2 s), later on a busy
		// machine: each window starts edgeLag after its step.
		expectShare(report, "the step of weight 20", twenty.Add(edgeLag), twenty.Add(20*time.Second), 20)
		expectShare(report, "the step of weight 50", fifty.Add(edgeLag), promoted, 50)
		// A share moves to a Service only once its EndpointSlices list the pods that are to take
		// it, the slices Traefik sends by: the steps' windows above lose none. Known gap (issue
		// 41, docs/reliability.md): one fresh-clone run of three lost 11 requests (503) 2 s after
		// this version's push, before its first weight; until its cause is found the whole canary
		// may lose at most one second of requests, and the report holds Traefik's log.
		_, _, failed = report.Between(crashed, time.Now(), "")
		AddReportEntry("requests failed during the good version's canary and its promotion", failed)
		if failed > 0 {
			reportEdgeLog("the good version's canary", crashed)
		}
		Expect(failed).To(BeNumerically("<=", perSecond),
			"requests failed during the good version's canary or its promotion: %s", report)

		By("(b) a version that answers 5xx on half of its requests: aborted by the metric check at the first step")
		badStarted := time.Now()
		updateSpec(app, func(s *examplev1.MyAppSpec) {
			s.Env = append(s.Env, examplev1.EnvVar{Name: "ERROR_SHARE", Value: ptr.To("0.5")})
		})
		aborted = expectCanaryAborted(ns, rollout.ReasonCanaryAnalysisFailed)
		Expect(aborted.Step).To(BeNumerically("<=", 1), "aborted at its first weight")
		Expect(aborted.Message).To(ContainSubstring("success-rate"))
		abortSeen := time.Now()
		// The canary's pods scaled to 0: the route's weight of 0 was accepted.
		Eventually(func() time.Duration { return time.Since(abortSeen) }).Should(BeNumerically(">=", edgeLag+5*time.Second))
		report = stream.Report()
		_, _, failedBad := report.Between(badStarted, abortSeen.Add(edgeLag), "")
		AddReportEntry("requests failed by the 5xx version, from its push to its abort", failedBad)
		// The bound: the first step's weight of the requests for as long as its pause (20 s).
		Expect(failedBad).To(BeNumerically("<=", 20*perSecond*20/100), "more failed requests than the first step's weight × its duration")
		Expect(failedBad).To(BeNumerically(">", 0), "the 5xx version answered no request: the story measured nothing")
		_, _, failedAfter := report.Between(abortSeen.Add(edgeLag), time.Now(), "")
		Expect(failedAfter).To(BeZero(), "requests still failed after the abort")

		By("(d) abort by hand: a new version's canary taken back at once")
		updateSpec(app, func(s *examplev1.MyAppSpec) { s.Env = s.Env[:1]; s.Image = v1 })
		// The new canary's record, at its first pause: the aborted one's is still there until
		// the operator starts it, and a control given before the record exists is taken as
		// seen (a value acts when it changes under a record).
		stepWindow(ns, 1)
		controlCanary(app, "abort")
		aborted = expectCanaryAborted(ns, rollout.ReasonCanaryAbortedByUser)
		Expect(aborted.Weight).To(BeZero())
		Eventually(answerFrom).WithArguments(edge, host).Should(HavePrefix("myapp test app " + appVersions[1]))
		userAborted := time.Now()
		Eventually(func() time.Duration { return time.Since(userAborted) }).Should(BeNumerically(">=", edgeLag+5*time.Second))
		report = stream.Stop()
		_, _, failed = report.Between(abortSeen.Add(edgeLag), time.Now(), "")
		Expect(failed).To(BeZero(), "a request failed during the canary aborted by hand: %s", report)
		_, others, _ = report.Between(userAborted.Add(edgeLag), time.Now(), "myapp test app "+appVersions[1]+" ")
		Expect(others).To(BeZero(), "after the abort only the stable version answers")
		AddReportEntry("traffic through the Gateway: a canary story", report.String())
		Expect(report.Truncated).To(BeFalse())
	})
})

// edgeLag is how long after the operator saw a route's weight accepted the canary stories
// measure with it in force: Traefik serves a new configuration after its providers' throttle
// (2 s), later while the other lanes of make test-all keep both cores busy.
const edgeLag = 5 * time.Second

// startEdgePrometheus runs Prometheus on the node's address, which the operator's pod
// reaches, scraping Traefik's metrics through its Service every second.
func startEdgePrometheus() *promserver.Server {
	bin := os.Getenv("E2E_PROMETHEUS")
	Expect(bin).NotTo(BeEmpty(), "E2E_PROMETHEUS is not set: run make test-realnode, which builds Prometheus")
	listen, err := testutil.FreeAddr(nodeAddress())
	Expect(err).NotTo(HaveOccurred())
	config := fmt.Sprintf(`global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
- job_name: %s
  static_configs: [{targets: [%q]}]
`, traefikJob, traefikMetricsAddress())
	return promserver.Start(bin, filepath.Join(filepath.Dir(kubeconfig), "logs", "realnode-test-prometheus.log"), listen, config, nil)
}

// nodeAddress is the real node's InternalIP: an address of this host that pods reach.
func nodeAddress() string {
	nodes := &corev1.NodeList{}
	Expect(k8s.List(ctx, nodes, client.MatchingLabels{"type": "real"})).To(Succeed())
	Expect(nodes.Items).To(HaveLen(1))
	for _, a := range nodes.Items[0].Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	Fail("the real node has no InternalIP")
	return ""
}

// canaryStatus is the canary recorded in the status of the namespace's MyApp web.
func canaryStatus(g Gomega, ns string) *examplev1.CanaryStatus {
	c := myApp(g, ns).Status.Canary
	g.Expect(c).NotTo(BeNil(), "a canary is recorded")
	return c
}

// stepWindow waits until a canary that is not aborted is at the step (0-based) and returns
// when the step started, as recorded.
func stepWindow(ns string, step int32) time.Time {
	GinkgoHelper()
	var started time.Time
	Eventually(func(g Gomega) {
		c := canaryStatus(g, ns)
		g.Expect(c.Phase).NotTo(Equal(string(rollout.CanaryAborted)), "the canary was aborted: %s", c.Message)
		g.Expect(c.Step).To(BeNumerically(">=", step))
		g.Expect(c.Step).To(Equal(step), "the step went by unseen")
		started = c.StepStarted.Time
	}).Should(Succeed())
	return started
}

// expectShare fails unless the share of the requests between from and to answered by the
// new version (appVersions[1]) is within 5 points of weight, and reports it.
func expectShare(r traffic.Report, title string, from, to time.Time, weight int) {
	GinkgoHelper()
	canary, stable, failed := r.Between(from, to, "myapp test app "+appVersions[1]+" ")
	Expect(canary+stable).To(BeNumerically(">=", 100), "%s: too few answers to measure a share (%s to %s)", title, from, to)
	share := 100 * float64(canary) / float64(canary+stable)
	AddReportEntry(fmt.Sprintf("%s: the new version's share", title),
		fmt.Sprintf("%.1f %% of %d answers (%d failed), %s to %s", share, canary+stable, failed,
			from.Format("15:04:05"), to.Format("15:04:05")))
	Expect(share).To(BeNumerically("~", float64(weight), 5.0), "%s: the new version's share", title)
	Expect(failed).To(BeZero(), "%s: requests failed", title)
}

// expectCanaryAborted waits until the canary is aborted with the reason, the MyApp Stalled
// for it, and returns the record.
func expectCanaryAborted(ns, reason string) *examplev1.CanaryStatus {
	GinkgoHelper()
	var c *examplev1.CanaryStatus
	Eventually(func(g Gomega) {
		a := myApp(g, ns)
		c = canaryStatus(g, ns)
		g.Expect(c.Phase).To(Equal(string(rollout.CanaryAborted)))
		g.Expect(c.Reason).To(Equal(reason))
		stalled := meta.FindStatusCondition(a.Status.Conditions, examplev1.ConditionStalled)
		g.Expect(stalled).NotTo(BeNil())
		g.Expect(stalled.Reason).To(Equal(examplev1.ReasonCanaryAborted))
	}).Should(Succeed())
	Eventually(func(g Gomega) int32 {
		d := &appsv1.Deployment{}
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web-canary"}, d)).To(Succeed())
		return ptr.Deref(d.Spec.Replicas, 1)
	}).Should(BeZero(), "the aborted canary's pods are scaled down")
	return c
}

// expectCanaryEnded waits until the canary ended: no record, Ready, the canary Deployment gone.
func expectCanaryEnded(ns string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		a := myApp(g, ns)
		g.Expect(a.Status.Canary).To(BeNil())
		g.Expect(meta.IsStatusConditionTrue(a.Status.Conditions, examplev1.ConditionReady)).To(BeTrue())
		err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web-canary"}, &appsv1.Deployment{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the canary Deployment goes: %v", err)
	}).WithTimeout(3 * time.Minute).Should(Succeed())
}

// controlCanary sets the canary's manual control annotation.
func controlCanary(app *examplev1.MyApp, value string) {
	GinkgoHelper()
	Eventually(func() error {
		a := &examplev1.MyApp{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(app), a); err != nil {
			return err
		}
		if a.Annotations == nil {
			a.Annotations = map[string]string{}
		}
		a.Annotations[examplev1.CanaryControlAnnotation] = value
		return k8s.Update(ctx, a)
	}).Should(Succeed())
}
