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
	minReplicas, maxReplicas := autoscalerRange(app)
	target := valueOr(app.Spec.AutoScaling.TargetCPUUtilizationPercentage, DefaultTargetCPUUtilizationPercentage)

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

// autoscalerRange is the autoscaler's [minReplicas, maxReplicas]. The API server rejects a
// MyApp without maxReplicas or with minReplicas above it; an object stored before that rule
// still gets a valid range.
func autoscalerRange(app *examplev1.MyApp) (minReplicas, maxReplicas int32) {
	as := app.Spec.AutoScaling
	if as == nil {
		return DefaultMinReplicas, DefaultMinReplicas
	}
	minReplicas = valueOr(as.MinReplicas, DefaultMinReplicas)
	return minReplicas, max(valueOr(as.MaxReplicas, minReplicas), minReplicas)
}
