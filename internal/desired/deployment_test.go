package desired

import (
	"encoding/json"
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

func TestDeployment(t *testing.T) {
	cases := map[string]struct {
		mutate func(*examplev1.MyApp)
		check  func(g Gomega, c *corev1ac.ContainerApplyConfiguration, replicas *int32)
	}{
		"defaults": {
			check: func(g Gomega, c *corev1ac.ContainerApplyConfiguration, replicas *int32) {
				g.Expect(replicas).To(HaveValue(Equal(int32(2))))
				g.Expect(*c.Image).To(Equal("nginx:1.27"))
				g.Expect(c.Ports).To(HaveLen(1))
				g.Expect(*c.Ports[0].ContainerPort).To(Equal(int32(8080)))
				g.Expect(*c.Ports[0].Name).To(Equal(PortName))
				g.Expect(c.Env).To(BeEmpty())
				g.Expect(c.Resources).To(BeNil())
			},
		},
		"fields the API server defaults are defaulted here too": {
			mutate: func(a *examplev1.MyApp) { a.Spec.Replicas, a.Spec.Port = nil, nil },
			check: func(g Gomega, c *corev1ac.ContainerApplyConfiguration, replicas *int32) {
				g.Expect(replicas).To(HaveValue(Equal(DefaultReplicas)))
				g.Expect(*c.Ports[0].ContainerPort).To(Equal(DefaultPort))
			},
		},
		"autoscaling leaves replicas to the autoscaler": {
			mutate: func(a *examplev1.MyApp) {
				a.Spec.AutoScaling = &examplev1.AutoScalingSpec{Enabled: true, MaxReplicas: ptr(int32(5))}
			},
			check: func(g Gomega, _ *corev1ac.ContainerApplyConfiguration, replicas *int32) {
				g.Expect(replicas).To(BeNil())
			},
		},
		"autoscaling present but disabled keeps replicas": {
			mutate: func(a *examplev1.MyApp) { a.Spec.AutoScaling = &examplev1.AutoScalingSpec{MaxReplicas: ptr(int32(5))} },
			check: func(g Gomega, _ *corev1ac.ContainerApplyConfiguration, replicas *int32) {
				g.Expect(replicas).To(HaveValue(Equal(int32(2))))
			},
		},
		"env: literal, secret and config map values": {
			mutate: func(a *examplev1.MyApp) {
				a.Spec.Env = []examplev1.EnvVar{
					{Name: "MODE", Value: ptr("prod")},
					{Name: "EMPTY"},
					{Name: "PASSWORD", ValueFrom: &examplev1.EnvVarSource{SecretKeyRef: &examplev1.KeySelector{Name: "db", Key: "pw"}}},
					{Name: "COLOR", ValueFrom: &examplev1.EnvVarSource{ConfigMapKeyRef: &examplev1.KeySelector{Name: "ui", Key: "color"}}},
				}
			},
			check: func(g Gomega, c *corev1ac.ContainerApplyConfiguration, _ *int32) {
				g.Expect(c.Env).To(HaveLen(4))
				g.Expect(*c.Env[0].Value).To(Equal("prod"))
				g.Expect(c.Env[1].Value).To(BeNil())
				g.Expect(c.Env[1].ValueFrom).To(BeNil())
				g.Expect(*c.Env[2].ValueFrom.SecretKeyRef.Name).To(Equal("db"))
				g.Expect(*c.Env[2].ValueFrom.SecretKeyRef.Key).To(Equal("pw"))
				g.Expect(*c.Env[3].ValueFrom.ConfigMapKeyRef.Name).To(Equal("ui"))
				g.Expect(*c.Env[3].ValueFrom.ConfigMapKeyRef.Key).To(Equal("color"))
			},
		},
		"resources are parsed as quantities": {
			mutate: func(a *examplev1.MyApp) {
				a.Spec.Resources = &examplev1.ResourceRequirements{
					Limits:   map[corev1.ResourceName]examplev1.Quantity{"cpu": "1", "memory": "536870912", "nvidia.com/gpu": "2"},
					Requests: map[corev1.ResourceName]examplev1.Quantity{"cpu": "250m"},
				}
			},
			check: func(g Gomega, c *corev1ac.ContainerApplyConfiguration, _ *int32) {
				g.Expect(*c.Resources.Limits).To(Equal(corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("536870912"),
					"nvidia.com/gpu": resource.MustParse("2"),
				}))
				g.Expect(*c.Resources.Requests).To(Equal(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}))
			},
		},
		"empty resource lists send no resources": {
			mutate: func(a *examplev1.MyApp) {
				a.Spec.Resources = &examplev1.ResourceRequirements{Limits: map[corev1.ResourceName]examplev1.Quantity{}}
			},
			check: func(g Gomega, c *corev1ac.ContainerApplyConfiguration, _ *int32) {
				g.Expect(c.Resources).To(BeNil())
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			app := newApp(tc.mutate)
			d, err := Deployment(app, false)
			g.Expect(err).NotTo(HaveOccurred())

			g.Expect(*d.Name).To(Equal("web"))
			g.Expect(*d.Namespace).To(Equal("shop"))
			g.Expect(d.Labels).To(Equal(Labels(app)))
			g.Expect(d.OwnerReferences).To(HaveLen(1))
			g.Expect(*d.OwnerReferences[0].Controller).To(BeTrue())
			g.Expect(*d.OwnerReferences[0].UID).To(BeEquivalentTo("uid-1"))
			g.Expect(d.Spec.Selector.MatchLabels).To(Equal(SelectorLabels(app)))
			g.Expect(d.Spec.Template.Labels).To(Equal(Labels(app)))
			g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue(LabelSelector, "web"))
			g.Expect(d.Spec.Template.Spec.Containers).To(HaveLen(1))
			tc.check(g, &d.Spec.Template.Spec.Containers[0], d.Spec.Replicas)
		})
	}
}

