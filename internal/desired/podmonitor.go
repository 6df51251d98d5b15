package desired

import (
	"cmp"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	monitoringv1ac "github.com/prometheus-operator/prometheus-operator/pkg/client/applyconfiguration/monitoring/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// DefaultMetricsPath is the path of spec.metrics when it names none, as Prometheus scrapes.
const DefaultMetricsPath = "/metrics"

// PodMonitor is the Prometheus Operator's PodMonitor that has the app's metrics scraped: every
// pod of the MyApp (its Deployment's selector, so a canary's pods too) at the container port
// spec.metrics names and its path, at its interval when it sets one. The port is named, since
// the Prometheus Operator keeps only the pods' targets whose container port has that name.
func PodMonitor(app *examplev1.MyApp) *monitoringv1ac.PodMonitorApplyConfiguration {
	m := app.Spec.Metrics
	endpoint := monitoringv1ac.PodMetricsEndpoint().
		WithPort(MetricsPortName(m)).
		WithPath(MetricsPath(m))
	if m.Interval != "" {
		endpoint.WithInterval(monitoringv1.Duration(m.Interval))
	}
	return monitoringv1ac.PodMonitor(app.Name, app.Namespace).
		WithLabels(Labels(app)).
		WithOwnerReferences(ownerReference(app)).
		WithSpec(monitoringv1ac.PodMonitorSpec().
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(SelectorLabels(app))).
			WithPodMetricsEndpoints(endpoint))
}

// MetricsPortName is the container port spec.metrics names: http, the MyApp's port, unless it
// names another.
func MetricsPortName(m *examplev1.AppMetrics) string { return cmp.Or(m.PortName, PortName) }

// MetricsPath is the path of spec.metrics, DefaultMetricsPath unless it names one.
func MetricsPath(m *examplev1.AppMetrics) string { return cmp.Or(m.Path, DefaultMetricsPath) }
