package status

import (
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

func TestRequestsNeeded(t *testing.T) {
	utilization := func(name corev1.ResourceName) autoscalingv2.MetricSpec {
		return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
			Name: name, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType}}}
	}
	cases := map[string]struct {
		metrics []autoscalingv2.MetricSpec
		want    string
	}{
		"cpu":               {[]autoscalingv2.MetricSpec{utilization(corev1.ResourceCPU)}, "spec.resources.requests.cpu"},
		"memory":            {[]autoscalingv2.MetricSpec{utilization(corev1.ResourceMemory)}, "spec.resources.requests.memory"},
		"both":              {[]autoscalingv2.MetricSpec{utilization(corev1.ResourceCPU), utilization(corev1.ResourceMemory)}, "spec.resources.requests.cpu and spec.resources.requests.memory"},
		"none read yet":     {nil, "spec.resources.requests.cpu"},
		"not a utilisation": {[]autoscalingv2.MetricSpec{{Type: autoscalingv2.PodsMetricSourceType}}, "spec.resources.requests.cpu"},
		"with a sidecar, whose requests the autoscaler adds; not an init container's": {
			[]autoscalingv2.MetricSpec{utilization(corev1.ResourceCPU), utilization(corev1.ResourceMemory)},
			"spec.resources.requests.cpu, spec.resources.requests.memory, spec.initContainers[1].resources.requests.cpu and spec.initContainers[1].resources.requests.memory"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := &autoscalingv2.HorizontalPodAutoscaler{Spec: autoscalingv2.HorizontalPodAutoscalerSpec{Metrics: tc.metrics}}
			app := &examplev1.MyApp{}
			if strings.Contains(name, "sidecar") {
				app.Spec.InitContainers = []examplev1.InitContainer{{Name: "migrate"}, {Name: "proxy", RestartPolicy: ptrTo(examplev1.ContainerRestartPolicyAlways)}}
			}
			if got := requestsNeeded(app, h); got != tc.want {
				t.Errorf("requestsNeeded = %q, want %q", got, tc.want)
			}
		})
	}
}
