package deploy

import (
	"context"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// TestManagerPassesRestrictedPodSecurity creates the manager's pod, as config/default's
// Deployment would, in a namespace that enforces the restricted Pod Security Standard on a
// real API server (envtest), as a server-side dry run. Its admission plugin is the judge, not
// a copy of its rules. A pod asking for root in the same namespace must be refused, or the
// namespace did not enforce anything.
func TestManagerPassesRestrictedPodSecurity(t *testing.T) {
	d := buildDefault(t).deployment
	_, k8s := startAPIServer(t)
	ctx := context.Background()

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: d.Namespace, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce":         "restricted",
		"pod-security.kubernetes.io/enforce-version": "latest",
	}}}
	if err := k8s.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: d.Namespace, Name: d.Spec.Template.Spec.ServiceAccountName}}
	if err := k8s.Create(ctx, sa); err != nil {
		t.Fatal(err)
	}

	podFrom := func(name string, spec corev1.PodSpec) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: d.Namespace, Name: name, Labels: d.Spec.Template.Labels},
			Spec:       spec,
		}
	}
	if err := k8s.Create(ctx, podFrom("manager", *d.Spec.Template.Spec.DeepCopy()), client.DryRunAll); err != nil {
		t.Errorf("the manager's pod is refused in a namespace enforcing the restricted Pod Security Standard: %v", err)
	}

	root := d.Spec.Template.Spec.DeepCopy()
	root.SecurityContext.RunAsNonRoot = nil
	root.Containers[0].SecurityContext.AllowPrivilegeEscalation = nil
	err := k8s.Create(ctx, podFrom("as-root", *root), client.DryRunAll)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "violates PodSecurity") {
		t.Errorf("a pod without runAsNonRoot and allowPrivilegeEscalation: false was not refused by Pod Security: %v", err)
	}
}

// startAPIServer starts a kube-apiserver and etcd (envtest) for the test, stopped when it
// ends, and returns its admin config and a client.
func startAPIServer(t *testing.T) (*rest.Config, client.Client) {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run `make test`, which builds kube-apiserver and etcd")
	}
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	k8s, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return cfg, k8s
}
