package status

import (
	"fmt"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// AutoscalerMetricsGrace is how long an autoscaler may go without metrics before the MyApp
// reports it. A new HorizontalPodAutoscaler has none until the metrics pipeline has scraped
// the new pods (about a minute with metrics-server's defaults), so a shorter wait would
// report every new autoscaled MyApp as Degraded.
const AutoscalerMetricsGrace = 5 * time.Minute

// metricsUnavailable are the autoscaler's ScalingActive reasons for metrics it could not get:
// expected for a while after the autoscaler or its pods start.
var metricsUnavailable = map[string]bool{
	"FailedGetResourceMetric":          true,
	"FailedGetContainerResourceMetric": true,
	"FailedGetPodsMetric":              true,
	"FailedGetObjectMetric":            true,
	"FailedGetExternalMetric":          true,
}

// autoscalerDegraded reports an autoscaler that cannot scale: AbleToScale or ScalingActive
// False, for missing metrics only once that has lasted AutoscalerMetricsGrace. The message is
// fixed per reason: the autoscaler's own message names a pod and changes with every pod, so
// it stays out of the status (`kubectl describe hpa` shows it).
func autoscalerDegraded(app *examplev1.MyApp, h *autoscalingv2.HorizontalPodAutoscaler, now metav1.Time) *Failure {
	c := autoscalerProblem(h)
	if c == nil || (metricsUnavailable[c.Reason] && now.Sub(c.LastTransitionTime.Time) < AutoscalerMetricsGrace) {
		return nil
	}
	var msg string
	switch {
	case metricsUnavailable[c.Reason]:
		msg = fmt.Sprintf("HorizontalPodAutoscaler %s has had no metrics for the pods for %s (%s): a metrics server must run in "+
			"the cluster, and %s must be set; `kubectl describe hpa %s` shows the autoscaler's own message",
			h.Name, AutoscalerMetricsGrace, c.Reason, requestsNeeded(app, h), h.Name)
	case c.Reason == "ScalingDisabled":
		msg = fmt.Sprintf("HorizontalPodAutoscaler %s does not scale (ScalingDisabled): its Deployment was scaled to 0 by hand; "+
			"scale the Deployment up for autoscaling to resume", h.Name)
	default:
		msg = fmt.Sprintf("HorizontalPodAutoscaler %s cannot scale (%s); `kubectl describe hpa %s` shows why", h.Name, c.Reason, h.Name)
	}
	return &Failure{Reason: examplev1.ReasonAutoscalerUnableToScale, Message: msg}
}

// requestsNeeded names the requests the autoscaler's utilisation targets are measured
// against: spec.resources.requests.cpu, .memory, or both; and the same requests of each
// sidecar, which the autoscaler adds to the application's (a pod with a sidecar that sets
// none has no utilisation).
func requestsNeeded(app *examplev1.MyApp, h *autoscalingv2.HorizontalPodAutoscaler) string {
	var resources []string
	for _, m := range h.Spec.Metrics {
		if m.Resource != nil && m.Resource.Target.Type == autoscalingv2.UtilizationMetricType {
			resources = append(resources, string(m.Resource.Name))
		}
	}
	if len(resources) == 0 {
		// An autoscaler made by this operator always has a target; one it reads before its
		// first apply may not.
		resources = []string{string(corev1.ResourceCPU)}
	}
	fields := []string{appField}
	for i := range app.Spec.InitContainers {
		if app.Spec.InitContainers[i].IsSidecar() {
			fields = append(fields, examplev1.InitContainerField(i))
		}
	}
	var names []string
	for _, f := range fields {
		for _, r := range resources {
			names = append(names, f+".resources.requests."+r)
		}
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// autoscalerProblem is the autoscaler's first condition that says it cannot scale, or nil.
func autoscalerProblem(h *autoscalingv2.HorizontalPodAutoscaler) *autoscalingv2.HorizontalPodAutoscalerCondition {
	if h == nil {
		return nil
	}
	for _, typ := range []autoscalingv2.HorizontalPodAutoscalerConditionType{autoscalingv2.AbleToScale, autoscalingv2.ScalingActive} {
		for i, c := range h.Status.Conditions {
			if c.Type == typ && c.Status == corev1.ConditionFalse {
				return &h.Status.Conditions[i]
			}
		}
	}
	return nil
}

// RecheckAfter is how long after now the status computed from obs may change with no new
// event: when an autoscaler's missing metrics reach AutoscalerMetricsGrace. Zero when
// nothing is pending.
func RecheckAfter(obs Observed, now metav1.Time) time.Duration {
	c := autoscalerProblem(obs.Autoscaler)
	if c == nil || !metricsUnavailable[c.Reason] {
		return 0
	}
	if left := AutoscalerMetricsGrace - now.Sub(c.LastTransitionTime.Time); left > 0 {
		return left
	}
	return 0
}
