package status

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// TestInitContainerProblems: a problem of an init container or a sidecar is reported in the
// application's words, naming the container and the fields of the spec that hold it.
func TestInitContainerProblems(t *testing.T) {
	always := examplev1.ContainerRestartPolicyAlways
	app := &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: examplev1.MyAppSpec{Image: "web:1",
		Env: []examplev1.EnvVar{{Name: "APP", ValueFrom: &examplev1.EnvVarSource{SecretKeyRef: &examplev1.KeySelector{Name: "app-secret", Key: "k"}}}},
		InitContainers: []examplev1.InitContainer{
			{Name: "migrate", Image: "migrate:nope",
				Env: []examplev1.EnvVar{{Name: "DB", ValueFrom: &examplev1.EnvVarSource{SecretKeyRef: &examplev1.KeySelector{Name: "db", Key: "url"}}}}},
			{Name: "proxy", Image: "envoy:1", RestartPolicy: &always,
				EnvFrom: []examplev1.EnvFromSource{{ConfigMapRef: &examplev1.EnvFromReference{Name: "proxy-config"}}}},
		}}}
	cases := map[string]struct {
		w          ContainerWaiting
		want, not  []string
		wantReason string
	}{
		"an init container's image": {
			w:          ContainerWaiting{Pod: "web-a", Container: "migrate", Reason: "ImagePullBackOff"},
			wantReason: examplev1.ReasonImagePullBackOff,
			want:       []string{`cannot pull image "migrate:nope" of init container migrate`, "Check spec.initContainers[0].image"},
			not:        []string{"Check spec.image"},
		},
		"a sidecar's image name, from the pod": {
			w:          ContainerWaiting{Pod: "web-a", Container: "proxy", Image: "envoy:::", Reason: "InvalidImageName"},
			wantReason: examplev1.ReasonInvalidImageName,
			want:       []string{`cannot parse image "envoy:::" of sidecar proxy`, "Fix spec.initContainers[1].image"},
		},
		"an init container's Secret: its own references, not the application's": {
			w:          ContainerWaiting{Pod: "web-a", Container: "migrate", Reason: "CreateContainerConfigError", Message: `secret "db" not found`},
			wantReason: examplev1.ReasonCreateContainerConfigError,
			want: []string{"cannot create init container migrate", "spec.initContainers[0].env or spec.initContainers[0].envFrom",
				"Secret db key url (spec.initContainers[0].env[0].valueFrom.secretKeyRef)"},
			not: []string{"app-secret"},
		},
		"a sidecar's ConfigMap": {
			w:          ContainerWaiting{Pod: "web-a", Container: "proxy", Reason: "CreateContainerConfigError", Message: `configmap "proxy-config" not found`},
			wantReason: examplev1.ReasonCreateContainerConfigError,
			want:       []string{"cannot create sidecar proxy", "ConfigMap proxy-config (spec.initContainers[1].envFrom[0].configMapRef)"},
		},
		"an init container under runAsNonRoot: the pod's security context, which it runs under": {
			w:          ContainerWaiting{Pod: "web-a", Container: "migrate", Reason: "CreateContainerConfigError", Message: "container has runAsNonRoot and image will run as root"},
			wantReason: examplev1.ReasonCreateContainerConfigError,
			want:       []string{"image for spec.initContainers[0] that runs as a non-root user", "spec.podSecurityContext.runAsUser"},
			not:        []string{"spec.securityContext"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			s := Compute(app, Observed{Deployment: deployment(1, 1, 1, 1, 1, 0, 0, false), Pods: []ContainerWaiting{tc.w}}, t0)
			stalled := meta.FindStatusCondition(s.Conditions, examplev1.ConditionStalled)
			g.Expect(stalled).NotTo(BeNil())
			g.Expect(stalled.Reason).To(Equal(tc.wantReason))
			for _, w := range tc.want {
				g.Expect(stalled.Message).To(ContainSubstring(w))
			}
			for _, n := range tc.not {
				g.Expect(stalled.Message).NotTo(ContainSubstring(n))
			}
		})
	}

	t.Run("a sidecar's crash loop, in the rollback's words: which container, and how to read its logs", func(t *testing.T) {
		g := NewWithT(t)
		msg := RolloutProblemMessage(app, ContainerWaiting{Container: "proxy", Image: "envoy:2", Reason: "CrashLoopBackOff"})
		g.Expect(msg).To(ContainSubstring(`sidecar proxy of image "envoy:2"`))
		g.Expect(msg).To(ContainSubstring("kubectl logs -l myapp.example.com/name=web -c proxy --previous"))
	})
}
