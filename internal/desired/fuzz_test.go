package desired

import (
	"errors"
	"testing"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// FuzzBuilders feeds the builders arbitrary specs, including ones the API server would
// reject: they must never panic, must either succeed or report an InvalidSpecError, and
// must respect the replicas ownership rule.
func FuzzBuilders(f *testing.F) {
	f.Add(int32(1), "nginx:1.27", int32(8080), "500m", "256Mi", "1", "1Gi", "FOO", "bar", "ClusterIP", true, int32(1), int32(5), int32(80))
	f.Add(int32(0), "", int32(-1), "-1", "1e1000000", "", "", "", "", "Weird", false, int32(-5), int32(0), int32(0))
	f.Add(int32(100), "registry:5000/a/b@sha256:0123456789abcdef0123456789abcdef", int32(65535), "0.5", "1.5Gi", "", "", "1BAD", "", "NodePort", true, int32(10), int32(2), int32(101))
	f.Fuzz(func(t *testing.T, replicas int32, image string, port int32, reqCPU, reqMem, limCPU, limMem, envName, envValue, svcType string,
		autoscale bool, minR, maxR, target int32) {
		app := newApp(func(a *examplev1.MyApp) {
			a.Spec = examplev1.MyAppSpec{
				Replicas:    &replicas,
				Image:       image,
				Port:        &port,
				ServiceType: examplev1.ServiceType(svcType),
				Resources: &examplev1.ResourceRequirements{
					Requests: &examplev1.ResourceList{CPU: reqCPU, Memory: reqMem},
					Limits:   &examplev1.ResourceList{CPU: limCPU, Memory: limMem},
				},
				Env: []examplev1.EnvVar{{Name: envName, Value: &envValue}},
				AutoScaling: &examplev1.AutoScalingSpec{
					Enabled: autoscale, MinReplicas: &minR, MaxReplicas: &maxR, TargetCPUUtilizationPercentage: &target,
				},
			}
		})
		d, err := Deployment(app)
		if err != nil {
			var invalid *InvalidSpecError
			if !errors.As(err, &invalid) || invalid.Field == "" {
				t.Fatalf("want an InvalidSpecError naming a field, got %v", err)
			}
		} else if autoscale != (d.Spec.Replicas == nil) {
			t.Fatalf("autoscaling %v but Deployment replicas %v", autoscale, d.Spec.Replicas)
		}
		_ = Service(app)
		h := HorizontalPodAutoscaler(app)
		if autoscale != (h != nil) {
			t.Fatalf("autoscaling %v but autoscaler %v", autoscale, h)
		}
		if h != nil && *h.Spec.MaxReplicas < *h.Spec.MinReplicas {
			t.Fatalf("maxReplicas %d below minReplicas %d", *h.Spec.MaxReplicas, *h.Spec.MinReplicas)
		}
	})
}
