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
	RollbacksName = "myapp_rollbacks_total"
	// The canary release of each MyApp that has one recorded (status.canary).
	CanaryWeightName   = "myapp_canary_weight"
	CanaryStepName     = "myapp_canary_step"
	CanaryPhaseName    = "myapp_canary_phase"
	CanaryAnalysisName = "myapp_canary_analysis_total"
)

// Label values of myapp_canary_analysis_total's outcome.
const (
	OutcomePass  = "pass"
	OutcomeFail  = "fail"
	OutcomeError = "error"
)

// canaryPhases are the values myapp_canary_phase's phase label takes (status.canary.phase).
var canaryPhases = []string{"Progressing", "Paused", "Promoting", "Finishing", "Aborted"}

// Label values of myapp_replicas' kind.
const (
	KindDesired   = "desired"
	KindReady     = "ready"
	KindAvailable = "available"
)

// conditionStatuses are the values a condition's status label takes; the series of the
// current status is 1, the others 0, so that an alert can test either without absent().
var conditionStatuses = []metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown}

// MyApps serves the per-MyApp series. It is a collector that makes them at each scrape from
// what Record last saw, a few words per MyApp, rather than keeping 19 gauges per MyApp
// alive between scrapes. Its zero value is not usable: use New.
type MyApps struct {
	condition, replicas, info, rollbacks                  *prometheus.Desc
	canaryWeight, canaryStep, canaryPhase, canaryAnalysis *prometheus.Desc

	mu   sync.RWMutex
	apps map[types.NamespacedName]recorded
	// rolledBack counts the rollbacks of each MyApp since the manager started.
	rolledBack map[types.NamespacedName]uint64
	// measured counts the canary measurements of each MyApp since the manager started.
	measured map[types.NamespacedName]map[measurement]uint64
}

// measurement is one series of myapp_canary_analysis_total.
type measurement struct{ check, outcome string }

// recorded is what the series of one MyApp say.
type recorded struct {
	conditions                [len(conditionTypes)]metav1.ConditionStatus
	desired, ready, available int32
	image                     string
	// canary is the canary recorded, nil when none is.
	canary *canaryRecorded
}

// canaryRecorded is what the canary series of one MyApp say.
type canaryRecorded struct {
	weight, step int32
	phase        string
}

// conditionTypes are the five conditions every MyApp reports. A MyApp has 5 x 3 condition
// series, 3 replica series and one info series: the cardinality is bounded per MyApp.
var conditionTypes = [...]string{examplev1.ConditionReady, examplev1.ConditionReconciling, examplev1.ConditionStalled,
	examplev1.ConditionProgressing, examplev1.ConditionDegraded}

// New makes the per-MyApp metrics; Register adds them to a registry.
func New() *MyApps {
	return &MyApps{
		condition: prometheus.NewDesc(ConditionName,
			"The status of each condition of each MyApp: 1 for the status the condition has, 0 for the others.",
			[]string{"namespace", "name", "type", "status"}, nil),
		replicas: prometheus.NewDesc(ReplicasName,
			"Pods of each MyApp's Deployment: desired (spec.replicas, the autoscaler's while it scales), ready and available.",
			[]string{"namespace", "name", "kind"}, nil),
		info: prometheus.NewDesc(InfoName, "Always 1 for each MyApp, with its image as a label.",
			[]string{"namespace", "name", "image"}, nil),
		rollbacks: prometheus.NewDesc(RollbacksName,
			"Rollouts of each MyApp the operator rolled back to the last Ready pod template, since the manager started.",
			[]string{"namespace", "name"}, nil),
		canaryWeight: prometheus.NewDesc(CanaryWeightName,
			"The percentage of requests each MyApp's canary release sends to its new pod template, while one is recorded.",
			[]string{"namespace", "name"}, nil),
		canaryStep: prometheus.NewDesc(CanaryStepName,
			"The index, from 0, of the step each MyApp's canary release is at, while one is recorded.",
			[]string{"namespace", "name"}, nil),
		canaryPhase: prometheus.NewDesc(CanaryPhaseName,
			"The phase of each MyApp's canary release, while one is recorded: 1 for its phase, 0 for the others.",
			[]string{"namespace", "name", "phase"}, nil),
		canaryAnalysis: prometheus.NewDesc(CanaryAnalysisName,
			"Measurements of each MyApp's canary metric checks since the manager started, by check and outcome (pass, fail, error).",
			[]string{"namespace", "name", "check", "outcome"}, nil),
		apps:       map[types.NamespacedName]recorded{},
		rolledBack: map[types.NamespacedName]uint64{},
		measured:   map[types.NamespacedName]map[measurement]uint64{},
	}
}

// Register adds the metrics to reg.
func (m *MyApps) Register(reg prometheus.Registerer) error { return reg.Register(m) }

