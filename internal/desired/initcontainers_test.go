package desired

import (
	"encoding/json"
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

func TestInitContainers(t *testing.T) {
	always := examplev1.ContainerRestartPolicyAlways
	cases := map[string]struct {
		inits []examplev1.InitContainer
		// check reads the pod template's init containers; wantField, when set, is the field of
		// the InvalidSpecError expected instead.
		check     func(g Gomega, inits []corev1.Container)
		wantField string
	}{
		"none: no initContainers in the template, so that a MyApp without them keeps its pods": {
			check: func(g Gomega, inits []corev1.Container) { g.Expect(inits).To(BeNil()) },
		},
		"an init container and a sidecar, in the MyApp's order, with the restricted defaults": {
			inits: []examplev1.InitContainer{
				{Name: "migrate", Image: "migrate:1", Command: []string{"/migrate"}, Args: []string{"up"},
					Env:          []examplev1.EnvVar{{Name: "MODE", Value: ptr("up")}},
					EnvFrom:      []examplev1.EnvFromSource{{SecretRef: &examplev1.EnvFromReference{Name: "db"}}},
					VolumeMounts: []examplev1.VolumeMount{{Name: "data", MountPath: "/data"}},
					Resources:    &examplev1.ResourceRequirements{Requests: map[corev1.ResourceName]examplev1.Quantity{"cpu": "100m"}}},
				{Name: "proxy", Image: "envoy:1", RestartPolicy: &always,
					ReadinessProbe: &examplev1.SidecarProbe{HTTPGet: &examplev1.SidecarHTTPGet{SidecarPort: examplev1.SidecarPort{Port: 9901}, Path: "/ready"}},
					LivenessProbe:  &examplev1.SidecarProbe{TCPSocket: &examplev1.SidecarPort{Port: 9901}, PeriodSeconds: ptr(int32(20))},
					StartupProbe:   &examplev1.SidecarProbe{GRPC: &examplev1.SidecarGRPC{SidecarPort: examplev1.SidecarPort{Port: 9000}}}},
			},
			check: func(g Gomega, inits []corev1.Container) {
				g.Expect(inits).To(HaveLen(2))
				m, p := inits[0], inits[1]
				g.Expect(m.Name).To(Equal("migrate"))
				g.Expect(m.RestartPolicy).To(BeNil())
				g.Expect(m.Command).To(Equal([]string{"/migrate"}))
				g.Expect(m.Args).To(Equal([]string{"up"}))
				g.Expect(m.Env).To(Equal([]corev1.EnvVar{{Name: "MODE", Value: "up"}}))
				g.Expect(m.EnvFrom[0].SecretRef.Name).To(Equal("db"))
				g.Expect(m.VolumeMounts).To(Equal([]corev1.VolumeMount{{Name: "data", MountPath: "/data"}}))
				g.Expect(m.Resources.Requests.Cpu().String()).To(Equal("100m"))
				g.Expect(p.RestartPolicy).To(HaveValue(Equal(corev1.ContainerRestartPolicyAlways)))
				g.Expect(p.ReadinessProbe.HTTPGet.Port).To(Equal(intstr.FromInt32(9901)))
				g.Expect(p.ReadinessProbe.HTTPGet.Path).To(Equal("/ready"))
				g.Expect(p.LivenessProbe.TCPSocket.Port).To(Equal(intstr.FromInt32(9901)))
				g.Expect(p.LivenessProbe.PeriodSeconds).To(Equal(int32(20)))
				g.Expect(p.StartupProbe.GRPC.Port).To(Equal(int32(9000)))
				for _, c := range inits {
					g.Expect(c.SecurityContext.AllowPrivilegeEscalation).To(HaveValue(BeFalse()), c.Name)
					g.Expect(c.SecurityContext.Capabilities.Drop).To(Equal([]corev1.Capability{"ALL"}), c.Name)
				}
			},
		},
		"probes of an init container that runs to completion are left out, as Kubernetes refuses them": {
			inits: []examplev1.InitContainer{{Name: "once", Image: "busybox:1",
				ReadinessProbe: &examplev1.SidecarProbe{TCPSocket: &examplev1.SidecarPort{Port: 80}}}},
			check: func(g Gomega, inits []corev1.Container) { g.Expect(inits[0].ReadinessProbe).To(BeNil()) },
		},
		"a mount of no volume names the init container's field": {
			inits:     []examplev1.InitContainer{{Name: "a", Image: "busybox:1"}, {Name: "b", Image: "busybox:1", VolumeMounts: []examplev1.VolumeMount{{Name: "nope", MountPath: "/x"}}}},
			wantField: "spec.initContainers[1].volumeMounts",
		},
		"the application's container's name": {
			inits:     []examplev1.InitContainer{{Name: ContainerName, Image: "busybox:1"}},
			wantField: "spec.initContainers[0].name",
		},
		"a request above its limit names the init container's resources": {
			inits: []examplev1.InitContainer{{Name: "a", Image: "busybox:1", Resources: &examplev1.ResourceRequirements{
				Limits: map[corev1.ResourceName]examplev1.Quantity{"cpu": "1"}, Requests: map[corev1.ResourceName]examplev1.Quantity{"cpu": "2"}}}},
			wantField: "spec.initContainers[0].resources.requests.cpu",
		},
		"a divisor that is no quantity names the init container's variable": {
			inits: []examplev1.InitContainer{{Name: "a", Image: "busybox:1", Env: []examplev1.EnvVar{{Name: "CPU", ValueFrom: &examplev1.EnvVarSource{
				ResourceFieldRef: &examplev1.ResourceFieldSelector{Resource: "limits.cpu", Divisor: ptr(examplev1.Quantity("x"))}}}}}},
			wantField: "spec.initContainers[0].env[0].valueFrom.resourceFieldRef.divisor",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			app := &examplev1.MyApp{Spec: examplev1.MyAppSpec{Image: "web:1", InitContainers: tc.inits,
				Volumes: []examplev1.Volume{{Name: "data", EmptyDir: &examplev1.EmptyDirVolumeSource{}}}}}
			app.Name, app.Namespace = "web", "shop"
			tmpl, err := PodTemplate(app)
			if tc.wantField != "" {
				var invalid *InvalidSpecError
				g.Expect(errors.As(err, &invalid)).To(BeTrue(), "%v", err)
				g.Expect(invalid.Field).To(Equal(tc.wantField))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			var spec corev1.PodTemplateSpec
			g.Expect(convertBack(tmpl, &spec)).To(Succeed())
			tc.check(g, spec.Spec.InitContainers)
		})
	}
}

// convertBack reads an apply configuration into the core type, through their shared JSON.
func convertBack(in, out any) error {
	raw, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}
