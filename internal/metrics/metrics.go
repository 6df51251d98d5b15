// Package metrics holds the per-MyApp metrics the operator serves beside controller-runtime's
// own (reconciles, errors, latency, work queue, leader election): what each MyApp's status
// says, as gauges an alert or a dashboard can read. They are registered in controller-runtime's
// registry, so the manager's metrics endpoint serves them with its authentication and
// authorization. docs/operations/metrics.md documents every metric.
package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// Names of the metrics, as dashboards and alert rules use them.
const (
	ConditionName = "myapp_condition"
	ReplicasName  = "myapp_replicas"
	InfoName      = "myapp_info"
)

// Label values of myapp_replicas' kind.
const (
	KindDesired   = "desired"
	KindReady     = "ready"
	KindAvailable = "available"
)

// conditionStatuses are the values a condition's status label takes; the series of the
// current status is 1, the others 0, so that an alert can test either without absent().
var conditionStatuses = []metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown}

// conditionTypes are the five conditions every MyApp reports. A MyApp has 5 x 3 condition
// series, 3 replica series and one info series: the cardinality is bounded per MyApp.
var conditionTypes = []string{examplev1.ConditionReady, examplev1.ConditionReconciling, examplev1.ConditionStalled,
	examplev1.ConditionProgressing, examplev1.ConditionDegraded}

// MyApps keeps the per-MyApp series. Its zero value is not usable: use New.
type MyApps struct {
	condition *prometheus.GaugeVec
	replicas  *prometheus.GaugeVec
	info      *prometheus.GaugeVec

	mu sync.Mutex
	// images remembers the image each MyApp's info series carries, to remove it on a change.
	images map[types.NamespacedName]string
}

// New makes the per-MyApp metrics; Register adds them to a registry.
func New() *MyApps {
	return &MyApps{
		condition: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: ConditionName,
			Help: "The status of each condition of each MyApp: 1 for the status the condition has, 0 for the others.",
		}, []string{"namespace", "name", "type", "status"}),
		replicas: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: ReplicasName,
			Help: "Pods of each MyApp's Deployment: desired (spec.replicas, the autoscaler's while it scales), ready and available.",
		}, []string{"namespace", "name", "kind"}),
		info: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: InfoName,
			Help: "Always 1 for each MyApp, with its image as a label.",
		}, []string{"namespace", "name", "image"}),
		images: map[types.NamespacedName]string{},
	}
}

// Register adds the metrics to reg.
func (m *MyApps) Register(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{m.condition, m.replicas, m.info} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// MustRegisterWithControllerRuntime adds the metrics to controller-runtime's registry, the one
// the manager's metrics endpoint serves. It panics on a second registration of the same names.
func (m *MyApps) MustRegisterWithControllerRuntime() *MyApps {
	if err := m.Register(crmetrics.Registry); err != nil {
		panic(err)
	}
	return m
}

// Record sets the series of a MyApp from its status, as written, and the desired count of its
// Deployment (nil when there is none).
func (m *MyApps) Record(app *examplev1.MyApp, desired *int32) {
	ns, name := app.Namespace, app.Name
	byType := map[string]metav1.ConditionStatus{}
	for _, c := range app.Status.Conditions {
		byType[c.Type] = c.Status
	}
	for _, typ := range conditionTypes {
		current, ok := byType[typ]
		if !ok {
			current = metav1.ConditionUnknown
		}
		for _, s := range conditionStatuses {
			v := 0.0
			if s == current {
				v = 1
			}
			m.condition.WithLabelValues(ns, name, typ, string(s)).Set(v)
		}
	}
	want := 0.0
	if desired != nil {
		want = float64(*desired)
	}
	m.replicas.WithLabelValues(ns, name, KindDesired).Set(want)
	m.replicas.WithLabelValues(ns, name, KindReady).Set(float64(app.Status.ReadyReplicas))
	m.replicas.WithLabelValues(ns, name, KindAvailable).Set(float64(app.Status.AvailableReplicas))

	key := types.NamespacedName{Namespace: ns, Name: name}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.images[key]; ok && old != app.Spec.Image {
		m.info.DeleteLabelValues(ns, name, old)
	}
	m.images[key] = app.Spec.Image
	m.info.WithLabelValues(ns, name, app.Spec.Image).Set(1)
}

// Forget removes every series of a MyApp: it was deleted.
func (m *MyApps) Forget(key types.NamespacedName) {
	labels := prometheus.Labels{"namespace": key.Namespace, "name": key.Name}
	m.condition.DeletePartialMatch(labels)
	m.replicas.DeletePartialMatch(labels)
	m.info.DeletePartialMatch(labels)
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.images, key)
}
