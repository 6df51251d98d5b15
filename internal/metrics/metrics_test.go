package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
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

func TestRecordAndForget(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := New()
	if err := m.Register(reg); err != nil {
		t.Fatal(err)
	}
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
	if got := testutil.ToFloat64(m.condition.WithLabelValues("shop", "web", examplev1.ConditionReady, "True")); got != 1 {
		t.Errorf("Ready True = %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.condition.WithLabelValues("shop", "web", examplev1.ConditionReady, "False")); got != 0 {
		t.Errorf("Ready False = %v, want 0", got)
	}
	if got := testutil.ToFloat64(m.condition.WithLabelValues("shop", "web", examplev1.ConditionDegraded, "Unknown")); got != 1 {
		t.Errorf("a condition the status lacks is Unknown: got %v", got)
	}
	if n := testutil.CollectAndCount(m.condition); n != 15 {
		t.Errorf("%d condition series, want 5 types x 3 statuses", n)
	}

	// A new image replaces the info series; a new status moves the 1.
	m.Record(app("nginx:1.28", metav1.ConditionFalse), nil)
	if n := testutil.CollectAndCount(m.info); n != 1 {
		t.Errorf("%d info series after an image change, want 1", n)
	}
	if got := testutil.ToFloat64(m.info.WithLabelValues("shop", "web", "nginx:1.28")); got != 1 {
		t.Errorf("info of the new image = %v", got)
	}
	if got := testutil.ToFloat64(m.condition.WithLabelValues("shop", "web", examplev1.ConditionReady, "False")); got != 1 {
		t.Errorf("Ready False = %v after the change, want 1", got)
	}

	// Another MyApp stays when one is forgotten.
	other := app("nginx:1.27", metav1.ConditionTrue)
	other.Name = "api"
	m.Record(other, nil)
	m.Forget(types.NamespacedName{Namespace: "shop", Name: "web"})
	for name, c := range map[string]prometheus.Collector{"condition": m.condition, "replicas": m.replicas, "info": m.info} {
		n := testutil.CollectAndCount(c)
		if want := map[string]int{"condition": 15, "replicas": 3, "info": 1}[name]; n != want {
			t.Errorf("%s: %d series left, want only the other MyApp's %d", name, n, want)
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