func TestDeploymentInvalidSpec(t *testing.T) {
	cases := map[string]struct {
		resources *examplev1.ResourceRequirements
		field     string
	}{
		"unparsable cpu limit": {
			resources: &examplev1.ResourceRequirements{Limits: map[corev1.ResourceName]examplev1.Quantity{"cpu": "lots"}},
			field:     "spec.resources.limits.cpu",
		},
		"negative memory request": {
			resources: &examplev1.ResourceRequirements{Requests: map[corev1.ResourceName]examplev1.Quantity{"memory": "-1Gi"}},
			field:     "spec.resources.requests.memory",
		},
		"request above limit": {
			resources: &examplev1.ResourceRequirements{
				Limits:   map[corev1.ResourceName]examplev1.Quantity{"cpu": "100m", "memory": "1Gi"},
				Requests: map[corev1.ResourceName]examplev1.Quantity{"cpu": "200m", "memory": "2Gi"},
			},
			field: "spec.resources.requests.cpu",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			_, err := Deployment(newApp(func(a *examplev1.MyApp) { a.Spec.Resources = tc.resources }), false)
			var invalid *InvalidSpecError
			g.Expect(errors.As(err, &invalid)).To(BeTrue(), "error %v", err)
			g.Expect(invalid.Field).To(Equal(tc.field))
		})
	}
}

// TestDeploymentTiming: minReadySeconds and progressDeadlineSeconds are applied as a pair
// once the MyApp sets either, the other at its Kubernetes default; set neither, and the
// Deployment's own values stand. A pair that Kubernetes would refuse (stored before the
// rule) is an InvalidSpecError naming the field.
func TestDeploymentTiming(t *testing.T) {
	cases := map[string]struct {
		minReady, deadline *int32
		want               *[2]int32 // minReadySeconds, progressDeadlineSeconds; nil: neither sent
		invalid            bool
	}{
		"neither":                             {},
		"min ready only":                      {minReady: ptr(int32(5)), want: &[2]int32{5, DefaultProgressDeadlineSeconds}},
		"deadline only":                       {deadline: ptr(int32(60)), want: &[2]int32{DefaultMinReadySeconds, 60}},
		"both":                                {minReady: ptr(int32(10)), deadline: ptr(int32(11)), want: &[2]int32{10, 11}},
		"deadline too soon":                   {minReady: ptr(int32(10)), deadline: ptr(int32(10)), invalid: true},
		"min ready past the default deadline": {minReady: ptr(int32(600)), invalid: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			d, err := Deployment(newApp(func(a *examplev1.MyApp) {
				a.Spec.MinReadySeconds, a.Spec.ProgressDeadlineSeconds = tc.minReady, tc.deadline
			}), false)
			if tc.invalid {
				var invalid *InvalidSpecError
				g.Expect(errors.As(err, &invalid)).To(BeTrue(), "error %v", err)
				g.Expect(invalid.Field).To(Equal("spec.progressDeadlineSeconds"))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			if tc.want == nil {
				g.Expect(d.Spec.MinReadySeconds).To(BeNil())
				g.Expect(d.Spec.ProgressDeadlineSeconds).To(BeNil())
				return
			}
			g.Expect(*d.Spec.MinReadySeconds).To(Equal(tc.want[0]))
			g.Expect(*d.Spec.ProgressDeadlineSeconds).To(Equal(tc.want[1]))
		})
	}
}

// TestPreStopSleepOverGrace: a sleep longer than the grace period (stored before the rule)
// is an InvalidSpecError naming the field, never a template the API server refuses.
func TestPreStopSleepOverGrace(t *testing.T) {
	g := NewWithT(t)
	_, err := Deployment(newApp(func(a *examplev1.MyApp) {
		a.Spec.Lifecycle = &examplev1.Lifecycle{PreStop: &examplev1.LifecycleHandler{Sleep: &examplev1.SleepAction{Seconds: 31}}}
	}), false)
	var invalid *InvalidSpecError
	g.Expect(errors.As(err, &invalid)).To(BeTrue(), "error %v", err)
	g.Expect(invalid.Field).To(Equal("spec.lifecycle.preStop.sleep.seconds"))
	g.Expect(invalid.Message).To(ContainSubstring("(30)"))
}

