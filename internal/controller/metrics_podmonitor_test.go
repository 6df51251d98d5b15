package controller

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/testutil"
)

var getPodMonitor = get[monitoringv1.PodMonitor]

var _ = Describe("The app's own metrics (spec.metrics)", Ordered, func() {
	It("is Degraded without the Prometheus Operator's CRDs and runs on; once they are installed the PodMonitor scrapes the pods at the port and path, keeps to the spec, and goes with the field", func() {
		ns := newNamespace()
		app := createMyApp(ns, "web", func(a *examplev1.MyApp) {
			a.Spec.Ports = []examplev1.ContainerPort{{Name: "admin", Port: 9000}}
			a.Spec.Metrics = &examplev1.AppMetrics{PortName: "admin"}
		})
		Eventually(func(g Gomega) {
			a := getMyApp(ns, "web")(g)
			degraded := condition(g, a, examplev1.ConditionDegraded)
			g.Expect(degraded.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(degraded.Reason).To(Equal(examplev1.ReasonPrometheusOperatorNotInstalled))
			g.Expect(degraded.Message).To(ContainSubstring("spec.metrics"))
			g.Expect(condition(g, a, examplev1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse), "the app runs without it")
		}).Should(Succeed())
		Expect(getDeployment(ns, "web")(Default)).NotTo(BeNil())

		By("installing the PodMonitor CRD of the release whose types the operator builds on")
		crd, err := testutil.PodMonitorCRD()
		Expect(err).NotTo(HaveOccurred())
		_, err = envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: []string{crd}, ErrorIfPathMissing: true, MaxTime: crdServedWithin})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			pm := getPodMonitor(ns, "web")(g)
			g.Expect(metav1.IsControlledBy(pm, getMyApp(ns, "web")(g))).To(BeTrue())
			g.Expect(pm.Spec.Selector.MatchLabels).To(Equal(map[string]string{"myapp.example.com/name": "web"}))
			g.Expect(pm.Spec.PodMetricsEndpoints).To(HaveLen(1))
			g.Expect(pm.Spec.PodMetricsEndpoints[0].Port).To(Equal(ptr.To("admin")))
			g.Expect(pm.Spec.PodMetricsEndpoints[0].Path).To(Equal("/metrics"))
		}).WithTimeout(2*optionalAPILookInterval + 20*time.Second).Should(Succeed())
		Eventually(func(g Gomega) string {
			return condition(g, getMyApp(ns, "web")(g), examplev1.ConditionDegraded).Reason
		}).ShouldNot(Equal(examplev1.ReasonPrometheusOperatorNotInstalled))

		By("a new path and interval")
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.Metrics.Path, a.Spec.Metrics.Interval = "/stats", "15s" })
		Eventually(func(g Gomega) monitoringv1.PodMetricsEndpoint {
			return getPodMonitor(ns, "web")(g).Spec.PodMetricsEndpoints[0]
		}).Should(And(HaveField("Path", "/stats"), HaveField("Interval", monitoringv1.Duration("15s"))))

		By("a hand edit of the endpoints, taken back")
		pm := getPodMonitor(ns, "web")(Default)
		pm.Spec.PodMetricsEndpoints[0].Path = "/edited"
		pm.ManagedFields = nil
		Expect(k8s.Update(suiteCtx, pm)).To(Succeed())
		Eventually(func(g Gomega) string { return getPodMonitor(ns, "web")(g).Spec.PodMetricsEndpoints[0].Path }).Should(Equal("/stats"))

		By("at rest: the PodMonitor reads back as the operator sent it, so no resync applies it again")
		n := managerRequests.count()
		Consistently(func() []string { return podMonitorWrites(managerRequests.since(n, ns)) }, 3*resyncPeriod, 200*time.Millisecond).
			Should(BeEmpty())

		By("the field removed: the PodMonitor goes")
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.Metrics = nil })
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(suiteCtx, key(ns, "web"), &monitoringv1.PodMonitor{}))
		}).Should(BeTrue())
	})
})

// podMonitorWrites are the requests that write a PodMonitor, of those given.
func podMonitorWrites(requests []string) []string {
	var out []string
	for _, r := range requests {
		if strings.Contains(r, "/podmonitors") && !strings.HasPrefix(r, "GET ") {
			out = append(out, r)
		}
	}
	return out
}
