package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/testutil"
	"github.com/example/myapp-operator/test/promquery"
	"github.com/example/myapp-operator/test/promserver"
)

// operatorJob is the job the shipped ServiceMonitor scrapes the operator under (the name of its
// metrics Service), which the shipped alert rules select on.
const operatorJob = "myapp-operator-controller-manager-metrics-service"

// A real Prometheus, built from its Go module, scrapes the operator's HTTPS metrics endpoint
// with the token of a service account bound to config/rbac's metrics-reader ClusterRole, and
// evaluates the shipped alert rules, their `for:` shortened to seconds for the test only.
var _ = Describe("Alerts on a real Prometheus", Ordered, Serial, func() {
	It("fire for a MyApp whose image cannot be pulled, resolve once it is fixed, and lose its series when it is deleted", func() {
		promBin := os.Getenv("E2E_PROMETHEUS")
		Expect(promBin).NotTo(BeEmpty(), "E2E_PROMETHEUS is not set: run `make test-e2e`, which builds Prometheus")
		ns := newNamespace()

		By("running the operator with its metrics on HTTPS, authenticated and authorized, as config/default does")
		addr, err := testutil.FreeLoopbackAddr()
		Expect(err).NotTo(HaveOccurred())
		op := startManager("prometheus-target", "--metrics-bind-address="+addr)
		Eventually(op.isLeader).Should(BeTrue())

		By("starting Prometheus with the scraper account's token and the shipped rules")
		bindClusterRole(ns, "prometheus", "metrics_reader_role.yaml")
		prom := startPrometheus(promBin, addr, serviceAccountToken(ns, "prometheus"))
		Eventually(prom.TargetUp).WithArguments(operatorJob).WithTimeout(time.Minute).Should(BeTrue())

		By("refusing the scrape of a job without a token, as the endpoint refuses any such client")
		Eventually(prom.LastError).WithArguments("no-token").Should(ContainSubstring("401"))
		Expect(prom.TargetUp(Default, "no-token")).To(BeFalse())

		By("a MyApp whose image cannot be pulled: Stalled, and MyAppStalled fires for it")
		newMyApp(ns, "broken", "example.com/unstartable:never", 1)
		Eventually(prom.firing).WithArguments("MyAppStalled").WithTimeout(2 * time.Minute).
			Should(ContainElement(And(HaveKeyWithValue("namespace", ns), HaveKeyWithValue("name", "broken"))))
		Expect(prom.firing(Default, "MyAppOperatorDown")).To(BeEmpty())
		Expect(prom.firing(Default, "MyAppOperatorNotLeading")).To(BeEmpty())

		By("a MyApp in a canary release: the operator serves its canary's series")
		release := &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "release"},
			Spec: examplev1.MyAppSpec{Image: "nginx:1.27", Replicas: ptr(int32(2)),
				Canary: &examplev1.Canary{Steps: []examplev1.CanaryStep{{SetWeight: ptr(int32(50))}, {Pause: &examplev1.CanaryPause{}}}}}}
		Expect(k8s.Create(ctx, release)).To(Succeed())
		expectReady(ns, "release", 2)
		updateMyApp(ns, "release", func(a *examplev1.MyApp) { a.Spec.Image = "nginx:1.28" })
		Eventually(prom.Query).WithArguments(fmt.Sprintf(`myapp_canary_phase{namespace=%q, name="release"} == 1`, ns)).
			WithTimeout(time.Minute).Should(HaveLen(1))

		By("every metric the dashboard and the rules use is one the operator serves")
		served := prom.metricNames(operatorJob)
		for _, name := range usedMetricNames() {
			Expect(served).To(ContainElement(name), "the dashboard or the rules use %s, which the operator does not serve", name)
		}

		By("fixing the image: the alert resolves")
		updateMyApp(ns, "broken", func(a *examplev1.MyApp) { a.Spec.Image = "nginx:1.27" })
		Eventually(prom.firing).WithArguments("MyAppStalled").WithTimeout(2 * time.Minute).
			ShouldNot(ContainElement(HaveKeyWithValue("name", "broken")))

		By("deleting the MyApp: its series leave the operator's metrics")
		Eventually(prom.Query).WithArguments(fmt.Sprintf(`myapp_info{namespace=%q, name="broken"}`, ns)).Should(HaveLen(1))
		Expect(k8s.Delete(ctx, getMyApp(Default, ns, "broken"))).To(Succeed())
		Eventually(prom.Query).WithArguments(fmt.Sprintf(`{namespace=%q, name="broken", __name__=~"myapp_.*"}`, ns)).
			WithTimeout(time.Minute).Should(BeEmpty())
	})
})

