package desired

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	autoscalingv2ac "k8s.io/client-go/applyconfigurations/autoscaling/v2"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// HorizontalPodAutoscaler is the autoscaler the MyApp wants, or nil while autoscaling is
// disabled (the operator then deletes the one it owns). It scales the MyApp's Deployment on
// average CPU utilisation, memory utilisation or both, at the pace spec.autoScaling.behavior
// sets. A MyApp that sets neither memory nor behavior gets the autoscaler 0.4 made.
func HorizontalPodAutoscaler(app *examplev1.MyApp) *autoscalingv2ac.HorizontalPodAutoscalerApplyConfiguration {
	if !AutoscalingEnabled(app) {
		return nil
	}
	as := app.Spec.AutoScaling
	minReplicas, maxReplicas := autoscalerRange(app)
	spec := autoscalingv2ac.HorizontalPodAutoscalerSpec().
		WithScaleTargetRef(autoscalingv2ac.CrossVersionObjectReference().
			WithAPIVersion("apps/v1").
			WithKind("Deployment").
			WithName(app.Name)).
		WithMinReplicas(minReplicas).
		WithMaxReplicas(maxReplicas)
	for _, t := range autoscalerTargets(as) {
		spec.WithMetrics(autoscalingv2ac.MetricSpec().
			WithType(autoscalingv2.ResourceMetricSourceType).
			WithResource(autoscalingv2ac.ResourceMetricSource().
				WithName(t.resource).
				WithTarget(autoscalingv2ac.MetricTarget().
					WithType(autoscalingv2.UtilizationMetricType).
					WithAverageUtilization(t.utilization))))
	}
	if b := autoscalerBehavior(as.Behavior); b != nil {
		spec.WithBehavior(b)
	}
	return autoscalingv2ac.HorizontalPodAutoscaler(app.Name, app.Namespace).
		WithLabels(Labels(app)).
		WithOwnerReferences(ownerReference(app)).
		WithSpec(spec)
}

// utilizationTarget is one resource the autoscaler scales on, and the average utilisation,
// as a percentage of the pods' request, it aims for.
type utilizationTarget struct {
	resource    corev1.ResourceName
	utilization int32
}

// autoscalerTargets are the resources the autoscaler scales on, CPU first: CPU unless its
// target is 0, memory when its target is set. An object stored before the rule that a CPU
// target of 0 needs a memory target (or with a target below 0, which no schema accepted)
// still gets a valid autoscaler: on CPU at the default target, as 0.4 made it.
func autoscalerTargets(as *examplev1.AutoScalingSpec) []utilizationTarget {
	var targets []utilizationTarget
	if cpu := valueOr(as.TargetCPUUtilizationPercentage, DefaultTargetCPUUtilizationPercentage); cpu > 0 {
		targets = append(targets, utilizationTarget{corev1.ResourceCPU, cpu})
	}
	if mem := valueOr(as.TargetMemoryUtilizationPercentage, 0); mem > 0 {
		targets = append(targets, utilizationTarget{corev1.ResourceMemory, mem})
	}
	if len(targets) == 0 {
		targets = append(targets, utilizationTarget{corev1.ResourceCPU, DefaultTargetCPUUtilizationPercentage})
	}
	return targets
}

// autoscalerBehavior is the autoscaler's spec.behavior, nil when the MyApp sets none (the
// HorizontalPodAutoscaler's defaults then apply, as they did before the field existed).
func autoscalerBehavior(b *examplev1.AutoScalingBehavior) *autoscalingv2ac.HorizontalPodAutoscalerBehaviorApplyConfiguration {
	if b == nil || (b.ScaleUp == nil && b.ScaleDown == nil) {
		return nil
	}
	out := autoscalingv2ac.HorizontalPodAutoscalerBehavior()
	if b.ScaleUp != nil {
		out.WithScaleUp(scalingRules(b.ScaleUp))
	}
	if b.ScaleDown != nil {
		out.WithScaleDown(scalingRules(b.ScaleDown))
	}
	return out
}

// scalingRules are one direction's rules. What the MyApp leaves out the API server defaults
// for the direction (an empty policy list too, which the schema refuses but an object stored
// without the schema may hold).
func scalingRules(r *examplev1.ScalingRules) *autoscalingv2ac.HPAScalingRulesApplyConfiguration {
	out := autoscalingv2ac.HPAScalingRules()
	if r.StabilizationWindowSeconds != nil {
		out.WithStabilizationWindowSeconds(*r.StabilizationWindowSeconds)
	}
	if r.SelectPolicy != nil {
		out.WithSelectPolicy(autoscalingv2.ScalingPolicySelect(*r.SelectPolicy))
	}
	for _, p := range r.Policies {
		out.WithPolicies(autoscalingv2ac.HPAScalingPolicy().
			WithType(autoscalingv2.HPAScalingPolicyType(p.Type)).
			WithValue(p.Value).
			WithPeriodSeconds(p.PeriodSeconds))
	}
	return out
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
