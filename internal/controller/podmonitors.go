package controller

import (
	"context"
	"fmt"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	monitoringv1ac "github.com/prometheus-operator/prometheus-operator/pkg/client/applyconfiguration/monitoring/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
	"github.com/example/myapp-operator/internal/ssa"
	"github.com/example/myapp-operator/internal/status"
)

// The app's own metrics (spec.metrics) are scraped through a PodMonitor of the Prometheus
// Operator, an optional kind: without its CRD the MyApp is Degraded, naming it, and the
// app runs as before; a CRD installed later is noticed within optionalAPILookInterval.

// +kubebuilder:rbac:groups=monitoring.coreos.com,resources=podmonitors,verbs=get;list;watch;create;patch;delete

const kindPodMonitor = "PodMonitor"

var podMonitorKind = childKind[*monitoringv1.PodMonitor, *monitoringv1ac.PodMonitorApplyConfiguration]{name: kindPodMonitor,
	newObj: func() *monitoringv1.PodMonitor { return &monitoringv1.PodMonitor{} }, extract: extractPodMonitor,
	cache: func(r *MyAppReconciler) client.Reader { return r.podMonitorCache }}

// podMonitorRetry is how soon a MyApp whose spec.metrics waits for the Prometheus Operator's
// CRDs is reconciled again; their probe reconciles every MyApp as soon as it finds them.
const podMonitorRetry = gatewayAPIRetry

// reconcileMetrics brings the MyApp's PodMonitor to spec.metrics: applied while the field is
// set and the cluster serves PodMonitors, deleted once the field is removed.
func (r *MyAppReconciler) reconcileMetrics(ctx context.Context, app *examplev1.MyApp, obs *status.Observed, out *outcome) {
	var cfg *monitoringv1ac.PodMonitorApplyConfiguration
	if app.Spec.Metrics != nil {
		cfg = desired.PodMonitor(app)
	}
	reconcileOptionalChild(ctx, r, app, obs, out, r.podMonitors, podMonitorKind, cfg, cfg != nil, &podMonitorsMissingError{})
}

// podMonitorsMissingError: the MyApp asks for its metrics to be scraped and the cluster does
// not serve the Prometheus Operator's PodMonitors.
type podMonitorsMissingError struct{}

func (e *podMonitorsMissingError) Error() string {
	return "spec.metrics asks for a PodMonitor, and the cluster does not serve the Prometheus Operator's PodMonitors " +
		"(monitoring.coreos.com/v1): install the Prometheus Operator's CRDs, or remove spec.metrics. The app runs without it"
}

// extractPodMonitor reads back what the field manager owns of a PodMonitor, in the shape
// desired.PodMonitor sends: its labels and owner references, the selector, and the metrics
// endpoints. The Prometheus Operator publishes no extractor; its CRD's lists are atomic, so
// an endpoint list someone else changed is theirs and no longer reads back as the manager's.
func extractPodMonitor(pm *monitoringv1.PodMonitor, owner string) (*monitoringv1ac.PodMonitorApplyConfiguration, error) {
	if pm == nil {
		return nil, fmt.Errorf("no PodMonitor to read")
	}
	out := monitoringv1ac.PodMonitor(pm.Name, pm.Namespace)
	for k, v := range pm.Labels {
		if ssa.Owns(pm, owner, "f:metadata", "f:labels", "f:"+k) {
			out.WithLabels(map[string]string{k: v})
		}
	}
	for _, ref := range pm.OwnerReferences {
		if ssa.Owns(pm, owner, "f:metadata", "f:ownerReferences", fmt.Sprintf(`k:{"uid":"%s"}`, ref.UID)) {
			o := metav1ac.OwnerReference().WithAPIVersion(ref.APIVersion).WithKind(ref.Kind).WithName(ref.Name).WithUID(ref.UID)
			if ref.Controller != nil {
				o.WithController(*ref.Controller)
			}
			if ref.BlockOwnerDeletion != nil {
				o.WithBlockOwnerDeletion(*ref.BlockOwnerDeletion)
			}
			out.WithOwnerReferences(o)
		}
	}
	spec := monitoringv1ac.PodMonitorSpec()
	owned := false
	if ssa.Owns(pm, owner, "f:spec", "f:selector") {
		sel := metav1ac.LabelSelector()
		for k, v := range pm.Spec.Selector.MatchLabels {
			sel.WithMatchLabels(map[string]string{k: v})
		}
		spec.WithSelector(sel)
		owned = true
	}
	if ssa.Owns(pm, owner, "f:spec", "f:podMetricsEndpoints") {
		for _, e := range pm.Spec.PodMetricsEndpoints {
			ep := monitoringv1ac.PodMetricsEndpoint()
			if e.Port != nil {
				ep.WithPort(*e.Port)
			}
			if e.Path != "" {
				ep.WithPath(e.Path)
			}
			if e.Interval != "" {
				ep.WithInterval(e.Interval)
			}
			spec.WithPodMetricsEndpoints(ep)
		}
		owned = true
	}
	if owned {
		out.WithSpec(spec)
	}
	return out, nil
}

// setupPodMonitors gives the reconciler its reads of PodMonitors, from the cache of the
// optional kinds, and the watch that starts once the cluster serves them. The operator reads
// nothing of a PodMonitor's status.
func (r *MyAppReconciler) setupPodMonitors(optional optionalKinds) (err error) {
	r.podMonitorCache = boundedReader{Reader: optional.cache, what: "PodMonitors", wait: cacheSyncWait}
	r.podMonitors, err = optional.api(monitoringv1.SchemeGroupVersion.WithKind(kindPodMonitor), "the Prometheus Operator's PodMonitors",
		&monitoringv1.PodMonitor{}, nil)
	return err
}