// prometheus is a Prometheus server the test started, and its HTTP API.
type prometheus struct{ *promserver.Server }

// startPrometheus runs Prometheus on a free loopback port, scraping the operator's metrics at
// addr every second as operatorJob (with token) and as no-token (without), and evaluating the
// shipped rules every second with every `for:` shortened to 2 s.
func startPrometheus(bin, addr, token string) *prometheus {
	rules, err := os.ReadFile(filepath.Join("..", "..", "config", "prometheus", "rules", "myapp-operator.rules.yaml"))
	Expect(err).NotTo(HaveOccurred())
	shortened := regexp.MustCompile(`(?m)^(\s+for: )\d+m$`).ReplaceAll(rules, []byte("${1}2s"))
	Expect(string(shortened)).NotTo(MatchRegexp(`for: \d+m`))
	config := fmt.Sprintf(`global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}
rule_files: [rules.yaml]
scrape_configs:
- job_name: %s
  scheme: https
  tls_config: {insecure_skip_verify: true}
  authorization: {credentials_file: token}
  static_configs: [{targets: [%q]}]
- job_name: no-token
  scheme: https
  tls_config: {insecure_skip_verify: true}
  static_configs: [{targets: [%q]}]
`, operatorJob, addr, addr)
	listen, err := testutil.FreeLoopbackAddr()
	Expect(err).NotTo(HaveOccurred())
	return &prometheus{promserver.Start(bin, filepath.Join(logDir, "e2e-prometheus.log"), listen, config,
		map[string]string{"token": token, "rules.yaml": string(shortened)})}
}

// firing lists the labels of the alerts of that name that are firing.
func (p *prometheus) firing(g Gomega, name string) []map[string]string {
	var data struct {
		Alerts []struct {
			Labels map[string]string `json:"labels"`
			State  string            `json:"state"`
		} `json:"alerts"`
	}
	p.Get(g, "alerts", nil, &data)
	out := []map[string]string{}
	for _, a := range data.Alerts {
		if a.Labels["alertname"] == name && a.State == "firing" {
			out = append(out, a.Labels)
		}
	}
	return out
}

// metricNames lists the names of the metrics Prometheus holds from a job.
func (p *prometheus) metricNames(job string) []string {
	series := p.Query(Default, fmt.Sprintf(`count by (__name__) ({job=%q})`, job))
	names := make([]string, 0, len(series))
	for _, m := range series {
		names = append(names, m["__name__"])
	}
	Expect(names).NotTo(BeEmpty(), "no metric of job %s", job)
	sort.Strings(names)
	return names
}

// usedMetricNames lists the metrics the Grafana dashboard's queries and the alert rules'
// expressions select, parsed with Prometheus's own parser, leaving out Prometheus's own `up`.
func usedMetricNames() []string {
	queries := []string{}
	d, err := promquery.ReadDashboard(filepath.Join("..", "..", "config", "grafana", "myapp-operator.json"))
	Expect(err).NotTo(HaveOccurred())
	for _, panel := range d.Panels {
		for _, t := range panel.Targets {
			queries = append(queries, t.Expr)
		}
	}
	rules, err := promquery.RuleExpressions(filepath.Join("..", "..", "config", "prometheus", "rules", "myapp-operator.rules.yaml"))
	Expect(err).NotTo(HaveOccurred())
	for _, e := range rules {
		queries = append(queries, e)
	}
	names := map[string]bool{}
	for _, q := range queries {
		ns, err := promquery.MetricNames(q)
		Expect(err).NotTo(HaveOccurred(), q)
		for _, n := range ns {
			names[n] = true
		}
	}
	delete(names, "up")
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	sort.Strings(out)
	Expect(out).NotTo(BeEmpty())
	return out
}
