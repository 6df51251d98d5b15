package desired

import (
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

func TestHorizontalPodAutoscaler(t *testing.T) {
	cpu := func(target int32) metric { return metric{corev1.ResourceCPU, target} }
	memory := func(target int32) metric { return metric{corev1.ResourceMemory, target} }
	cases := map[string]struct {
		autoScaling      *examplev1.AutoScalingSpec
		wantNil          bool
		wantMin, wantMax int32
		wantMetrics      []metric
	}{
		"no autoscaling":        {wantNil: true},
		"disabled":              {autoScaling: &examplev1.AutoScalingSpec{MaxReplicas: ptr(int32(4))}, wantNil: true},
		"enabled with all set":  {autoScaling: &examplev1.AutoScalingSpec{Enabled: true, MinReplicas: ptr(int32(2)), MaxReplicas: ptr(int32(7)), TargetCPUUtilizationPercentage: ptr(int32(60))}, wantMin: 2, wantMax: 7, wantMetrics: []metric{cpu(60)}},
		"enabled, defaults":     {autoScaling: &examplev1.AutoScalingSpec{Enabled: true, MaxReplicas: ptr(int32(5))}, wantMin: 1, wantMax: 5, wantMetrics: []metric{cpu(80)}},
		"cpu and memory":        {autoScaling: &examplev1.AutoScalingSpec{Enabled: true, MaxReplicas: ptr(int32(5)), TargetCPUUtilizationPercentage: ptr(int32(70)), TargetMemoryUtilizationPercentage: ptr(int32(90))}, wantMin: 1, wantMax: 5, wantMetrics: []metric{cpu(70), memory(90)}},
		"memory, cpu defaulted": {autoScaling: &examplev1.AutoScalingSpec{Enabled: true, MaxReplicas: ptr(int32(5)), TargetMemoryUtilizationPercentage: ptr(int32(75))}, wantMin: 1, wantMax: 5, wantMetrics: []metric{cpu(80), memory(75)}},
		"memory alone":          {autoScaling: &examplev1.AutoScalingSpec{Enabled: true, MaxReplicas: ptr(int32(5)), TargetCPUUtilizationPercentage: ptr(int32(0)), TargetMemoryUtilizationPercentage: ptr(int32(75))}, wantMin: 1, wantMax: 5, wantMetrics: []metric{memory(75)}},
		// Objects stored before validation existed still get a valid autoscaler.
		"no maximum":            {autoScaling: &examplev1.AutoScalingSpec{Enabled: true, MinReplicas: ptr(int32(3))}, wantMin: 3, wantMax: 3, wantMetrics: []metric{cpu(80)}},
		"minimum above maximum": {autoScaling: &examplev1.AutoScalingSpec{Enabled: true, MinReplicas: ptr(int32(6)), MaxReplicas: ptr(int32(2))}, wantMin: 6, wantMax: 6, wantMetrics: []metric{cpu(80)}},
		"no target at all":      {autoScaling: &examplev1.AutoScalingSpec{Enabled: true, MaxReplicas: ptr(int32(2)), TargetCPUUtilizationPercentage: ptr(int32(0))}, wantMin: 1, wantMax: 2, wantMetrics: []metric{cpu(80)}},
		"negative targets":      {autoScaling: &examplev1.AutoScalingSpec{Enabled: true, MaxReplicas: ptr(int32(2)), TargetCPUUtilizationPercentage: ptr(int32(-1)), TargetMemoryUtilizationPercentage: ptr(int32(-1))}, wantMin: 1, wantMax: 2, wantMetrics: []metric{cpu(80)}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			app := newApp(func(a *examplev1.MyApp) { a.Spec.AutoScaling = tc.autoScaling })
			h := HorizontalPodAutoscaler(app)
			if tc.wantNil {
				g.Expect(h).To(BeNil())
				return
			}
			g.Expect(*h.Name).To(Equal("web"))
			g.Expect(h.Labels).To(Equal(Labels(app)))
			g.Expect(h.OwnerReferences).To(HaveLen(1))
			g.Expect(*h.Spec.ScaleTargetRef.Kind).To(Equal("Deployment"))
			g.Expect(*h.Spec.ScaleTargetRef.APIVersion).To(Equal("apps/v1"))
			g.Expect(*h.Spec.ScaleTargetRef.Name).To(Equal("web"))
			g.Expect(*h.Spec.MinReplicas).To(Equal(tc.wantMin))
			g.Expect(*h.Spec.MaxReplicas).To(Equal(tc.wantMax))
			var got []metric
			for _, m := range h.Spec.Metrics {
				g.Expect(*m.Type).To(Equal(autoscalingv2.ResourceMetricSourceType))
				g.Expect(*m.Resource.Target.Type).To(Equal(autoscalingv2.UtilizationMetricType))
				got = append(got, metric{*m.Resource.Name, *m.Resource.Target.AverageUtilization})
			}
			g.Expect(got).To(Equal(tc.wantMetrics))
			// Without spec.autoScaling.behavior the autoscaler is the one 0.4 made: no behavior.
			g.Expect(h.Spec.Behavior).To(BeNil())
		})
	}
}