// TestVolumeMountOfNoVolume: a mount that names no volume (stored before the rule) is an
// InvalidSpecError, never a pod the API server refuses.
func TestVolumeMountOfNoVolume(t *testing.T) {
	g := NewWithT(t)
	_, err := Deployment(newApp(func(a *examplev1.MyApp) {
		a.Spec.VolumeMounts = []examplev1.VolumeMount{{Name: "gone", MountPath: "/x"}}
	}), false)
	var invalid *InvalidSpecError
	g.Expect(errors.As(err, &invalid)).To(BeTrue(), "error %v", err)
	g.Expect(invalid.Field).To(Equal("spec.volumeMounts"))
}

// TestBuildersAreDeterministic guards the steady state: the same MyApp must always give the
// same intent, or every resync would change the children.
func TestBuildersAreDeterministic(t *testing.T) {
	g := NewWithT(t)
	app := newApp(func(a *examplev1.MyApp) {
		a.Spec.Env = []examplev1.EnvVar{{Name: "A", Value: ptr("1")}, {Name: "B", Value: ptr("2")}}
		a.Spec.Resources = &examplev1.ResourceRequirements{Limits: map[corev1.ResourceName]examplev1.Quantity{"cpu": "1", "memory": "1Gi"}}
		a.Spec.AutoScaling = &examplev1.AutoScalingSpec{Enabled: true, MaxReplicas: ptr(int32(3))}
	})
	first, err := Deployment(app, false)
	g.Expect(err).NotTo(HaveOccurred())
	for range 20 {
		again, err := Deployment(app, false)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(again).To(Equal(first))
		g.Expect(Service(app, false)).To(Equal(Service(app, false)))
		b1, err1 := PodDisruptionBudget(app, false)
		b2, err2 := PodDisruptionBudget(app, false)
		g.Expect(err1).NotTo(HaveOccurred())
		g.Expect(err2).NotTo(HaveOccurred())
		g.Expect(b1).To(Equal(b2))
		g.Expect(HorizontalPodAutoscaler(app)).To(Equal(HorizontalPodAutoscaler(app)))
	}
}

func BenchmarkDeployment(b *testing.B) {
	app := newApp(func(a *examplev1.MyApp) {
		a.Spec.Env = []examplev1.EnvVar{{Name: "A", Value: ptr("1")}, {Name: "B", Value: ptr("2")}}
		a.Spec.Resources = &examplev1.ResourceRequirements{
			Limits:   map[corev1.ResourceName]examplev1.Quantity{"cpu": "1", "memory": "1Gi"},
			Requests: map[corev1.ResourceName]examplev1.Quantity{"cpu": "100m", "memory": "128Mi"},
		}
	})
	for b.Loop() {
		if _, err := Deployment(app, false); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDeploymentRollingUpdateOutOfRange: a maxSurge or maxUnavailable that the Go type
// cannot hold, stored before admission bounded it, decodes and is reported as an invalid
// spec naming the field, never sent as a Deployment the API server refuses.
func TestDeploymentRollingUpdateOutOfRange(t *testing.T) {
	cases := map[string]struct {
		rollingUpdate string
		field         string
	}{
		"surge past int32":              {`{"maxSurge":2147483648}`, "spec.rollingUpdate.maxSurge"},
		"surge far past int64":          {`{"maxSurge":100000000000000000000}`, "spec.rollingUpdate.maxSurge"},
		"surge a fraction":              {`{"maxSurge":1.5}`, "spec.rollingUpdate.maxSurge"},
		"surge percentage past int32":   {`{"maxSurge":"2147483648%"}`, "spec.rollingUpdate.maxSurge"},
		"unavailable past int32":        {`{"maxUnavailable":2147483648}`, "spec.rollingUpdate.maxUnavailable"},
		"unavailable negative":          {`{"maxUnavailable":-1}`, "spec.rollingUpdate.maxUnavailable"},
		"unavailable above 100 percent": {`{"maxUnavailable":"101%"}`, "spec.rollingUpdate.maxUnavailable"},
		"unavailable not a percentage":  {`{"maxUnavailable":"half"}`, "spec.rollingUpdate.maxUnavailable"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			app := newApp(nil)
			g.Expect(json.Unmarshal([]byte(`{"image":"nginx","rollingUpdate":`+tc.rollingUpdate+`}`), &app.Spec)).To(Succeed())
			_, err := Deployment(app, false)
			var invalid *InvalidSpecError
			g.Expect(errors.As(err, &invalid)).To(BeTrue(), "error %v", err)
			g.Expect(invalid.Field).To(Equal(tc.field))
		})
	}
	g := NewWithT(t)
	app := newApp(nil)
	g.Expect(json.Unmarshal([]byte(`{"image":"nginx","rollingUpdate":{"maxSurge":2147483647,"maxUnavailable":"100%"}}`), &app.Spec)).To(Succeed())
	d, err := Deployment(app, false)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(*d.Spec.Strategy.RollingUpdate.MaxSurge).To(Equal(intstr.FromInt32(2147483647)))
}
