package status

import (
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// TestPodProblems: the containers that wait for something the user must fix make the MyApp
// Stalled, with a reason and a message that say what is wrong and what to change, and that
// hold while the problem does: built from the reason, the container and its image, never
// from the kubelet's or the API server's text (no pod names, no registry answers, no quota
// figures).
func TestPodProblems(t *testing.T) {
	// A Deployment whose pods exist but are not ready: what the deployment controller reports
	// for pods that never start.
	starting := func() *appsv1.Deployment { return deployment(1, 1, 2, 2, 2, 0, 0, false) }
	cases := map[string]struct {
		waiting      []ContainerWaiting
		deployment   *appsv1.Deployment
		wantReason   string // "" means not Stalled
		wantContains []string
	}{
		"missing Secret": {
			waiting:      []ContainerWaiting{{Pod: "web-a", Container: "app", Reason: "CreateContainerConfigError", Message: `secret "db" not found`}},
			wantReason:   examplev1.ReasonCreateContainerConfigError,
			wantContains: []string{"CreateContainerConfigError", "container app", "Create the Secret or ConfigMap", "spec.env or spec.envFrom"},
		},
		"missing key of a ConfigMap": {
			waiting: []ContainerWaiting{{Pod: "web-a", Container: "app", Reason: "CreateContainerConfigError",
				Message: "couldn't find key color in ConfigMap ns/ui"}},
			wantReason:   examplev1.ReasonCreateContainerConfigError,
			wantContains: []string{"Create the Secret or ConfigMap (with the key)", "spec.env or spec.envFrom"},
		},
		"image runs as root under runAsNonRoot, pod name dropped": {
			waiting: []ContainerWaiting{{Pod: "web-a", Container: "app", Reason: "CreateContainerConfigError",
				Message: `container has runAsNonRoot and image will run as root (pod: "web-a_ns(0c3f)", container: app)`}},
			wantReason:   examplev1.ReasonCreateContainerConfigError,
			wantContains: []string{"image that runs as a non-root user", "spec.securityContext.runAsUser"},
		},
		"image pull failing": {
			waiting:      []ContainerWaiting{{Pod: "web-a", Container: "app", Reason: "ErrImagePull", Message: "rpc error: not found"}},
			wantReason:   examplev1.ReasonImagePullBackOff,
			wantContains: []string{`cannot pull image "registry.example/web:nope"`, "spec.imagePullSecrets"},
		},
		"invalid image name": {
			waiting:      []ContainerWaiting{{Pod: "web-a", Container: "app", Reason: "InvalidImageName", Message: "couldn't parse"}},
			wantReason:   examplev1.ReasonInvalidImageName,
			wantContains: []string{"cannot parse image", "spec.image"},
		},
		"the most specific problem wins, whatever the pods' order": {
			waiting: []ContainerWaiting{
				{Pod: "web-a", Container: "app", Reason: "ImagePullBackOff", Message: "back-off"},
				{Pod: "web-b", Container: "app", Reason: "CreateContainerConfigError", Message: `configmap "ui" not found`},
			},
			wantReason:   examplev1.ReasonCreateContainerConfigError,
			wantContains: []string{"Create the Secret or ConfigMap"},
		},
		"a crash loop is not Stalled (the Deployment reports it)": {
			waiting: []ContainerWaiting{{Pod: "web-a", Container: "app", Reason: "CrashLoopBackOff", Message: "back-off 10s"}},
		},
		"pods still being created are not a problem": {
			waiting: []ContainerWaiting{{Pod: "web-a", Container: "app", Reason: "ContainerCreating"}},
		},
		"quota: what to change": {
			deployment: withCondition(deployment(1, 1, 2, 0, 0, 0, 0, false), appsv1.DeploymentCondition{
				Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate",
				Message: `pods "web-5d4b8-x" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=1, limited: pods=1`}),
			wantReason:   examplev1.ReasonReplicaFailure,
			wantContains: []string{"A ResourceQuota of the namespace forbids the pods", "spec.replicas"},
		},
		"quota that needs requests: what to change": {
			deployment: withCondition(deployment(1, 1, 2, 0, 0, 0, 0, false), appsv1.DeploymentCondition{
				Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate",
				Message: `pods "web-5d4b8-x" is forbidden: failed quota: compute: must specify limits.cpu for: app`}),
			wantReason:   examplev1.ReasonReplicaFailure,
			wantContains: []string{"ResourceQuota", "spec.resources"},
		},
		"LimitRange: what to change": {
			deployment: withCondition(deployment(1, 1, 2, 0, 0, 0, 0, false), appsv1.DeploymentCondition{
				Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate",
				Message: `pods "web-5d4b8-x" is forbidden: maximum memory usage per Container is 64Mi, but limit is 128Mi`}),
			wantReason:   examplev1.ReasonReplicaFailure,
			wantContains: []string{"A LimitRange of the namespace rejects the pods", "spec.resources"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			app := &examplev1.MyApp{Spec: examplev1.MyAppSpec{Image: "registry.example/web:nope"}}
			app.Name, app.Generation = "web", 1
			d := tc.deployment
			if d == nil {
				d = starting()
			}
			s := Compute(app, Observed{Deployment: d, Pods: tc.waiting}, t0)
			stalled := meta.FindStatusCondition(s.Conditions, examplev1.ConditionStalled)
			g.Expect(stalled).NotTo(BeNil())
			if tc.wantReason == "" {
				g.Expect(stalled.Status).To(Equal(metav1.ConditionFalse), stalled.Message)
				return
			}
			g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(stalled.Reason).To(Equal(tc.wantReason))
			for _, want := range tc.wantContains {
				g.Expect(stalled.Message).To(ContainSubstring(want))
			}
			g.Expect(stalled.Message).NotTo(ContainSubstring("web-a"), "no pod name in the message")
			g.Expect(stalled.Message).NotTo(ContainSubstring("used:"), "no live quota usage in the message")
			for _, w := range tc.waiting {
				if w.Message != "" {
					g.Expect(stalled.Message).NotTo(ContainSubstring(w.Message), "no kubelet text in the message")
				}
			}
			for _, typ := range []string{examplev1.ConditionReady, examplev1.ConditionDegraded} {
				c := meta.FindStatusCondition(s.Conditions, typ)
				g.Expect(c.Reason).To(Equal(tc.wantReason), typ)
				g.Expect(c.Message).To(Equal(stalled.Message), typ)
			}
			g.Expect(meta.IsStatusConditionTrue(s.Conditions, examplev1.ConditionReady)).To(BeFalse())
		})
	}
}

// TestPodProblemMessageIsStable: the kubelet alternates ErrImagePull and ImagePullBackOff with
// different messages, and pods are replaced; the condition, and so the event, stays the same.
func TestPodProblemMessageIsStable(t *testing.T) {
	g := NewWithT(t)
	app := &examplev1.MyApp{Spec: examplev1.MyAppSpec{Image: "web:nope"}}
	app.Name = "web"
	d := deployment(1, 1, 1, 1, 1, 0, 0, false)
	first := Compute(app, Observed{Deployment: d, Pods: []ContainerWaiting{
		{Pod: "web-a", Container: "app", Reason: "ErrImagePull", Message: "rpc error: code = NotFound desc = request id 1"}}}, t0)
	app.Status = first
	again := Compute(app, Observed{Deployment: d, Pods: []ContainerWaiting{
		{Pod: "web-b", Container: "app", Reason: "ImagePullBackOff", Message: `Back-off pulling image "web:nope"`}}}, t1)
	g.Expect(again).To(Equal(first))
}

func TestUserMustFix(t *testing.T) {
	g := NewWithT(t)
	for _, r := range []string{"CreateContainerConfigError", "ErrImagePull", "ImagePullBackOff", "InvalidImageName"} {
		g.Expect(UserMustFix(r)).To(BeTrue(), r)
	}
	for _, r := range []string{"", "ContainerCreating", "PodInitializing", "CrashLoopBackOff", "CreateContainerError"} {
		g.Expect(UserMustFix(r)).To(BeFalse(), r)
	}
}

// TestConfigErrorNamesTheReferencesFromTheSpec: what a CreateContainerConfigError names comes
// from the MyApp's spec, not from the kubelet's message: the references of spec.env and
// spec.envFrom a pod cannot start without, each with its field, of the kind of object the
// kubelet names when it names one kind only.
func TestConfigErrorNamesTheReferencesFromTheSpec(t *testing.T) {
	env := []examplev1.EnvVar{
		{Name: "A", Value: ptrTo("x")},
		{Name: "PASSWORD", ValueFrom: &examplev1.EnvVarSource{SecretKeyRef: &examplev1.KeySelector{Name: "db", Key: "password"}}},
		{Name: "COLOR", ValueFrom: &examplev1.EnvVarSource{ConfigMapKeyRef: &examplev1.KeySelector{Name: "ui", Key: "color"}}},
	}
	envFrom := []examplev1.EnvFromSource{
		{SecretRef: &examplev1.EnvFromReference{Name: "tokens"}},
		{ConfigMapRef: &examplev1.EnvFromReference{Name: "flags", Optional: ptrTo(true)}},
		{ConfigMapRef: &examplev1.EnvFromReference{Name: "settings"}, Prefix: "APP_"},
	}
	many := make([]examplev1.EnvVar, 12)
	for i := range many {
		many[i] = examplev1.EnvVar{Name: fmt.Sprintf("V%d", i), ValueFrom: &examplev1.EnvVarSource{
			ConfigMapKeyRef: &examplev1.KeySelector{Name: fmt.Sprintf("cm-%d", i), Key: "k"}}}
	}
	cases := map[string]struct {
		env     []examplev1.EnvVar
		envFrom []examplev1.EnvFromSource
		kubelet string
		want    string
		wantNot []string
	}{
		"a Secret missing: the Secrets of env and envFrom": {
			env: env, envFrom: envFrom, kubelet: `secret "db" not found`,
			want:    "(Secret db key password (spec.env[1].valueFrom.secretKeyRef), Secret tokens (spec.envFrom[0].secretRef))",
			wantNot: []string{"ConfigMap ui", "settings"},
		},
		"a ConfigMap of envFrom missing: blamed on spec.envFrom, not only spec.env": {
			env: env, envFrom: envFrom, kubelet: `configmap "settings" not found`,
			want:    "(ConfigMap ui key color (spec.env[2].valueFrom.configMapKeyRef), ConfigMap settings (spec.envFrom[2].configMapRef))",
			wantNot: []string{"Secret db", "flags"},
		},
		"a key of a ConfigMap missing": {
			env: env, kubelet: "couldn't find key color in ConfigMap ns/ui",
			want: "(ConfigMap ui key color (spec.env[2].valueFrom.configMapKeyRef))",
		},
		"only envFrom": {
			envFrom: envFrom[:1], kubelet: `secret "tokens" not found`,
			want: "that spec.env or spec.envFrom refers to, in the MyApp's namespace, or change the reference (Secret tokens (spec.envFrom[0].secretRef))",
		},
		"a message naming both kinds: both kinds": {
			env: env, envFrom: envFrom, kubelet: `configmap "secret-settings" not found`,
			want: "(Secret db key password (spec.env[1].valueFrom.secretKeyRef), ConfigMap ui key color (spec.env[2].valueFrom.configMapKeyRef), " +
				"Secret tokens (spec.envFrom[0].secretRef), ConfigMap settings (spec.envFrom[2].configMapRef))",
		},
		"a message naming a kind the spec does not take from: every reference": {
			env: env[:2], kubelet: `configmap "ui" not found`,
			want: "(Secret db key password (spec.env[1].valueFrom.secretKeyRef))",
		},
		"many references: the first ones, and how many more": {
			env: many, kubelet: `configmap "cm-11" not found`,
			want:    "ConfigMap cm-7 key k (spec.env[7].valueFrom.configMapKeyRef), and 4 more)",
			wantNot: []string{"cm-8 "},
		},
		"another configuration problem: where to look": {
			env: env, envFrom: envFrom, kubelet: "some other configuration problem",
			want: "Check spec.env, spec.envFrom, spec.securityContext and spec.podSecurityContext",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			app := &examplev1.MyApp{Spec: examplev1.MyAppSpec{Image: "web:1", Env: tc.env, EnvFrom: tc.envFrom}}
			app.Name = "web"
			waiting := []ContainerWaiting{{Pod: "web-a", Container: "app", Reason: "CreateContainerConfigError", Message: tc.kubelet}}
			s := Compute(app, Observed{Deployment: deployment(1, 1, 1, 1, 1, 0, 0, false), Pods: waiting}, t0)
			stalled := meta.FindStatusCondition(s.Conditions, examplev1.ConditionStalled)
			g.Expect(stalled.Message).To(ContainSubstring(tc.want))
			for _, not := range tc.wantNot {
				g.Expect(stalled.Message).NotTo(ContainSubstring(not))
			}
		})
	}
}

// TestConfigErrorMessageIsStable: the same problem gives the same status, whatever the
// kubelet's words.
func TestConfigErrorMessageIsStable(t *testing.T) {
	g := NewWithT(t)
	app := &examplev1.MyApp{Spec: examplev1.MyAppSpec{Image: "web:1", Env: []examplev1.EnvVar{
		{Name: "PASSWORD", ValueFrom: &examplev1.EnvVarSource{SecretKeyRef: &examplev1.KeySelector{Name: "db", Key: "password"}}},
	}}}
	app.Name = "web"
	waiting := []ContainerWaiting{{Pod: "web-a", Container: "app", Reason: "CreateContainerConfigError", Message: `secret "db" not found`}}
	s := Compute(app, Observed{Deployment: deployment(1, 1, 1, 1, 1, 0, 0, false), Pods: waiting}, t0)
	waiting[0].Message = "a reworded message about a missing secret"
	g.Expect(Compute(app, Observed{Deployment: deployment(1, 1, 1, 1, 1, 0, 0, false), Pods: waiting}, t0).Conditions).
		To(Equal(s.Conditions), "the same status for the same problem, whatever the kubelet's words")
}

func ptrTo[T any](v T) *T { return &v }