// metric is one utilisation target of an autoscaler.
type metric struct {
	resource corev1.ResourceName
	target   int32
}

func TestHorizontalPodAutoscalerBehavior(t *testing.T) {
	pods := examplev1.ScalingPolicy{Type: examplev1.ScalingPolicyPods, Value: 2, PeriodSeconds: 60}
	percent := examplev1.ScalingPolicy{Type: examplev1.ScalingPolicyPercent, Value: 10, PeriodSeconds: 30}
	disabled := examplev1.ScalingPolicySelectDisabled
	cases := map[string]struct {
		behavior *examplev1.AutoScalingBehavior
		want     *autoscalingv2.HorizontalPodAutoscalerBehavior
	}{
		"unset":                 {},
		"neither direction set": {behavior: &examplev1.AutoScalingBehavior{}},
		"scale down only": {
			behavior: &examplev1.AutoScalingBehavior{ScaleDown: &examplev1.ScalingRules{StabilizationWindowSeconds: ptr(int32(60)), Policies: []examplev1.ScalingPolicy{pods, percent}}},
			want: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr(int32(60)), Policies: []autoscalingv2.HPAScalingPolicy{
				{Type: autoscalingv2.PodsScalingPolicy, Value: 2, PeriodSeconds: 60}, {Type: autoscalingv2.PercentScalingPolicy, Value: 10, PeriodSeconds: 30}}}},
		},
		"scale up disabled": {
			behavior: &examplev1.AutoScalingBehavior{ScaleUp: &examplev1.ScalingRules{SelectPolicy: &disabled}},
			want:     &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: &autoscalingv2.HPAScalingRules{SelectPolicy: ptr(autoscalingv2.DisabledPolicySelect)}},
		},
		// A window of 0 is a value, not unset: it is sent.
		"zero window": {
			behavior: &examplev1.AutoScalingBehavior{ScaleDown: &examplev1.ScalingRules{StabilizationWindowSeconds: ptr(int32(0))}},
			want:     &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr(int32(0))}},
		},
		"an empty direction": {
			behavior: &examplev1.AutoScalingBehavior{ScaleUp: &examplev1.ScalingRules{}},
			want:     &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: &autoscalingv2.HPAScalingRules{}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			app := newApp(func(a *examplev1.MyApp) {
				a.Spec.AutoScaling = &examplev1.AutoScalingSpec{Enabled: true, MaxReplicas: ptr(int32(4)), Behavior: tc.behavior}
			})
			b, err := json.Marshal(HorizontalPodAutoscaler(app).Spec.Behavior)
			g.Expect(err).NotTo(HaveOccurred())
			var got *autoscalingv2.HorizontalPodAutoscalerBehavior
			g.Expect(json.Unmarshal(b, &got)).To(Succeed())
			g.Expect(got).To(Equal(tc.want))
		})
	}
}
