package desired

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	autoscalingv2ac "k8s.io/client-go/applyconfigurations/autoscaling/v2"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// HorizontalPodAutoscaler is the autoscaler the MyApp wants, or nil while autoscaling is
// disabled (the operator then deletes the one it owns). It scales the MyApp's Deployment on
// average CPU utilisation.
func HorizontalPodAutoscaler(app *examplev1.MyApp) *autoscalingv2ac.HorizontalPodAutoscalerApplyConfiguration {
	if !AutoscalingEnabled(app) {
		return nil
	}
	as := app.Spec.AutoScaling
	minReplicas := valueOr(as.MinReplicas, DefaultMinReplicas)
	// The API server rejects a MyApp without maxReplicas or with minReplicas above it; an
	// object stored before that rule still gets a valid autoscaler.
	maxReplicas := max(valueOr(as.MaxReplicas, minReplicas), minReplicas)
	target := valueOr(as.TargetCPUUtilizationPercentage, DefaultTargetCPUUtilizationPercentage)

	return autoscalingv2ac.HorizontalPodAutoscaler(app.Name, app.Namespace).
		WithLabels(Labels(app)).
		WithOwnerReferences(ownerReference(app)).
		WithSpec(autoscalingv2ac.HorizontalPodAutoscalerSpec().
			WithScaleTargetRef(autoscalingv2ac.CrossVersionObjectReference().
				WithAPIVersion("apps/v1").
				WithKind("Deployment").
				WithName(app.Name)).
			WithMinReplicas(minReplicas).
			WithMaxReplicas(maxReplicas).
			WithMetrics(autoscalingv2ac.MetricSpec().
				WithType(autoscalingv2.ResourceMetricSourceType).
				WithResource(autoscalingv2ac.ResourceMetricSource().
					WithName(corev1.ResourceCPU).
					WithTarget(autoscalingv2ac.MetricTarget().
						WithType(autoscalingv2.UtilizationMetricType).
						WithAverageUtilization(target)))))
}
