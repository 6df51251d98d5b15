package controller

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/example/myapp-operator/internal/metrics"
)

var _ = Describe("Per-MyApp metrics", func() {
	It("follow the status, and are removed with the MyApp", func() {
		ns := newNamespace()
		app := createMyApp(ns, "web", nil)
		Eventually(func(g Gomega) map[string]float64 { return seriesOf(g, ns) }).Should(And(
			HaveKeyWithValue(metrics.ConditionName+"/Ready/False", 1.0),
			HaveKeyWithValue(metrics.ConditionName+"/Ready/True", 0.0),
			HaveKeyWithValue(metrics.ReplicasName+"/desired", 2.0),
			HaveKeyWithValue(metrics.InfoName+"/nginx:1.27", 1.0),
		))

		rollOut(ns, "web")
		Eventually(func(g Gomega) map[string]float64 { return seriesOf(g, ns) }).Should(And(
			HaveKeyWithValue(metrics.ConditionName+"/Ready/True", 1.0),
			HaveKeyWithValue(metrics.ReplicasName+"/ready", 2.0),
			HaveKeyWithValue(metrics.ReplicasName+"/available", 2.0),
		))

		By("deleting the MyApp")
		Expect(k8s.Delete(suiteCtx, app)).To(Succeed())
		Eventually(func(g Gomega) map[string]float64 { return seriesOf(g, ns) }).Should(BeEmpty())
	})
})

// seriesOf gathers the suite's per-MyApp series of the MyApp web in ns, keyed by metric name and the
// labels that tell its series apart (type/status, kind or image). It fails when it cannot
// gather.
func seriesOf(g Gomega, ns string) map[string]float64 {
	return seriesIn(g, suiteMetrics, ns)
}

// seriesIn is seriesOf in the registry reg.
func seriesIn(g Gomega, reg prometheus.Gatherer, ns string) map[string]float64 {
	const name = "web"
	families, err := reg.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.Metric {
			l := labelsOf(m)
			if l["namespace"] != ns || l["name"] != name {
				continue
			}
			key := f.GetName()
			for _, k := range []string{"type", "status", "kind", "image"} {
				if v, ok := l[k]; ok {
					key += "/" + v
				}
			}
			switch {
			case m.GetGauge() != nil:
				out[key] = m.GetGauge().GetValue()
			case m.GetCounter() != nil:
				out[key] = m.GetCounter().GetValue()
			default:
				g.Expect(m).To(Or(HaveField("Gauge", Not(BeNil())), HaveField("Counter", Not(BeNil()))), "%s: neither a gauge nor a counter", key)
			}
		}
	}
	return out
}

func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, p := range m.Label {
		out[p.GetName()] = p.GetValue()
	}
	return out
}
