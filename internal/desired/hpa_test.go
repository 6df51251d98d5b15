package desired

import (
	"testing"

	. "github.com/onsi/gomega"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

func TestHorizontalPodAutoscaler(t *testing.T) {
	cases := map[string]struct {
		autoScaling                  *examplev1.AutoScalingSpec
		wantNil                      bool
		wantMin, wantMax, wantTarget int32
	}{
		"no autoscaling":       {wantNil: true},
		"disabled":             {autoScaling: &examplev1.AutoScalingSpec{MaxReplicas: ptr(int32(4))}, wantNil: true},
		"enabled with all set": {autoScaling: &examplev1.AutoScalingSpec{Enabled: true, MinReplicas: ptr(int32(2)), MaxReplicas: ptr(int32(7)), TargetCPUUtilizationPercentage: ptr(int32(60))}, wantMin: 2, wantMax: 7, wantTarget: 60},
		"enabled, defaults":    {autoScaling: &examplev1.AutoScalingSpec{Enabled: true, MaxReplicas: ptr(int32(5))}, wantMin: 1, wantMax: 5, wantTarget: 80},
		// Objects stored before validation existed still get a valid autoscaler.
		"no maximum":            {autoScaling: &examplev1.AutoScalingSpec{Enabled: true, MinReplicas: ptr(int32(3))}, wantMin: 3, wantMax: 3, wantTarget: 80},
		"minimum above maximum": {autoScaling: &examplev1.AutoScalingSpec{Enabled: true, MinReplicas: ptr(int32(6)), MaxReplicas: ptr(int32(2))}, wantMin: 6, wantMax: 6, wantTarget: 80},
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
			g.Expect(h.Spec.Metrics).To(HaveLen(1))
			m := h.Spec.Metrics[0]
			g.Expect(*m.Type).To(Equal(autoscalingv2.ResourceMetricSourceType))
			g.Expect(*m.Resource.Name).To(Equal(corev1.ResourceCPU))
			g.Expect(*m.Resource.Target.Type).To(Equal(autoscalingv2.UtilizationMetricType))
			g.Expect(*m.Resource.Target.AverageUtilization).To(Equal(tc.wantTarget))
		})
	}
}