// MustRegisterWithControllerRuntime adds the metrics to controller-runtime's registry, the one
// the manager's metrics endpoint serves. It panics on a second registration of the same names.
func (m *MyApps) MustRegisterWithControllerRuntime() *MyApps {
	if err := m.Register(crmetrics.Registry); err != nil {
		panic(err)
	}
	return m
}

// Describe sends the descriptions of the metrics.
func (m *MyApps) Describe(ch chan<- *prometheus.Desc) {
	ch <- m.condition
	ch <- m.replicas
	ch <- m.info
	ch <- m.rollbacks
	ch <- m.canaryWeight
	ch <- m.canaryStep
	ch <- m.canaryPhase
	ch <- m.canaryAnalysis
}

// Collect sends the series of every MyApp recorded and not forgotten. It copies what it
// needs under the lock and sends after, so that a scrape never holds up a reconcile's Record.
func (m *MyApps) Collect(ch chan<- prometheus.Metric) {
	m.mu.RLock()
	apps := make(map[types.NamespacedName]recorded, len(m.apps))
	for k, r := range m.apps {
		apps[k] = r
	}
	rolledBack := make(map[types.NamespacedName]uint64, len(m.rolledBack))
	for k, n := range m.rolledBack {
		rolledBack[k] = n
	}
	measured := make(map[types.NamespacedName]map[measurement]uint64, len(m.measured))
	for k, byCheck := range m.measured {
		measured[k] = make(map[measurement]uint64, len(byCheck))
		for c, n := range byCheck {
			measured[k][c] = n
		}
	}
	m.mu.RUnlock()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		metric, err := prometheus.NewConstMetric(d, prometheus.GaugeValue, v, labels...)
		if err != nil {
			metric = prometheus.NewInvalidMetric(d, err)
		}
		ch <- metric
	}
	for key, r := range apps {
		ns, name := key.Namespace, key.Name
		for i, typ := range conditionTypes {
			for _, s := range conditionStatuses {
				v := 0.0
				if s == r.conditions[i] {
					v = 1
				}
				gauge(m.condition, v, ns, name, typ, string(s))
			}
		}
		gauge(m.replicas, float64(r.desired), ns, name, KindDesired)
		gauge(m.replicas, float64(r.ready), ns, name, KindReady)
		gauge(m.replicas, float64(r.available), ns, name, KindAvailable)
		gauge(m.info, 1, ns, name, r.image)
		// Every recorded MyApp has the series, 0 until a rollback, so that increase() sees
		// the first one.
		counter, err := prometheus.NewConstMetric(m.rollbacks, prometheus.CounterValue, float64(rolledBack[key]), ns, name)
		if err != nil {
			counter = prometheus.NewInvalidMetric(m.rollbacks, err)
		}
		ch <- counter
		if c := r.canary; c != nil {
			gauge(m.canaryWeight, float64(c.weight), ns, name)
			gauge(m.canaryStep, float64(c.step), ns, name)
			for _, p := range canaryPhases {
				v := 0.0
				if p == c.phase {
					v = 1
				}
				gauge(m.canaryPhase, v, ns, name, p)
			}
		}
		for c, n := range measured[key] {
			counter, err := prometheus.NewConstMetric(m.canaryAnalysis, prometheus.CounterValue, float64(n), ns, name, c.check, c.outcome)
			if err != nil {
				counter = prometheus.NewInvalidMetric(m.canaryAnalysis, err)
			}
			ch <- counter
		}
	}
}

// CanaryMeasured counts one measurement of the MyApp's canary check, by its outcome
// (OutcomePass, OutcomeFail, OutcomeError). A nil MyApps counts nothing.
func (m *MyApps) CanaryMeasured(key types.NamespacedName, check, outcome string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.measured[key] == nil {
		m.measured[key] = map[measurement]uint64{}
	}
	m.measured[key][measurement{check: check, outcome: outcome}]++
}

// RolledBack counts one rollback of the MyApp.
func (m *MyApps) RolledBack(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rolledBack[key]++
}

// Record sets the series of a MyApp from its status, as written, and the desired count of its
// Deployment (nil when there is none). A condition the status lacks is Unknown.
func (m *MyApps) Record(app *examplev1.MyApp, desired *int32) {
	r := recorded{ready: app.Status.ReadyReplicas, available: app.Status.AvailableReplicas, image: app.Spec.Image}
	for i, typ := range conditionTypes {
		r.conditions[i] = metav1.ConditionUnknown
		for _, c := range app.Status.Conditions {
			if c.Type == typ {
				r.conditions[i] = c.Status
			}
		}
	}
	if desired != nil {
		r.desired = *desired
	}
	if c := app.Status.Canary; c != nil {
		r.canary = &canaryRecorded{weight: c.Weight, step: c.Step, phase: c.Phase}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.apps[types.NamespacedName{Namespace: app.Namespace, Name: app.Name}] = r
}

// Forget removes every series of a MyApp: it was deleted.
func (m *MyApps) Forget(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.apps, key)
	delete(m.rolledBack, key)
	delete(m.measured, key)
}
