package metrics

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

func app(image string, ready metav1.ConditionStatus) *examplev1.MyApp {
	a := &examplev1.MyApp{}
	a.Namespace, a.Name, a.Spec.Image = "shop", "web", image
	a.Status.ReadyReplicas, a.Status.AvailableReplicas = 2, 1
	a.Status.Conditions = []metav1.Condition{
		{Type: examplev1.ConditionReady, Status: ready},
		{Type: examplev1.ConditionStalled, Status: metav1.ConditionFalse},
	}
	return a
}

// series gathers reg and returns the value of every series of the metric name, keyed by its
// labels as name=value pairs sorted by name; the callers check the count, so a metric that
// is missing fails them.
func series(t *testing.T, reg *prometheus.Registry, name string) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			sort.Strings(labels)
			switch {
			case m.GetGauge() != nil:
				out[strings.Join(labels, ",")] = m.GetGauge().GetValue()
			case m.GetCounter() != nil:
				out[strings.Join(labels, ",")] = m.GetCounter().GetValue()
			default:
				t.Fatalf("%s{%s} is neither a gauge nor a counter", name, strings.Join(labels, ","))
			}
		}
	}
	return out
}

// registered makes the per-MyApp metrics, registered in reg.
func registered(tb testing.TB, reg prometheus.Registerer) *MyApps {
	tb.Helper()
	m := New()
	if err := m.Register(reg); err != nil {
		tb.Fatal(err)
	}
	return m
}

func TestRecordAndForget(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := registered(t, reg)
	three := int32(3)
	m.Record(app("nginx:1.27", metav1.ConditionTrue), &three)
	want := `
# HELP myapp_replicas Pods of each MyApp's Deployment: desired (spec.replicas, the autoscaler's while it scales), ready and available.
# TYPE myapp_replicas gauge
myapp_replicas{kind="available",name="web",namespace="shop"} 1
myapp_replicas{kind="desired",name="web",namespace="shop"} 3
myapp_replicas{kind="ready",name="web",namespace="shop"} 2
# HELP myapp_info Always 1 for each MyApp, with its image as a label.
# TYPE myapp_info gauge
myapp_info{image="nginx:1.27",name="web",namespace="shop"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), ReplicasName, InfoName); err != nil {
		t.Fatal(err)
	}
	cond := func(typ, status string) string {
		return "name=web,namespace=shop,status=" + status + ",type=" + typ
	}
	conditions := series(t, reg, ConditionName)
	if len(conditions) != 15 {
		t.Fatalf("%d condition series, want 5 types x 3 statuses: %v", len(conditions), conditions)
	}
	for _, c := range []struct {
		typ, status string
		want        float64
	}{
		{examplev1.ConditionReady, "True", 1},
		{examplev1.ConditionReady, "False", 0},
		{examplev1.ConditionStalled, "False", 1},
		{examplev1.ConditionDegraded, "Unknown", 1}, // a condition the status lacks
		{examplev1.ConditionDegraded, "True", 0},
	} {
		if got, ok := conditions[cond(c.typ, c.status)]; !ok || got != c.want {
			t.Errorf("%s %s = %v (present: %v), want %v", c.typ, c.status, got, ok, c.want)
		}
	}

	// A new image replaces the info series; a new status moves the 1.
	m.Record(app("nginx:1.28", metav1.ConditionFalse), nil)
	if info := series(t, reg, InfoName); len(info) != 1 || info["image=nginx:1.28,name=web,namespace=shop"] != 1 {
		t.Errorf("info after an image change: %v, want the new image's series alone", info)
	}
	if got := series(t, reg, ConditionName)[cond(examplev1.ConditionReady, "False")]; got != 1 {
		t.Errorf("Ready False = %v after the change, want 1", got)
	}

	// Rollbacks count per MyApp, from 0.
	if got := series(t, reg, RollbacksName)["name=web,namespace=shop"]; got != 0 {
		t.Errorf("rollbacks before any = %v, want a series at 0", got)
	}
	m.RolledBack(types.NamespacedName{Namespace: "shop", Name: "web"})
	m.RolledBack(types.NamespacedName{Namespace: "shop", Name: "web"})
	if got := series(t, reg, RollbacksName)["name=web,namespace=shop"]; got != 2 {
		t.Errorf("rollbacks = %v after two, want 2", got)
	}

	// Another MyApp stays when one is forgotten.
	other := app("nginx:1.27", metav1.ConditionTrue)
	other.Name = "api"
	m.Record(other, nil)
	m.Forget(types.NamespacedName{Namespace: "shop", Name: "web"})
	for name, want := range map[string]int{ConditionName: 15, ReplicasName: 3, InfoName: 1, RollbacksName: 1} {
		got := series(t, reg, name)
		if len(got) != want {
			t.Errorf("%s: %d series left, want only the other MyApp's %d", name, len(got), want)
		}
		for labels := range got {
			if !strings.Contains(labels, "name=api,") {
				t.Errorf("%s: a series of the forgotten MyApp is left: %s", name, labels)
			}
		}
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("metric %s breaks Prometheus naming conventions: %s", p.Metric, p.Text)
	}
}

// BenchmarkScrape measures one read of the metrics endpoint's per-MyApp part at 1,000
// MyApps: gathering the series and writing them in the text format, as the endpoint does.
func BenchmarkScrape(b *testing.B) {
	reg := prometheus.NewRegistry()
	m := registered(b, reg)
	two := int32(2)
	for i := range 1000 {
		a := app("nginx:1.27", metav1.ConditionTrue)
		a.Name = fmt.Sprintf("app-%05d", i)
		m.Record(a, &two)
	}
	b.ReportAllocs()
	for b.Loop() {
		families, err := reg.Gather()
		if err != nil {
			b.Fatal(err)
		}
		enc := expfmt.NewEncoder(io.Discard, expfmt.NewFormat(expfmt.TypeTextPlain))
		for _, f := range families {
			if err := enc.Encode(f); err != nil {
				b.Fatal(err)
			}
		}
	}
}
